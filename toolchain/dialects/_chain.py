"""``DialectToolChain``: a tool chain that reads calls in native formats written as text."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, Unpack

import msgspec

from toolchain._errors import ToolCallParseError
from toolchain._observations import to_json, to_yaml
from toolchain._result import ToolCall
from toolchain._syntax._yaml import schema_yaml
from toolchain.chain._base import ChainOptions, ToolChainBase
from toolchain.chain._check import too_many
from toolchain.chain._stages import AnyTool
from toolchain.dialects._result import DialectParse, DialectPolicy
from toolchain.dialects._stream import DialectStream, parse

__all__ = ["DialectSyntax", "DialectToolChain"]

_DEFAULT = DialectPolicy()
_GUIDANCE = (
    "Call tools in the tool-call format you were trained on, for example:\n"
    "<tool_call>\n"
    '{"name": "tool_name", "arguments": {"param": "value"}}\n'
    "</tool_call>\n"
    "Several calls in one action run in parallel; their results come back in order."
)


class DialectSyntax:
    """Calls in whichever native format the model writes (``toolchain.dialects.parse``);
    outputs as JSON or YAML."""

    label = "the native tool-call format"

    def __init__(self, policy: DialectPolicy, output: Literal["json", "yaml"], guidance: str):
        self.policy = policy
        self.output: Literal["json", "yaml"] = output
        self._guidance = guidance

    def read(self, content: str, tools: Mapping[str, AnyTool], limit: int) -> list[ToolCall | str]:
        result = parse(content, tools.values(), policy=self.policy)
        items: list[ToolCall | str] = [*result.calls, *result.rejected]
        if not items:
            if not content.strip():
                return []
            if result.answer is not None:
                raise ToolCallParseError(
                    "this holds a final answer, not a tool call; write the answer as your "
                    "answer, or call a tool"
                )
            why = result.error or "no tool call was found"
            raise ToolCallParseError(f"{why}. {self._guidance}")
        if result.error is not None:
            items.append(result.error)  # the model learns what else it wrote was not read
        if len(items) > limit:
            items = [*items[:limit], too_many(len(items) - limit, limit)]
        return items

    def write(self, output: object) -> str:
        return to_yaml(output) if self.output == "yaml" else to_json(output)

    def schema_text(self, schema: Mapping[str, object]) -> str:
        if self.output == "yaml":
            return schema_yaml(schema)
        return msgspec.json.encode(schema).decode("utf-8")

    def guidance(self) -> str:
        return self._guidance


class DialectToolChain(ToolChainBase):
    """A tool chain for models that write their native tool-call format as text.

    It reads Hermes ``<tool_call>``, Mistral ``[TOOL_CALLS]``, Qwen3-Coder
    ``<function=…>``, Llama 3 JSON and ``<|python_tag|>``, Python-style lists,
    DeepSeek (V3.2's DSML too), Kimi-K2, GLM, MiniMax-M2, Seed-OSS, Olmo 3, LFM2,
    GigaChat, Granite, harmony, Command R7B and A, Functionary, InternLM2, Gemma 4,
    FunctionGemma, ReAct labels and bare JSON (see ``toolchain.dialects``), then
    validates, runs and formats the calls like ``JSONToolChain``: same hooks, errors and
    observations.
    Arguments written as text are typed by each tool's schema; a single input (a ReAct
    ``Action Input``) is passed to the tool's only parameter.

    Besides the usual chain options: ``policy`` (a ``DialectPolicy``), ``output``
    (``"json"`` or ``"yaml"``: how parameter schemas are shown, and outputs unless
    ``observations`` says otherwise) and ``guidance`` (the prompt text that tells the
    model how to call; the default shows the Hermes format). ``observations`` is the
    chains' usual option (``"json" | "yaml" | "toon" | "auto"``; default: ``output``).

    >>> from formats import XMLFormat
    >>> from toolchain import ExecutionContext, tool
    >>> @tool
    ... def add(a: int, b: int) -> int:
    ...     '''Add two integers.'''
    ...     return a + b
    >>> chain = DialectToolChain().register_tool(add)
    >>> qwen = "<function=add><parameter=a>2</parameter><parameter=b>3</parameter></function>"
    >>> print(chain.execute_sync(ExecutionContext(), qwen, XMLFormat()).text)
    <observation>
    <add>
    5
    </add>
    </observation>
    >>> chain.parse("[add(a=1, b=2)]").calls[0].args
    {'a': 1, 'b': 2}
    """

    def __init__(
        self,
        *,
        policy: DialectPolicy = _DEFAULT,
        output: Literal["json", "yaml"] = "json",
        guidance: str = _GUIDANCE,
        **options: Unpack[ChainOptions],
    ) -> None:
        self.dialect = DialectSyntax(policy, output, guidance)
        options.setdefault("observations", output)
        super().__init__(self.dialect, **options)

    @property
    def policy(self) -> DialectPolicy:
        return self.dialect.policy

    @property
    def output(self) -> Literal["json", "yaml"]:
        return self.dialect.output

    def parse(self, text: str) -> DialectParse:
        """Read ``text`` with this chain's tools and policy (nothing is run)."""
        return parse(text, self.registry.values(), policy=self.policy)

    def stream(self) -> DialectStream:
        """A streaming reader with this chain's tools and policy."""
        return DialectStream(self.registry.values(), policy=self.policy)
