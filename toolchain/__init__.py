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

# What lives here, one concept per module:
#   _tool          Tool[I, O] and @tool
#   _approvals     calls that wait for a person: the types, the check, the seal
#   _elicitation   a tool's server asking a person for input: ElicitationRequest, Elicitation
#   _input         arguments validated into a tool's input type; its JSON Schema; numbers
#   _result        what tools return and what a chain hands back (ToolResult, raw results)
#   _content       content parts: text, images, audio, binary
#   _context       ExecutionContext: the per-run state every call sees, limits, stats
#   _hooks         tool hooks, a run's ordered set of them, the one runner of every stage
#   _events        the events chains emit and the read-only bus that delivers them
#   _extension     Extension: the one seam a capability is added to runs through
#   _errors        ToolchainError (the root of every error here, under formats.GentError)
#                  and ModelFeedback (what user code raises for the model to read)
#   _concurrency   eager tasks, run_sync, the worker pool of sync tools, abandoned work
#   _observations  how outputs are written for the model: JSON, YAML, TOON, auto
#   _redact        credentials blanked before text leaves, and the redacting loggers
#   _tokens        offline o200k token counts
#   _oneline       text on one bounded line (names, previews, log lines)
#   _kept          what follows from a value alone (a schema's prompt form, an index),
#                  made once per process and bounded
#   _extras        an optional dependency that is missing, named with its extra
#   chain/         public: ToolChain, CallSyntax, ToolChainBase, ChainOptions; the stages
#   _syntax/       the JSON and YAML call syntaxes and their chains
#   runtime        public: what a loop or extension uses besides chains and tools
# It imports `formats` only, never `agents`, and no extension package. The extensions are
# packages beside it (variables, relay, composite, discovery, dialects, mcp, stores), each
# importing the core and none importing another but stores; `CompositeTool` and the
# dialect chain load on first use (PEP 562), so `import toolchain` stays light.

import importlib
import warnings
from typing import TYPE_CHECKING

from formats import GentError
from toolchain._approvals import Approval, ApprovalError, ApprovalRequest, Approver
from toolchain._content import (
    AudioContent,
    BinaryContent,
    ContentPart,
    ImageContent,
    MediaContent,
    TextContent,
)
from toolchain._context import Cancelled, ExecutionContext, Limits, StateBag, StateKey, Stats
from toolchain._elicitation import Elicitation, ElicitationRequest
from toolchain._errors import (
    DuplicateToolError,
    ModelFeedback,
    ToolCallParseError,
    ToolchainError,
    ToolchainLookupError,
    ToolchainStateError,
    ToolchainTypeError,
    ToolchainValueError,
    ToolDefinitionError,
    ToolError,
    ToolInputTypeError,
)
from toolchain._events import (
    ApprovalChecked,
    EventBus,
    ToolCallFinished,
    ToolCallParseFailed,
    ToolCallStarted,
)
from toolchain._extension import Extension, StepView, TextFilter, installed_extensions
from toolchain._hooks import Hooks, ToolCallRefused, ToolHook
from toolchain._input import ArgumentsError, InputCodec
from toolchain._observations import (
    ObservationEncoding,
    OutputError,
    to_builtins,
    to_json,
    to_toon,
    to_yaml,
)
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
from toolchain._syntax._json import JSONToolChain, load_json
from toolchain._syntax._yaml import YAMLToolChain, load_yaml
from toolchain._tool import Tool, tool
from toolchain.chain._base import ToolChain

if TYPE_CHECKING:
    from toolchain.composite import CompositeTool as CompositeTool
    from toolchain.dialects import DialectParse as DialectParse
    from toolchain.dialects import DialectPolicy as DialectPolicy
    from toolchain.dialects import DialectStream as DialectStream
    from toolchain.dialects import DialectToolChain as DialectToolChain

    # The old names, for one release: typed as what they are; at run time they warn.
    AfterToolCall = ToolCallFinished
    BeforeToolCall = ToolCallStarted

__all__ = [
    "Approval",
    "ApprovalChecked",
    "ApprovalError",
    "ApprovalRequest",
    "Approver",
    "ArgumentsError",
    "AudioContent",
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
    "Elicitation",
    "ElicitationRequest",
    "ErrorKind",
    "EventBus",
    "ExecutionContext",
    "Extension",
    "GentError",
    "Hooks",
    "ImageContent",
    "InputCodec",
    "JSONToolChain",
    "Limits",
    "MediaContent",
    "ModelFeedback",
    "ObservationEncoding",
    "OutputError",
    "RawToolCallResult",
    "RawToolChainResult",
    "StateBag",
    "StateKey",
    "Stats",
    "StepView",
    "TextContent",
    "TextFilter",
    "Tool",
    "ToolCall",
    "ToolCallError",
    "ToolCallFinished",
    "ToolCallParseError",
    "ToolCallParseFailed",
    "ToolCallRefused",
    "ToolCallStarted",
    "ToolChain",
    "ToolChainResult",
    "ToolDefinitionError",
    "ToolError",
    "ToolHook",
    "ToolInputTypeError",
    "ToolResult",
    "ToolchainError",
    "ToolchainLookupError",
    "ToolchainStateError",
    "ToolchainTypeError",
    "ToolchainValueError",
    "YAMLToolChain",
    "installed_extensions",
    "load_json",
    "load_yaml",
    "to_builtins",
    "to_json",
    "to_toon",
    "to_yaml",
    "tool",
]

_LAZY = {
    "CompositeTool": "toolchain.composite",
    "DialectParse": "toolchain.dialects",
    "DialectPolicy": "toolchain.dialects",
    "DialectStream": "toolchain.dialects",
    "DialectToolChain": "toolchain.dialects",
}


# Helpers for loops and extensions that this module exported until the regroup (issue 27):
# they live in `toolchain.runtime` now, and the old spelling works, with a warning, for one
# release.
_MOVED = frozenset(
    {
        "describe_exception",
        "eager_task",
        "install_extensions",
        "restore_state",
        "run_sync",
        "saved_state",
        "settle",
        "unfence",
    }
)


# The events of a call under the names they had until this release (issue 27: one event
# per fact; agents streamed a ToolCallStarted of their own beside BeforeToolCall).
_RENAMED = {"AfterToolCall": "ToolCallFinished", "BeforeToolCall": "ToolCallStarted"}


def __getattr__(name: str) -> object:
    """``CompositeTool`` and the dialect names, imported on first use (PEP 562)."""
    new = _RENAMED.get(name)
    if new is not None:
        warnings.warn(
            f"toolchain.{name} is toolchain.{new} now; the old name goes in the next release",
            DeprecationWarning,
            stacklevel=2,
        )
        return globals()[new]
    if name in _MOVED:
        warnings.warn(
            f"toolchain.{name} moved to toolchain.runtime.{name}; "
            "the old name goes in the next release",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module("toolchain.runtime"), name)
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value: object = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
