"""The data a model adapter takes and returns, and the `Model` protocol itself.

Everything here is provider-neutral: adapters translate these to and from each SDK's
wire types, so the ReAct loop never sees an SDK object.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Literal, Protocol, cast, runtime_checkable

import msgspec

from agents._errors import AgentTypeError, AgentValueError
from toolchain import ContentPart, TextContent
from toolchain.runtime import REDACTED, slot_init

# The types built per call, message or streamed chunk take slot_init's __init__ (each
# slot set through its descriptor, not object.__setattr__): frozen all the same.

__all__ = [
    "STOP_REASONS",
    "GenerateOptions",
    "Message",
    "Model",
    "ModelResponse",
    "RemoteModel",
    "Role",
    "StopReason",
    "TextDelta",
    "ToolCallDelta",
    "ToolCallRequest",
    "ToolChoice",
    "ToolSpec",
    "Usage",
]

Role = Literal["system", "user", "assistant", "tool"]
"""``tool`` messages answer one call of the assistant message before them."""

ToolChoice = str
"""``"auto"`` (the model decides), ``"required"`` (it must call a tool), ``"none"`` (it
must not), or the name of the one tool it must call."""


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool as a native tool-calling API sees it: name, description, JSON Schema.

    ``strict`` asks providers that support it (OpenAI) to hold the model to the schema.

    >>> ToolSpec("add", "Add two integers.", {"type": "object"}).name
    'add'
    """

    name: str
    description: str
    parameters: Mapping[str, object]
    strict: bool = False


@slot_init
@dataclass(frozen=True, slots=True)
class ToolCallRequest:
    """A native tool call the model made: its id, the tool's name and the raw arguments.

    ``arguments`` is the JSON text exactly as the model wrote it (it may be invalid:
    ``parsed_arguments`` says so, and the call is answered with that error).

    >>> ToolCallRequest("call_1", "add", '{"a": 2}').parsed_arguments()
    {'a': 2}
    """

    id: str
    name: str
    arguments: str = "{}"

    def parsed_arguments(self) -> dict[str, object]:
        """The arguments as an object; ``ValueError`` when they are not a JSON object."""
        text = self.arguments.strip() or "{}"
        try:
            return _OBJECT.decode(text)
        except msgspec.ValidationError as error:
            raise AgentValueError(f"the arguments must be a JSON object: {error}") from error
        except (msgspec.DecodeError, RecursionError, UnicodeError) as error:
            raise AgentValueError(f"the arguments are not valid JSON: {error}") from error


# Made once: ``decode(text, type=dict[str, object])`` builds its decoder on each call
# (a new generic alias each time), ten times the cost of the decoding itself.
_OBJECT = msgspec.json.Decoder(dict[str, object])

StopReason = Literal[
    "stop", "stop_sequence", "length", "tool_use", "content_filter", "error", "other"
]
"""Why generation ended, the same words for every provider.

- ``stop``: the model finished on its own (OpenAI ``stop``, Anthropic ``end_turn``).
- ``stop_sequence``: one of ``GenerateOptions.stop`` was produced and cut off. OpenAI-style
  servers report this as plain ``stop`` unless they say which string matched (vLLM does).
- ``length``: the ``max_tokens`` budget or the context window ran out.
- ``tool_use``: the model asked for a provider-native tool call.
- ``content_filter``: the provider withheld or refused the output.
- ``error``: the server reported that generation failed part way.
- ``other``: anything else, including a stream that ended without a reason.
"""

STOP_REASONS: Final[frozenset[str]] = frozenset(
    {"stop", "stop_sequence", "length", "tool_use", "content_filter", "error", "other"}
)


@slot_init
@dataclass(frozen=True, slots=True)
class Message:
    """One turn of a conversation: a role and its content parts.

    >>> Message.text("user", "What is 6 * 7?").text_content()
    'What is 6 * 7?'
    """

    role: Role
    content: tuple[ContentPart, ...]
    tool_calls: tuple[ToolCallRequest, ...] = ()
    """On an assistant message: the native tool calls it made."""
    tool_call_id: str = ""
    """On a tool message: the id of the call it answers."""
    name: str = ""
    """On a tool message: the name of the tool that answered."""

    @classmethod
    def text(cls, role: Role, text: str) -> Message:
        """A message holding a single text part.

        >>> Message.text("system", "Be brief.").content
        (TextContent(text='Be brief.'),)
        """
        return cls(role, (TextContent(text),))

    def text_content(self) -> str:
        """The message's text parts joined together; media parts are skipped.

        >>> from toolchain import ImageContent
        >>> parts = (TextContent("a"), ImageContent(url="u"), TextContent("b"))
        >>> Message("user", parts).text_content()
        'ab'
        """
        return "".join(part.text for part in self.content if isinstance(part, TextContent))


@slot_init
@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts of one call, or of many summed with ``+``.

    ``input_tokens`` counts every input token, cached ones included;
    ``cached_input_tokens`` is the part read from the provider's prompt cache, where
    the provider reports it.

    >>> Usage(10, 2) + Usage(5, 1, cached_input_tokens=4)
    Usage(input_tokens=15, output_tokens=3, cached_input_tokens=4)
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        """Input and output tokens together.

        >>> Usage(10, 2).total_tokens
        12
        """
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cached_input_tokens + other.cached_input_tokens,
        )


@dataclass(frozen=True, slots=True, repr=False)
class GenerateOptions:
    """Per-call settings; ``None`` (or empty) leaves the provider's or adapter's default.

    Where each option goes (the names are lmthing's ``runPrompt`` options, in Python's
    spelling):

    =====================  ===================================  ===========================
    option                 OpenAI-compatible chat               Anthropic Messages
    =====================  ===================================  ===========================
    ``stop``               ``stop``                             ``stop_sequences``
    ``temperature``        ``temperature``                      ``temperature``
    ``max_tokens``         ``max_tokens`` or                    ``max_tokens`` (else the
                           ``max_completion_tokens``            adapter's own: required)
    ``top_p``              ``top_p``                            ``top_p``
    ``top_k``              ``top_k`` in the body (vLLM,         ``top_k``
                           llama.cpp, Ollama); ignored on
                           api.openai.com, which refuses it
    ``presence_penalty``   ``presence_penalty``                 ignored (no such parameter)
    ``frequency_penalty``  ``frequency_penalty``                ignored (no such parameter)
    ``seed``               ``seed``                             ignored (no such parameter)
    ``headers``            extra HTTP headers of this request   the same
    ``max_retries``        retries of this call                 the same
    =====================  ===================================  ===========================

    An ignored option is logged once per model at debug level (logger ``agents``).
    ``headers`` values may hold credentials: they are never logged, shown by ``repr`` or
    written to traces (`agents.trace`), and errors about them name the header only.

    >>> GenerateOptions(stop=("Observation:",), temperature=0.0, max_tokens=256).stop
    ('Observation:',)
    >>> GenerateOptions(top_p=0.9, headers={"X-Api-Key": "s3cret"}, max_retries=0)
    GenerateOptions(top_p=0.9, headers={'X-Api-Key': '[REDACTED]'}, max_retries=0)
    """

    stop: tuple[str, ...] = ()
    temperature: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    tools: tuple[ToolSpec, ...] = ()
    """Tools the model may call natively; empty: plain text generation."""
    tool_choice: ToolChoice = "auto"
    """See `ToolChoice`; only sent when ``tools`` is not empty."""
    top_p: float | None = None
    """Nucleus sampling: draw only from the likeliest tokens whose probabilities add up
    to ``top_p``; from 0 to 1."""
    top_k: int | None = None
    """Draw only from the ``top_k`` likeliest tokens; at least 1."""
    presence_penalty: float | None = None
    """Penalise tokens that have appeared at all; from -2 to 2 (OpenAI-style only)."""
    frequency_penalty: float | None = None
    """Penalise tokens by how often they have appeared; from -2 to 2 (OpenAI-style only)."""
    headers: Mapping[str, str] | None = None
    """Extra HTTP headers sent with this call (a copy is kept); they win over the
    client's own headers of the same name."""
    max_retries: int | None = None
    """How many times this call is retried after a retryable failure (408, 409, 429,
    5xx, timeouts, dropped connections); ``0`` tries once. ``None``: the model's own
    setting (its constructor's ``max_retries``, 3 by default)."""

    def __post_init__(self) -> None:
        stop: object = self.stop  # typed as a tuple, but callers slip in a bare string
        if isinstance(stop, str):
            raise AgentTypeError(f"stop must be a tuple of strings, got the string {stop!r}")
        if any(not s for s in self.stop):
            raise AgentValueError("stop sequences must be non-empty strings")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise AgentValueError(f"max_tokens must be at least 1, got {self.max_tokens}")
        _check_range("top_p", self.top_p, 0.0, 1.0)
        _check_range("presence_penalty", self.presence_penalty, -2.0, 2.0)
        _check_range("frequency_penalty", self.frequency_penalty, -2.0, 2.0)
        _check_count("top_k", self.top_k, 1)
        _check_count("max_retries", self.max_retries, 0)
        if self.headers is not None:
            # A private copy: the caller's dict may change after the options are made.
            object.__setattr__(self, "headers", _checked_headers(self.headers))

    def __repr__(self) -> str:
        # Only the options that differ from their defaults, and header names without
        # their values: options end up in test failures and debug logs.
        shown: list[str] = []
        for option in dataclasses.fields(self):
            value = getattr(self, option.name)
            if value == option.default:
                continue
            if option.name == "headers":
                value = dict.fromkeys(value, REDACTED)
            shown.append(f"{option.name}={value!r}")
        return f"GenerateOptions({', '.join(shown)})"


# Header names are RFC 9110 tokens; values must not break the header block.
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_HEADER_BREAKS = re.compile(r"[\r\n\x00]")


def _check_range(name: str, value: object, low: float, high: float) -> None:
    # ``object``: the field is typed, but its value may come from a config file or JSON.
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise AgentTypeError(f"{name} must be a number, got {type(value).__name__}")
    if not low <= value <= high:  # also refuses NaN
        raise AgentValueError(f"{name} must be from {low:g} to {high:g}, got {value!r}")


def _check_count(name: str, value: object, least: int) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise AgentTypeError(f"{name} must be an integer, got {type(value).__name__}")
    if value < least:
        raise AgentValueError(f"{name} must be at least {least}, got {value}")


def _checked_headers(headers: object) -> dict[str, str]:
    """A copy of ``headers``; errors name a bad header but never show a value."""
    if isinstance(headers, str | bytes) or not isinstance(headers, Mapping):
        raise AgentTypeError(
            f"headers must be a mapping of names to values, got {type(headers).__name__}"
        )
    copy: dict[str, str] = {}
    seen: set[str] = set()
    for name, value in cast("Mapping[object, object]", headers).items():
        if not isinstance(name, str) or not _HEADER_NAME.fullmatch(name):
            raise AgentValueError(f"header name {name!r} is not a valid HTTP header name")
        if not isinstance(value, str):
            raise AgentTypeError(
                f"the value of header {name!r} must be a string, not {type(value).__name__}"
            )
        if _HEADER_BREAKS.search(value):
            raise AgentValueError(f"the value of header {name!r} holds a line break or NUL")
        if name.lower() in seen:
            raise AgentValueError(f"header {name!r} is given twice (names ignore case)")
        seen.add(name.lower())
        copy[name] = value
    return copy


@slot_init
@dataclass(frozen=True, slots=True)
class ModelResponse:
    """A finished generation: its text, why it ended, what it cost and who answered.

    ``stop_reason`` is one of `STOP_REASONS` (see `StopReason`); ``model`` is the model
    name the provider reported, or the adapter's own when it reported none.

    >>> ModelResponse("42", "stop", Usage(12, 1), "gpt-4o-mini").text
    '42'
    """

    text: str
    stop_reason: str
    usage: Usage
    model: str
    tool_calls: tuple[ToolCallRequest, ...] = ()
    """The native tool calls the model made, in order (stop reason ``tool_use``)."""
    id: str = ""
    """The provider's id of this response (``chatcmpl-…``, ``msg_…``); empty when it
    gave none (a `ScriptedModel`, a server that sends no id)."""


@slot_init
@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of generated text, as it arrives while streaming.

    >>> TextDelta("Thou").text
    'Thou'
    """

    text: str


@slot_init
@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """A piece of a native tool call, as it arrives while streaming.

    ``index`` is the call's position in the reply; ``id`` and ``name`` come with its
    first piece, ``arguments`` pieces of the JSON text follow. The final
    `ModelResponse` holds the calls assembled.

    >>> ToolCallDelta(0, id="call_1", name="add").name
    'add'
    """

    index: int
    id: str = ""
    name: str = ""
    arguments: str = ""


@runtime_checkable
class Model(Protocol):
    """Anything that turns a conversation into text: a provider adapter or a script.

    ``stream`` yields `TextDelta` (and, with tools, `ToolCallDelta`) items and then
    exactly one `ModelResponse` (the full text, tool calls, stop reason and usage) as
    its last item. Failures raise `ModelError` subclasses.

    >>> import asyncio
    >>> from agents.models import ScriptedModel
    >>> model: Model = ScriptedModel(["42"])
    >>> asyncio.run(model.generate([Message.text("user", "6 * 7?")])).text
    '42'
    """

    @property
    def name(self) -> str:
        """A label for logs and transcripts, such as ``openai:gpt-4o-mini``."""
        ...

    async def generate(
        self, messages: Sequence[Message], options: GenerateOptions | None = None
    ) -> ModelResponse:
        """Generate one whole reply."""
        ...

    def stream(
        self, messages: Sequence[Message], options: GenerateOptions | None = None
    ) -> AsyncIterator[TextDelta | ToolCallDelta | ModelResponse]:
        """Generate one reply piece by piece, ending with its `ModelResponse`."""
        ...


@runtime_checkable
class RemoteModel(Protocol):
    """A `Model` that calls a server says where: its ``base_url``, credentials and all
    (the OpenAI and Anthropic adapters). Instrumentation names the server from it
    (``server.address``, ``server.port`` on ``chat`` spans); a model without one (a
    `ScriptedModel`) names none.

    >>> from agents.models import OpenAIChatModel, ScriptedModel
    >>> model = OpenAIChatModel("llama3", api_key="k", base_url="http://127.0.0.1:11434/v1")
    >>> isinstance(model, RemoteModel), isinstance(ScriptedModel(["hi"]), RemoteModel)
    (True, False)
    """

    @property
    def base_url(self) -> str:
        """The URL the model's requests go to."""
        ...
