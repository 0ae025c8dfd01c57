"""Tool calls written as text in the native formats of local models.

A model served without a tool parser writes its call format as plain text. ``parse``
reads one output, ``DialectStream`` reads one as it streams, and ``DialectToolChain``
runs what they read like any other chain.

>>> from toolchain.dialects import parse
>>> result = parse("<think>Paris first.</think>[TOOL_CALLS]get_weather{\\"city\\": \\"Paris\\"}")
>>> result.calls[0].name, result.reasoning, result.format
('get_weather', 'Paris first.', 'mistral')

Families (``FAMILIES``): ``hermes`` (``<tool_call>`` with JSON, and llama.cpp's drifted
wrappers), ``qwen3_coder`` (``<function=…><parameter=…>``, ``<function=NAME/>``),
``seed_oss`` (``<seed:tool_call>``), ``glm`` (``<arg_key>``/``<arg_value>``, LongCat,
``name k=v``, and ``<tool_call>NAME`` then a JSON object), ``mistral`` (``[TOOL_CALLS]``
lists, v11 ``name{…}``, ``[ARGS]``, ``[CALL_ID]``), ``json`` (bare objects and lists, in
fences or ad-hoc tags), ``pythonic`` (``[f(a=1)]``, Llama 4 ``<|python_start|>``),
``lfm2`` (``<|tool_call_start|>[…]``), ``olmo3`` (``<function_calls>`` of Python-style
lines), ``llama3`` (``<|python_tag|>``), ``deepseek``, ``dsml`` (DeepSeek V3.2
``<|DSML|function_calls>``, bars fullwidth), ``kimi_k2``, ``harmony``, ``granite``,
``internlm2``, ``command_r7b`` (Command R7B and A), ``gigachat``, ``firefunction``,
``functionary`` (``>>>name``), ``gemma`` (Gemma 4 ``<|tool_call>call:name{…}``,
FunctionGemma ``<start_function_call>``, ``[TOOL_REQUEST]``), ``invoke_xml``
(Claude-style, MiniMax-M2 and plain DSML ``<invoke>``), ``generic_xml``
(``<tool><name>``), ``langchain_xml`` (``<tool>``/``<tool_input>``/``<final_answer>``)
and ``react`` (``Thought:`` / ``Action:`` / ``Action Input:`` / ``Final Answer:``).
Thinking blocks (``<think>``, ``<seed:think>``, Gemma 4's ``<|channel>``, Command's
``<|START_THINKING|>``) and chat-template tokens are always handled.

Where the peers that read these formats disagree, the choices are:

- thinking (``<think>``, harmony ``analysis``, Seed-OSS budget notes) goes to
  ``reasoning``, not content, and a call drafted inside it is not made
  (``DialectPolicy.reasoning="inline"`` keeps it in content, as a server without a
  reasoning parser does);
- a call in explicit markup naming a tool not offered is kept, so a chain can tell the
  model the tool does not exist; unmarked text naming one stays text
  (``DialectPolicy.unknown_tools``);
- unmarked JSON is a call only with a one-token name and an arguments key, and a run of
  adjacent JSON values holding any non-call is data, calls and all;
- format markup never stays in content: a block left open at the end is read when its
  body is complete on its own (JSON is; a key/value list is not), and otherwise, like a
  closed block that holds no readable call, it is removed from the content and reported
  in ``error`` (an open ``<tool_call>`` or ``<invoke>`` followed by prose stays text);
  tokens a model echoes from the prompt (DeepSeek's tool outputs, ``<|observation|>``)
  are removed and the text between them kept;
- prose between calls stays content (segments stripped, joined by newlines);
- where the output is ambiguous (a ReAct action followed by a final answer, two Mistral
  ``[TOOL_CALLS]`` lists, several LangChain ``<tool>`` blocks) no call is read and
  ``error`` says why; a single malformed call (a Kimi id without ``:index``, a Python
  value that cannot be JSON, a DeepSeek call with no end token, a Command action that is
  not JSON) is dropped alone, and a call whose arguments cannot be read is rejected with
  the reason (``DialectParse.rejected``), never read as ``{}``;
- text arguments (XML parameters, ``k=v``, DSML ``string="true"``) are typed by the
  tool's schema, the types it allows tried in its order with ``string`` last; without
  one Qwen3-Coder, Seed-OSS and GLM values stay text, XML elements read numbers and
  booleans; values written in a syntax that carries their type (JSON, DSML
  ``string="false"``, Python literals) keep it, except that a Gemma or FunctionGemma
  string (the only way those write text) is read as the type the schema declares
  where the schema takes no string;
- a single opaque input (a ReAct ``Action Input`` line, string ``arguments``) goes to
  the tool's only (required) parameter, else to ``INPUT_KEY``.
- a number JSON cannot carry (``NaN``, an infinity, ``1e400``, digits other than
  ASCII) is never read as one: a Python-style or Gemma value refuses its call with the
  reason, and text typed by the schema stays text, which the chain refuses for a number
  parameter, as it refuses such a number from any reader.

Hostile text costs linear time, within a few times one regex pass over it
(``python -m benchmarks --only dialects``), and a streamed read equals a one-shot one.
"""

# What lives here: the reader (_scan, _engine, _assemble, _stream), one module per family
# of formats, what a read returns (_result) and DialectToolChain (_chain), the chain core
# with a syntax that reads these formats. It imports the toolchain core's modules, never
# agents and no other extension.

from toolchain.dialects._catalog import INPUT_KEY, ToolSpec
from toolchain.dialects._chain import DialectToolChain
from toolchain.dialects._registry import FAMILIES
from toolchain.dialects._result import DialectParse, DialectPolicy
from toolchain.dialects._stream import DialectStream, parse

__all__ = [
    "FAMILIES",
    "INPUT_KEY",
    "DialectParse",
    "DialectPolicy",
    "DialectStream",
    "DialectToolChain",
    "ToolSpec",
    "parse",
]
