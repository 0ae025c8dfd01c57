"""What a run said, as the conventions' opt-in content attributes: JSON text, redacted.

Only asked for with ``capture_content=True``. Every string that came from outside (a
message's text, a tool's arguments and result, keys included, a media URL) goes through
``toolchain._redact.redact`` first, so an API key, a bearer token or a value a model
adapter sent as a credential never reaches an attribute, whatever a model, a tool or a
person wrote. Media is described (kind, type, size or URL), never inlined: its bytes
would dwarf the span.

A run sends its whole conversation again at every step, so a `Transcript` redacts each
message once and keeps it for the steps after.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

import msgspec

from toolchain import TextContent, to_builtins
from toolchain._redact import redact, redact_data

if TYPE_CHECKING:
    from agents.models import Message, ModelResponse, ToolCallRequest
    from toolchain import ContentPart, Tool

__all__ = ["Transcript", "answer_messages", "as_json", "output_messages", "plain"]

_encode = msgspec.json.Encoder().encode


def plain(value: object) -> object:
    """``value`` as plain data, redacted (its ``repr`` when it has no plain form).

    >>> plain({"city": "Oslo", "auth": "Bearer abc.def"})
    {'city': 'Oslo', 'auth': 'Bearer [REDACTED]'}
    """
    try:
        return redact_data(to_builtins(value))
    except Exception:  # an output the chain could show is plain data; anything else: repr
        return redact(repr(value))


def as_json(value: object) -> str:
    """``value`` as plain data, redacted, in JSON text.

    >>> as_json({"city": "Oslo", "auth": "Bearer abc.def"})
    '{"city":"Oslo","auth":"Bearer [REDACTED]"}'
    """
    return _encode(plain(value)).decode()


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
    """A run's messages as the conventions' parts, each redacted once (see the module)."""

    def __init__(self) -> None:
        self._shown: dict[int, tuple[Message, dict[str, object]]] = {}
        self._definitions: dict[tuple[str, ...], str] = {}

    def _of(self, message: Message) -> dict[str, object]:
        kept = self._shown.get(id(message))
        if kept is not None and kept[0] is message:
            return kept[1]
        shown = _message(message)
        self._shown[id(message)] = (message, shown)  # the message kept: its id stays its own
        return shown

    def input_messages(self, messages: Sequence[Message]) -> str:
        """``gen_ai.input.messages``: the conversation sent, system messages left out
        (they are ``gen_ai.system_instructions``)."""
        return _encode([self._of(m) for m in messages if m.role != "system"]).decode()

    def system_instructions(self, messages: Sequence[Message]) -> str | None:
        """``gen_ai.system_instructions``: the system messages' parts, or None."""
        parts: list[object] = []
        for message in messages:
            if message.role == "system":
                parts += cast("list[object]", self._of(message)["parts"])
        return _encode(parts).decode() if parts else None

    def tool_definitions(self, names: tuple[str, ...], tools: Mapping[str, Tool[Any, Any]]) -> str:
        """``gen_ai.tool.definitions``: the tools offered in a step, with their schemas
        (made once for each set of tools offered)."""
        made = self._definitions.get(names)
        if made is None:
            made = self._definitions[names] = _definitions(names, tools)
        return made


def output_messages(response: ModelResponse, finish_reason: str) -> str:
    """``gen_ai.output.messages``: the reply, one message (the one choice we ask for)."""
    parts: list[dict[str, object]] = []
    if response.text:
        parts.append({"type": "text", "content": redact(response.text)})
    parts += [_call(call) for call in response.tool_calls]
    shown = [{"role": "assistant", "parts": parts, "finish_reason": finish_reason}]
    return _encode(shown).decode()


def answer_messages(answer: object) -> str:
    """``gen_ai.output.messages`` of a run: its answer (text, or a typed answer as JSON)."""
    content = redact(answer) if isinstance(answer, str) else as_json(answer)
    parts = [{"type": "text", "content": content}]
    return _encode([{"role": "assistant", "parts": parts, "finish_reason": "stop"}]).decode()


def _definitions(names: Iterable[str], tools: Mapping[str, Tool[Any, Any]]) -> str:
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
    return as_json(found)
