# toolchain.relay: the ContextRelay extension (boxing large outputs, unboxing references
# in arguments) and its five reader tools, each part in its own module: references and
# their parsing, the tools' arguments, the text work (lines, grep), the prompt guide, the
# events it tells observers (OutputBoxed, ReferencesResolved).
# It imports the toolchain core (`toolchain`'s public names, a few private core helpers)
# and `toolchain.stores`, whose private record of results it shares with the variables;
# never another extension, never agents.
"""``ContextRelay``: large tool outputs travel as ``internal://`` references, not text.

Tool calls are RPC the client runs, so the client chooses what the model sees of a
result. Over a threshold (characters or o200k tokens, globally or per tool) an output
is stored and the model sees a short reference instead: ``internal://<id>`` (mode
``opaque``) or ``{"type":"resource_link","uri":"internal://<id>"}`` (mode ``json``),
with an optional head and tail preview. A reference passed back in any argument,
however nested, is unboxed before the tool runs: tools only ever see real values.
When the model must look inside, reader tools slice, count, read lines of or grep the
stored value (``internal_resource_read`` is the last resort). A boxed output is also
a variable when ``ToolVariables`` is installed: ``$name`` and the reference name one
value (one entry in the store). References are scoped to the run: another run's
reference is unknown, unless the run continues its conversation (``share_scope``, or
the ``extension_state`` of ``ToolVariables``, which carries the conversation's scope).

>>> from formats import XMLFormat
>>> from toolchain import ExecutionContext, JSONToolChain, tool
>>> @tool
... def transcribe(video_id: str) -> str:
...     '''Transcribe a video.'''
...     return "word " * 5000
>>> @tool
... def count_words(text: str) -> int:
...     '''Count the words of a text.'''
...     return len(text.split())
>>> relay = ContextRelay(threshold=1000)
>>> chain = JSONToolChain(extensions=[relay]).register_tool(transcribe)
>>> chain = chain.register_tool(count_words)
>>> ctx = ExecutionContext()
>>> call = '{"tool": "transcribe", "args": {"video_id": "123"}}'
>>> shown = chain.execute_sync(ctx, call, XMLFormat()).observations[0].text
>>> shown.startswith("internal://")
True
>>> call = f'{{"tool": "count_words", "args": {{"text": "{shown}"}}}}'
>>> chain.execute_sync(ctx, call, XMLFormat()).raw.output(0, int)
5000
"""

from toolchain.relay._context_relay import ContextRelay
from toolchain.relay._events import OutputBoxed, ReferencesResolved
from toolchain.relay._guide import relay_guide
from toolchain.relay._readers import reader_tools
from toolchain.relay._references import ReferenceReader, UnknownReference
from toolchain.stores._entries import scope_of, share_scope

__all__ = [
    "ContextRelay",
    "OutputBoxed",
    "ReferenceReader",
    "ReferencesResolved",
    "UnknownReference",
    "reader_tools",
    "relay_guide",
    "scope_of",
    "share_scope",
]
