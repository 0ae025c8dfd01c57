"""What a run said, as the conventions' opt-in content attributes: JSON text, redacted.

Only asked for with ``capture_content=True``. Every string that came from outside (a
message's text, a tool's arguments and result, keys included, a media URL) goes through
``toolchain._redact.redact`` first, so an API key, a bearer token or a value a model
adapter sent as a credential never reaches an attribute, whatever a model, a tool or a
person wrote. Media is described (kind, type, size or URL), never inlined: its bytes
would dwarf the span.

A run sends its whole conversation again at every step; recording it whole on every
``chat`` span would make a run's spans grow with the square of its steps (40 steps of
100 KB tool outputs: hundreds of MB). So a `Transcript` records on each ``chat`` span
only the messages no earlier ``chat`` span of the run recorded, and says how many it
left out (``gent.chat.earlier_messages``): the whole conversation is the run's spans
read in order. And each content attribute holds at most `CONTENT_BYTES` of JSON text:
past it, its longest strings are cut, each ending in a note of how much (``[… 7,012
characters cut]``), and the span's ``gent.content.cut_chars`` counts what was cut.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

import msgspec

from toolchain import TextContent, to_builtins
from toolchain.runtime import redact, redact_data

if TYPE_CHECKING:
    from agents.models import Message, ModelResponse, ToolCallRequest
    from toolchain import ContentPart, Tool

__all__ = [
    "CONTENT_BYTES",
    "CUT_CHARS",
    "EARLIER_MESSAGES",
    "Content",
    "Transcript",
    "answer_messages",
    "as_json",
    "bounded",
    "bounded_text",
    "output_messages",
    "plain",
]

_encode = msgspec.json.Encoder().encode

CONTENT_BYTES = 32 * 1024
"""The most JSON text (UTF-8) one content attribute holds; a ``chat`` span has at most
four (input and output messages, system instructions, tool definitions), an
``execute_tool`` span two (arguments and result)."""
STATUS_CHARS = 2_000
"""The most characters of an error message a span's status description holds."""
CUT_CHARS = "gent.content.cut_chars"
"""The characters cut from a span's content attributes to keep each under the cap."""
EARLIER_MESSAGES = "gent.chat.earlier_messages"
"""The messages of a model call's request that an earlier ``chat`` span of the run
recorded, left out of its ``gen_ai.input.messages``."""

Content = tuple[str, int]
"""A content attribute's JSON text, and the characters cut from it to fit the cap."""


def plain(value: object, *, by_name: bool = True) -> object:
    """``value`` as plain data, redacted (its ``repr`` when it has no plain form): every
    string by its shape, and every field named like a credential blanked whole, at any
    depth (``by_name``; see ``toolchain._redact.redact_data``).

    >>> plain({"city": "Oslo", "note": "Bearer abc.def", "db": [{"password": 1234}]})
    {'city': 'Oslo', 'note': 'Bearer [REDACTED]', 'db': [{'password': '[REDACTED]'}]}
    """
    try:
        return redact_data(to_builtins(value), by_name=by_name)
    except Exception:  # an output the chain could show is plain data; anything else: repr
        return redact(repr(value))


def as_json(value: object, *, by_name: bool = True) -> Content:
    """``value`` as plain data, redacted (`plain`), in JSON text within the cap
    (`bounded`).

    >>> as_json({"city": "Oslo", "auth": "Bearer abc.def"})
    ('{"city":"Oslo","auth":"[REDACTED]"}', 0)
    """
    return bounded(plain(value, by_name=by_name))


def bounded_text(text: str) -> str:
    """``text`` redacted and cut to `STATUS_CHARS` (a span's status description).

    >>> bounded_text("x" * 2_500)[-24:]
    'xx[… 500 characters cut]'
    """
    text = redact(text)
    if len(text) <= STATUS_CHARS:
        return text
    return text[:STATUS_CHARS] + _cut_note(len(text) - STATUS_CHARS)


def _cut_note(cut: int) -> str:
    return f"[… {cut:,} characters cut]"


def bounded(data: object, limit: int = CONTENT_BYTES) -> Content:
    """``data`` (plain, redacted) as JSON text of at most ``limit`` bytes: whole when it
    fits; else with its longest strings cut to one length, each ending in a note of what
    was cut; else (a structure too large by itself) its JSON text cut, as one string.

    >>> text, cut = bounded({"a": "x" * 300, "b": "short"}, limit=200)
    >>> len(text) <= 200, cut, text[-39:]
    (True, 165, 'xxx[… 165 characters cut]","b":"short"}')
    """
    text = _encode(data)
    if len(text) <= limit:
        return text.decode(), 0
    try:
        lengths = sorted(_string_lengths(data))
        level = _level(lengths, limit - (len(text) - sum(lengths)))
        while level >= _SHORTEST_CUT:
            counted = [0]
            cut = _cut_strings(data, level, counted)
            shorter = _encode(cut)
            if len(shorter) <= limit:
                return shorter.decode(), counted[0]
            level = level * 3 // 4  # notes and escapes took more than reckoned
    except RecursionError:  # deeper than the strings can be walked: cut the text
        pass
    whole = text.decode()
    kept = max(0, limit // 2 - 40)  # a JSON string's escapes may double what it holds
    shown = whole[:kept] + _cut_note(len(whole) - kept)
    return _encode(shown).decode(), len(whole) - kept


_SHORTEST_CUT = 64  # cut strings shorter than this and a structure is what is too big


def _level(lengths: list[int], budget: int) -> int:
    """The length every string is cut to so that, together, they fit ``budget``."""
    remaining = budget
    for position, length in enumerate(lengths):
        left = len(lengths) - position
        if length * left > remaining:
            return max(0, remaining // left)
        remaining -= length
    return lengths[-1] if lengths else 0


def _string_lengths(value: object) -> list[int]:
    found: list[int] = []

    def walk(item: object) -> None:
        if isinstance(item, str):
            found.append(len(item))
        elif isinstance(item, dict):
            for inner in cast("dict[object, object]", item).values():
                walk(inner)
        elif isinstance(item, list):
            for inner in cast("list[object]", item):
                walk(inner)

    walk(value)
    return found


def _cut_strings(value: object, level: int, counted: list[int]) -> object:
    """``value`` with each string longer than ``level`` cut to it, noted; ``counted[0]``
    adds up the characters cut."""
    if isinstance(value, str):
        if len(value) <= level:
            return value
        counted[0] += len(value) - level
        return value[:level] + _cut_note(len(value) - level)
    if isinstance(value, dict):
        pairs = cast("dict[object, object]", value).items()
        return {key: _cut_strings(item, level, counted) for key, item in pairs}
    if isinstance(value, list):
        return [_cut_strings(item, level, counted) for item in cast("list[object]", value)]
    return value


def _part(part: ContentPart) -> dict[str, object]:
    if isinstance(part, TextContent):
        return {"type": "text", "content": redact(part.text)}
    modality = type(part).__name__.removesuffix("Content").lower()  # image, audio, binary
    if part.url is not None:
        uri = redact(part.url)
        return {"type": "uri", "modality": modality, "mime_type": part.media_type, "uri": uri}
    size = len(part.data) if part.data is not None else 0
    return {"type": "media", "modality": modality, "mime_type": part.media_type, "bytes": size}


def _call(call: ToolCallRequest) -> dict[str, object]:
    try:
        arguments: object = plain(call.parsed_arguments())
    except ValueError:  # as the model wrote it
        arguments = redact(call.arguments)
    return {"type": "tool_call", "id": call.id, "name": redact(call.name), "arguments": arguments}


def _message(message: Message) -> dict[str, object]:
    if message.role == "tool":
        text = redact(message.text_content())
        parts: list[dict[str, object]] = [
            {"type": "tool_call_response", "id": message.tool_call_id, "response": text}
        ]
        parts += [_part(p) for p in message.content if not isinstance(p, TextContent)]
    else:
        parts = [_part(p) for p in message.content]
        parts += [_call(call) for call in message.tool_calls]
    shown: dict[str, object] = {"role": message.role, "parts": parts}
    if message.name:
        shown["name"] = redact(message.name)
    return shown


class Transcript:
    """A run's messages as the conventions' parts, each recorded once (see the module)."""

    def __init__(self) -> None:
        self._recorded: dict[int, Message] = {}  # kept: an id stays its message's own
        self._system: tuple[tuple[Message, ...], Content | None] = ((), None)
        self._definitions: dict[tuple[str, ...], Content] = {}

    def input_messages(self, messages: Sequence[Message]) -> tuple[Content, int]:
        """``gen_ai.input.messages``: the messages of the request that no earlier call
        of the run recorded, system messages left out (they are
        ``gen_ai.system_instructions``); and how many it left out as recorded before."""
        new: list[dict[str, object]] = []
        earlier = 0
        for message in messages:
            if message.role == "system":
                continue
            if self._recorded.get(id(message)) is message:
                earlier += 1
                continue
            self._recorded[id(message)] = message
            new.append(_message(message))
        return bounded(new), earlier

    def system_instructions(self, messages: Sequence[Message]) -> Content | None:
        """``gen_ai.system_instructions``: the system messages' parts, or None (made
        again only when they change)."""
        system = tuple(message for message in messages if message.role == "system")
        known, made = self._system
        if len(known) == len(system) and all(a is b for a, b in zip(known, system, strict=True)):
            return made
        parts: list[object] = []
        for message in system:
            parts += cast("list[object]", _message(message)["parts"])
        made = bounded(parts) if parts else None
        self._system = (system, made)
        return made

    def tool_definitions(
        self, names: tuple[str, ...], tools: Mapping[str, Tool[Any, Any]]
    ) -> Content:
        """``gen_ai.tool.definitions``: the tools offered in a step, with their schemas
        (made once for each set of tools offered)."""
        made = self._definitions.get(names)
        if made is None:
            made = self._definitions[names] = _definitions(names, tools)
        return made


def output_messages(response: ModelResponse, finish_reason: str) -> Content:
    """``gen_ai.output.messages``: the reply, one message (the one choice we ask for)."""
    parts: list[dict[str, object]] = []
    if response.text:
        parts.append({"type": "text", "content": redact(response.text)})
    parts += [_call(call) for call in response.tool_calls]
    return bounded([{"role": "assistant", "parts": parts, "finish_reason": finish_reason}])


def answer_messages(answer: object) -> Content:
    """``gen_ai.output.messages`` of a run: its answer (text, or a typed answer as JSON)."""
    content = redact(answer) if isinstance(answer, str) else _encode(plain(answer)).decode()
    parts = [{"type": "text", "content": content}]
    return bounded([{"role": "assistant", "parts": parts, "finish_reason": "stop"}])


def _definitions(names: Iterable[str], tools: Mapping[str, Tool[Any, Any]]) -> Content:
    found: list[dict[str, object]] = []
    for name in names:
        tool = tools.get(name)
        if tool is None:
            found.append({"type": "function", "name": name})
            continue
        try:
            parameters: object = tool.prompt_schema()
        except Exception:  # a schema that cannot be made is the chain's problem, not ours
            parameters = None
        described = {"name": name, "description": tool.description, "parameters": parameters}
        found.append({"type": "function", **described})
    # A schema names fields (a ``password`` parameter) without holding their values.
    return as_json(found, by_name=False)
