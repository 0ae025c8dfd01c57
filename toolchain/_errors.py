"""Exceptions a program (not the model) may see from the toolchain."""

from __future__ import annotations

__all__ = [
    "DuplicateToolError",
    "ToolCallParseError",
    "ToolDefinitionError",
    "ToolError",
    "ToolInputTypeError",
    "describe_exception",
]


class ToolCallParseError(ValueError):
    """The action content is not a tool call at all (malformed JSON/YAML, no tool name).

    The message is written for the model: a loop shows it as corrective feedback.

    >>> str(ToolCallParseError("JSON is malformed"))
    'JSON is malformed'
    """


class DuplicateToolError(ValueError):
    """A tool with the same name is already registered on the chain."""


def duplicate_tool(name: str, existing: object) -> DuplicateToolError:
    """The error of offering a second tool named ``name`` (``existing`` has it)."""
    return DuplicateToolError(
        f"a tool named {name!r} is already registered ({existing!r}); "
        "tool names must be unique within a chain"
    )


class ToolDefinitionError(TypeError):
    """A tool class is defined wrongly: no ``name`` or ``description``, an invalid name,
    or a ``call`` that does not take ``(self, ctx, input)``. Raised when the class is
    defined, or at ``register_tool`` at the latest, naming the class.

    >>> str(ToolDefinitionError("Weather: set name = '...'"))
    "Weather: set name = '...'"
    """


class ToolInputTypeError(TypeError):
    """A tool's input cannot be validated: its type is not a pydantic model, dataclass,
    TypedDict or msgspec Struct, or a field or ``@tool`` parameter has a type with no
    JSON Schema (an arbitrary class; ``typing.TypedDict`` on Python 3.11). Raised when
    the tool is built or registered, naming the field.

    >>> from toolchain import tool
    >>> class Connection: ...
    >>> @tool
    ... def query(db: Connection, sql: str) -> str:
    ...     '''Run SQL.'''
    ...     return ""
    Traceback (most recent call last):
    ...
    toolchain._errors.ToolInputTypeError: @tool query: parameter 'db' (Connection) cannot ...
    """


class ToolError(Exception):
    """Raise from a tool to report a failure the model should read, without a traceback.

    >>> str(ToolError("no flight AA999"))
    'no flight AA999'
    """


def exception_text(error: BaseException) -> str:
    """``str(error)``, even when its ``__str__`` raises."""
    try:
        return str(error)
    except Exception:
        return f"<{type(error).__name__} whose message could not be read>"


def describe_exception(error: BaseException) -> str:
    """``Type: message`` for an exception from user code, safe whatever it does.

    >>> describe_exception(KeyError("city"))
    "KeyError: 'city'"
    >>> describe_exception(StopIteration())
    'StopIteration'
    """
    text = exception_text(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__
