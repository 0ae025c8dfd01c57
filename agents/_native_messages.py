"""The messages of native tool calling: each call answered by its own tool message.

A turn's calls get ids unique in the run; each is answered in call order by its
observation (serialised output, instructions, a list of attachments, then the media),
the final-answer tool's own reply, or ``NO_RESULT``; and an earlier conversation is
repaired so that every call has its answer, as providers require.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from agents.models import Message, ToolCallRequest
from formats import TextFormat
from toolchain import (
    CallObservation,
    ExecutionContext,
    OutputError,
    StateKey,
    TextContent,
    ToolCall,
    to_json,
)
from toolchain.runtime import logger

__all__ = [
    "NO_RESULT",
    "answer_every_call",
    "as_request",
    "call_replies",
    "with_unique_ids",
]

_log = logger("agents")
NO_RESULT = "Error: no result: the run ended before this call was answered."

_CALL_IDS = StateKey[set[str]]("agents.native_call_ids")


def call_replies(
    fmt: TextFormat,
    calls: Sequence[ToolCallRequest],
    answered: Mapping[str, Message],
    observations: Sequence[CallObservation],
) -> list[Message]:
    """One tool message per call, in call order: the reply ``answered`` holds for it
    (the final-answer tool's), else the next of ``observations``, else ``NO_RESULT``."""
    replies: list[Message] = []
    found = iter(observations)
    attachments = 0
    for call in calls:
        reply = answered.get(call.id)
        if reply is not None:
            replies.append(reply)
            continue
        observation = next(found, None)
        if observation is None:  # the chain lost a call: never leave one unanswered
            lost = Message("tool", (TextContent(NO_RESULT),), tool_call_id=call.id)
            replies.append(dataclasses.replace(lost, name=call.name))
            continue
        message, attachments = _tool_message(fmt, call, observation, attachments)
        replies.append(message)
    return replies


def _tool_message(
    fmt: TextFormat, call: ToolCallRequest, observation: CallObservation, attachments: int
) -> tuple[Message, int]:
    """The call's tool message, and the count of attachments in the turn so far."""
    if not observation.instructions and not observation.media:  # the common case
        text = (TextContent(observation.text),)
        return Message("tool", text, tool_call_id=call.id, name=call.name), attachments
    blocks = [observation.text]
    if observation.instructions:
        blocks.append(fmt.format_section("instructions", observation.instructions))
    if observation.media:
        lines: list[str] = []
        for part in observation.media:
            attachments += 1
            kind = type(part).__name__.removesuffix("Content").lower()
            lines.append(f"[{attachments}] {kind} ({part.describe()})")  # never the text
        blocks.append(fmt.format_section("attachments", "\n".join(lines)))
    # Text parts follow as blocks of the text (a wire joining parts would glue them
    # on); media stays parts, sent the way each provider takes media.
    blocks += [part.text for part in observation.media if isinstance(part, TextContent)]
    media = [part for part in observation.media if not isinstance(part, TextContent)]
    content = (TextContent("\n\n".join(blocks)), *media)
    return Message("tool", content, tool_call_id=call.id, name=call.name), attachments


def as_request(call: ToolCall) -> ToolCallRequest:
    """A call read from text as the native call the API would have sent (its arguments
    as JSON, so the conversation shows the call the way a tool parser would)."""
    try:
        arguments = to_json(dict(call.args))
    except OutputError:  # dialect values are JSON's; this would be a reader bug
        _log.warning("the arguments of a call read from text are not JSON", exc_info=True)
        arguments = "{}"
    return ToolCallRequest(call.id, call.name, arguments)


def with_unique_ids(
    ctx: ExecutionContext, calls: tuple[ToolCallRequest, ...]
) -> tuple[ToolCallRequest, ...]:
    """``calls`` with an id each, none used before in the run: each tool message answers
    one call, and whatever keys its records by call id (extensions) never mixes two.

    Some servers send no ids, or reuse them (``call_0`` every turn); those calls get
    ids of the run's own (``call_N``), in the assistant message too.
    """
    seen = ctx.state.get(_CALL_IDS)
    if seen is None:
        seen = set[str]()
        ctx.state.set(_CALL_IDS, seen)
    fixed: list[ToolCallRequest] = []
    renamed = False
    for call in calls:
        if not call.id or call.id in seen:
            fresh = ctx.new_call_id()
            while fresh in seen:  # the model may have used our pattern itself
                fresh = ctx.new_call_id()
            call = dataclasses.replace(call, id=fresh)
            renamed = True
        seen.add(call.id)
        fixed.append(call)
    return tuple(fixed) if renamed else calls


def answer_every_call(messages: list[Message]) -> list[Message]:
    """An earlier conversation whose every native call has a tool message after it.

    A run that stopped part way (a limit, an error) may have left calls unanswered,
    and a tool message may have lost its call; providers refuse both, so a call gets
    ``NO_RESULT`` and an orphan tool message is dropped (and logged).
    """
    repaired: list[Message] = []
    pending: dict[str, ToolCallRequest] = {}

    def close() -> None:
        for call in pending.values():
            repaired.append(
                Message("tool", (TextContent(NO_RESULT),), tool_call_id=call.id, name=call.name)
            )
        pending.clear()

    for message in messages:
        if message.role == "tool":
            if pending.pop(message.tool_call_id, None) is None:
                _log.warning(
                    "history: dropped a tool message answering no call (%r)", message.tool_call_id
                )
                continue
            repaired.append(message)
            continue
        close()
        repaired.append(message)
        pending.update((call.id, call) for call in message.tool_calls)
    close()
    return repaired
