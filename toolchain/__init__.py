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
"""

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
from toolchain.composite import CompositeTool
from toolchain.dialects import DialectParse, DialectPolicy, DialectStream, DialectToolChain

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
    "to_yaml",
    "tool",
    "unfence",
]
