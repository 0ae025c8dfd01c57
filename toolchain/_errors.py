"""The toolchain's errors: ``ToolchainError``, the root of every exception class the
toolchain (and each of its extension packages) defines, and ``ModelFeedback``, the base
of what a user's own code raises to tell a run something the model should read.

``ToolchainError`` sits under the library's root, ``formats.GentError``; the classes
below it stay in the modules of their concept (``ArgumentsError`` in ``_input``,
``StoreError`` in ``stores``, ...), each keeping the builtin base callers catch it by.
``ModelFeedback`` is deliberately not a ``GentError``: ``except GentError`` means "this
library failed", and a tool reporting a missing flight is not that.
``tests/exception_tree.txt`` draws both trees.
"""

from __future__ import annotations

from formats import GentError

__all__ = [
    "DuplicateToolError",
    "ModelFeedback",
    "ToolCallParseError",
    "ToolDefinitionError",
    "ToolError",
    "ToolInputTypeError",
    "ToolchainError",
    "ToolchainLookupError",
    "ToolchainStateError",
    "ToolchainTypeError",
    "ToolchainValueError",
    "describe_exception",
]


class ToolchainError(GentError):
    """Base of every exception class the toolchain defines, its extensions' too
    (variables, relay, discovery, MCP, stores, dialects, composite tools): ``except
    ToolchainError`` catches any of them, and none of ``ModelFeedback``, which user code
    raises. A bad argument or a call in the wrong state raises one of the usage errors
    below, each still the builtin class it was (``ToolchainValueError`` is a
    ``ValueError``).

    >>> from formats import XMLFormat
    >>> from toolchain import ExecutionContext, JSONToolChain
    >>> try:
    ...     JSONToolChain().execute_sync(ExecutionContext(), "{not json", XMLFormat())
    ... except ToolchainError as error:
    ...     print(type(error).__name__)
    ToolCallParseError
    """


class ModelFeedback(Exception):
    """Base of the exceptions your own code raises to tell a run something the model
    should read; the run goes on, and the model reads the message.

    Raise one of its subclasses: ``ToolError`` from a tool (the call fails with that
    message), ``ToolCallRefused`` from a tool hook (the call is refused),
    ``agents.AnswerRejected`` from a termination or its validator (the answer is sent
    back). They are not a ``GentError``: that root is for what this library raises, so
    ``except GentError`` never swallows a signal of yours. (``relay.UnknownReference``
    is both: your ``ReferenceReader`` raises it, and ``ContextRelay.unbox`` does too.)

    >>> from formats import GentError
    >>> issubclass(ToolError, ModelFeedback), issubclass(ToolError, GentError)
    (True, False)
    """


class ToolCallParseError(ToolchainError, ValueError):
    """The action content is not a tool call at all (malformed JSON/YAML, no tool name).

    The message is written for the model: a loop shows it as corrective feedback.

    >>> str(ToolCallParseError("JSON is malformed"))
    'JSON is malformed'
    """


class DuplicateToolError(ToolchainError, ValueError):
    """A tool with the same name is already registered on the chain."""


def duplicate_tool(name: str, existing: object) -> DuplicateToolError:
    """The error of offering a second tool named ``name`` (``existing`` has it)."""
    return DuplicateToolError(
        f"a tool named {name!r} is already registered ({existing!r}); "
        "tool names must be unique within a chain"
    )


class ToolDefinitionError(ToolchainError, TypeError):
    """A tool class is defined wrongly: no ``name`` or ``description``, an invalid name,
    or a ``call`` that does not take ``(self, ctx, input)``. Raised when the class is
    defined, or at ``register_tool`` at the latest, naming the class.

    >>> str(ToolDefinitionError("Weather: set name = '...'"))
    "Weather: set name = '...'"
    """


class ToolInputTypeError(ToolchainError, TypeError):
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


# The usage errors: a call the toolchain cannot honour. One per builtin class a caller
# may already catch it by, named for the root and that class, so ``except ValueError``
# written before the tree still works and ``except ToolchainError`` catches them too.


class ToolchainValueError(ToolchainError, ValueError):
    """A call to the toolchain got a bad argument (a limit below 1, an unknown mode);
    still a ``ValueError``.

    >>> from toolchain import JSONToolChain
    >>> try:
    ...     JSONToolChain(max_calls=0)
    ... except ToolchainError as error:
    ...     print(type(error).__name__, isinstance(error, ValueError))
    ToolchainValueError True
    """


class ToolchainTypeError(ToolchainError, TypeError):
    """A call to the toolchain got an argument of the wrong type; still a ``TypeError``.

    >>> issubclass(ToolchainTypeError, TypeError)
    True
    """


class ToolchainStateError(ToolchainError, RuntimeError):
    """A call came when the object (or the thread) cannot take it: ``run_sync`` inside a
    running event loop, ``DialectStream.feed`` after ``finish()``, connecting an MCP
    server twice. Still a ``RuntimeError``.

    >>> from toolchain import DialectStream
    >>> stream = DialectStream()
    >>> _ = stream.finish()
    >>> try:
    ...     stream.feed("more")
    ... except ToolchainError as error:
    ...     print(type(error).__name__, isinstance(error, RuntimeError))
    ToolchainStateError True
    """


class ToolchainLookupError(ToolchainError, KeyError):
    """A name or index that is not there (an MCP server's tool, a call's output); still
    a ``KeyError`` (and so a ``LookupError``).

    Its message reads as written: ``KeyError`` quotes its argument, which suits a bare
    key but not the sentence saying what is there instead.

    >>> print(ToolchainLookupError("no tool 'weather' (tools: none)"))
    no tool 'weather' (tools: none)
    """

    __str__ = Exception.__str__


class ToolError(ModelFeedback):
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
