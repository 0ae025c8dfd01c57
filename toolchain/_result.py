"""What tools return and what a chain hands back to the loop."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Generic, Literal, TypeVar

from toolchain._content import ContentPart, TextContent

__all__ = [
    "ErrorKind",
    "RawToolCallResult",
    "RawToolChainResult",
    "ToolCall",
    "ToolCallError",
    "ToolChainResult",
    "ToolResult",
]

OutputT = TypeVar("OutputT", covariant=True)


@dataclass(frozen=True)  # no slots: Cls[T](...) must work (sets __orig_class__)
class ToolResult(Generic[OutputT]):
    """A tool's raw, typed output. Tools never format anything; chains do.

    ``text`` is the structured value (a dict, a model, a string …) the chain serialises
    as JSON or YAML; ``media`` are images, audio or files sent beside the observation;
    ``instructions`` is follow-up guidance shown to the model with the result.

    >>> ToolResult({"temp_c": 21}, instructions="Quote the temperature.").text
    {'temp_c': 21}
    """

    text: OutputT
    media: Sequence[ContentPart] = ()
    instructions: str = ""


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One call as the model wrote it: a tool name and its raw arguments.

    >>> ToolCall("get_weather", {"city": "Paris"}).name
    'get_weather'
    """

    name: str
    args: Mapping[str, object] = field(default_factory=dict)


ErrorKind = Literal[
    "parse",
    "unknown_tool",
    "invalid_arguments",
    "tool_error",
    "timeout",
    "cancelled",
    "output_error",
    "hook_error",
    "limit",
]


@dataclass(frozen=True, slots=True)
class ToolCallError:
    """Why one call failed, for the program; ``message`` is what the model was shown.

    >>> ToolCallError("unknown_tool", "unknown tool 'wether'").kind
    'unknown_tool'
    """

    kind: ErrorKind
    message: str
    exception: BaseException | None = None


@dataclass(frozen=True, slots=True)
class RawToolCallResult:
    """A successful call's tool name and its unformatted ``ToolResult``."""

    name: str
    output: ToolResult[object]


@dataclass(frozen=True, slots=True)
class RawToolChainResult:
    """Everything a chain did, unformatted. ``results[i]`` / ``errors[i]`` match ``calls[i]``.

    >>> raw = RawToolChainResult(calls=(ToolCall("x"),), results=(None,), errors=(None,))
    >>> raw.ok
    True
    """

    calls: tuple[ToolCall, ...] = ()
    results: tuple[RawToolCallResult | None, ...] = ()
    errors: tuple[ToolCallError | None, ...] = ()

    @property
    def ok(self) -> bool:
        """True when no call failed."""
        return all(error is None for error in self.errors)


@dataclass(frozen=True, slots=True)
class ToolChainResult:
    """The observation for the model (``text`` + ``media``) and the ``raw`` results.

    >>> ToolChainResult("<observation>…</observation>").as_content_parts()
    (TextContent(text='<observation>…</observation>'),)
    """

    text: str = ""
    media: tuple[ContentPart, ...] = ()
    raw: RawToolChainResult = field(default_factory=RawToolChainResult)

    def as_content_parts(self) -> tuple[ContentPart, ...]:
        """The observation as one message's content: text first, then media."""
        text: tuple[ContentPart, ...] = (TextContent(self.text),) if self.text else ()
        return text + self.media
