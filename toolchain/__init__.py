"""Typed tools, and the tool chains that parse, run and format their calls.

>>> from formats import XMLFormat
>>> from toolchain import ExecutionContext, JSONToolChain, tool
>>> @tool
... def greet(name: str) -> str:
...     '''Greet someone.'''
...     return f"Hello, {name}!"
>>> chain = JSONToolChain().register_tool(greet)
>>> call = '{"tool": "greet", "args": {"name": "Ada"}}'
>>> result = chain.execute_sync(ExecutionContext(), call, XMLFormat())
>>> result.raw.results[0].output
'Hello, Ada!'
>>> result.raw.output(0, str).upper()
'HELLO, ADA!'

A chain shows each output in its own syntax, or as its ``observations`` option says:
``"json"``, ``"yaml"``, ``"toon"`` (a list of records as one table) or ``"auto"`` (the
fewest o200k tokens of the three, per output):

>>> @tool
... def users() -> list[dict[str, object]]:
...     '''List the users.'''
...     return [{"id": 1, "name": "Ada"}, {"id": 2, "name": "Bob"}]
>>> toon = JSONToolChain(observations="toon").register_tool(users)
>>> print(toon.execute_sync(ExecutionContext(), '{"tool": "users"}', XMLFormat()).text)
<observation>
<users>
[2]{id,name}:
  1,Ada
  2,Bob
</users>
</observation>
"""

# The toolchain core lives at this root: tools, their inputs and outputs, results, the
# context with its hooks and events, the extension seam, the chains and their stages
# (read: _chain's CallSyntax; plan and check: _plan; run: _invoke, _schedule; observe:
# _observe; wired by _pipeline). It imports `formats` only, never `agents`, and no
# extension package. The extensions are packages beside it (variables, relay, composite,
# discovery, dialects, mcp, stores), each importing the core and none importing another
# but stores; `CompositeTool` and the dialect chain load on first use (PEP 562), so
# `import toolchain` stays light.

import importlib
from typing import TYPE_CHECKING

from toolchain._calls import load_json, unfence
from toolchain._chain import ToolChain
from toolchain._content import (
    AudioContent,
    BinaryContent,
    ContentPart,
    ImageContent,
    MediaContent,
    TextContent,
)
from toolchain._context import Cancelled, ExecutionContext, Limits, StateBag, StateKey, Stats
from toolchain._eager import eager_task, settle
from toolchain._encodings import ObservationEncoding, to_toon
from toolchain._errors import (
    DuplicateToolError,
    ToolCallParseError,
    ToolDefinitionError,
    ToolError,
    ToolInputTypeError,
    describe_exception,
)
from toolchain._event_bus import EventBus
from toolchain._events import AfterToolCall, BeforeToolCall, ToolCallParseFailed
from toolchain._extension import (
    Extension,
    TextFilter,
    install_extensions,
    installed_extensions,
    restore_state,
    saved_state,
)
from toolchain._hooks import Hooks, ToolCallRefused, ToolHook
from toolchain._input import ArgumentsError, InputCodec
from toolchain._json_chain import JSONToolChain
from toolchain._output import OutputError, to_builtins, to_json, to_yaml
from toolchain._result import (
    CallObservation,
    ErrorKind,
    RawToolCallResult,
    RawToolChainResult,
    ToolCall,
    ToolCallError,
    ToolChainResult,
    ToolResult,
)
from toolchain._runner import run_sync
from toolchain._tool import Tool, tool
from toolchain._yaml_calls import load_yaml
from toolchain._yaml_chain import YAMLToolChain

if TYPE_CHECKING:
    from toolchain.composite import CompositeTool as CompositeTool
    from toolchain.dialects import DialectParse as DialectParse
    from toolchain.dialects import DialectPolicy as DialectPolicy
    from toolchain.dialects import DialectStream as DialectStream
    from toolchain.dialects import DialectToolChain as DialectToolChain

__all__ = [
    "AfterToolCall",
    "ArgumentsError",
    "AudioContent",
    "BeforeToolCall",
    "BinaryContent",
    "CallObservation",
    "Cancelled",
    "CompositeTool",
    "ContentPart",
    "DialectParse",
    "DialectPolicy",
    "DialectStream",
    "DialectToolChain",
    "DuplicateToolError",
    "ErrorKind",
    "EventBus",
    "ExecutionContext",
    "Extension",
    "Hooks",
    "ImageContent",
    "InputCodec",
    "JSONToolChain",
    "Limits",
    "MediaContent",
    "ObservationEncoding",
    "OutputError",
    "RawToolCallResult",
    "RawToolChainResult",
    "StateBag",
    "StateKey",
    "Stats",
    "TextContent",
    "TextFilter",
    "Tool",
    "ToolCall",
    "ToolCallError",
    "ToolCallParseError",
    "ToolCallParseFailed",
    "ToolCallRefused",
    "ToolChain",
    "ToolChainResult",
    "ToolDefinitionError",
    "ToolError",
    "ToolHook",
    "ToolInputTypeError",
    "ToolResult",
    "YAMLToolChain",
    "describe_exception",
    "eager_task",
    "install_extensions",
    "installed_extensions",
    "load_json",
    "load_yaml",
    "restore_state",
    "run_sync",
    "saved_state",
    "settle",
    "to_builtins",
    "to_json",
    "to_toon",
    "to_yaml",
    "tool",
    "unfence",
]

_LAZY = {
    "CompositeTool": "toolchain.composite",
    "DialectParse": "toolchain.dialects",
    "DialectPolicy": "toolchain.dialects",
    "DialectStream": "toolchain.dialects",
    "DialectToolChain": "toolchain.dialects",
}


def __getattr__(name: str) -> object:
    """``CompositeTool`` and the dialect names, imported on first use (PEP 562)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value: object = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
