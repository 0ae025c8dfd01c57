"""Anthropic Messages API replies for `LoopbackServer`, in the shapes api.anthropic.com sends.

One builder per kind of reply:

``anthropic_message(text)`` / ``anthropic_stream(deltas)``
    A text answer, whole or as the event sequence (message_start, ping,
    content_block_start, one content_block_delta per delta, content_block_stop,
    message_delta, message_stop). Usage: 10 input tokens and a quarter of the text's
    length, unless given.
``anthropic_blocks(blocks)`` / ``anthropic_blocks_stream(blocks)``
    Any content blocks (``text``, ``tool_use`` made by ``tool_use``, or anything
    malformed), whole or streamed block by block: each block as it starts, then its
    deltas. A string delta is the block's own kind (``text_delta`` for a text block,
    ``input_json_delta`` otherwise); a mapping is sent as it is (``json_pieces``).
    Usage: 30 input and 9 output tokens whole; 30 input and 21 output streamed.
``anthropic_error(status, message)``
    The error body. ``retry_after_ms`` (1 by default) sets the ``retry-after-ms`` header
    the SDK honours, so retries happen at once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from tests.support.loopback import Reply, json_reply, sse_reply

__all__ = [
    "MODEL",
    "Block",
    "anthropic_blocks",
    "anthropic_blocks_stream",
    "anthropic_error",
    "anthropic_message",
    "anthropic_stream",
    "json_pieces",
    "tool_use",
]

MODEL = "claude-loopback"
"""The model every reply names unless told otherwise."""

Block = tuple[Mapping[str, object], Sequence[str | Mapping[str, object]]]
"""A content block as it starts, then its deltas."""


def anthropic_message(
    text: str,
    *,
    stop_reason: str = "end_turn",
    stop_sequence: str | None = None,
    input_tokens: int = 10,
    output_tokens: int | None = None,
    model: str = MODEL,
) -> Reply:
    """A ``message`` with one text block."""
    output = output_tokens if output_tokens is not None else _tokens(text)
    return anthropic_blocks(
        [{"type": "text", "text": text}],
        stop_reason=stop_reason,
        stop_sequence=stop_sequence,
        usage={"input_tokens": input_tokens, "output_tokens": output},
        model=model,
    )


def anthropic_blocks(
    blocks: Sequence[Mapping[str, object]],
    *,
    stop_reason: str = "tool_use",
    stop_sequence: str | None = None,
    usage: Mapping[str, object] | None = None,
    model: str = MODEL,
) -> Reply:
    """A whole ``message`` with the given content blocks."""
    return json_reply(
        {
            "id": "msg_loopback",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [dict(block) for block in blocks],
            "stop_reason": stop_reason,
            "stop_sequence": stop_sequence,
            "usage": dict(usage or {"input_tokens": 30, "output_tokens": 9}),
        }
    )


def anthropic_stream(
    deltas: Sequence[str],
    *,
    stop_reason: str = "end_turn",
    stop_sequence: str | None = None,
    input_tokens: int = 10,
    output_tokens: int | None = None,
    model: str = MODEL,
) -> Reply:
    """A text answer streamed as ``deltas`` in one text block."""
    output = output_tokens if output_tokens is not None else _tokens("".join(deltas))
    return anthropic_blocks_stream(
        [({"type": "text", "text": ""}, deltas)],
        stop_reason=stop_reason,
        stop_sequence=stop_sequence,
        start_usage={"input_tokens": input_tokens, "output_tokens": 1},
        end_usage={"output_tokens": output},
        model=model,
    )


def anthropic_blocks_stream(
    blocks: Sequence[Block],
    *,
    stop_reason: str = "tool_use",
    stop_sequence: str | None = None,
    start_usage: Mapping[str, object] | None = None,
    end_usage: Mapping[str, object] | None = None,
    model: str = MODEL,
    split_every: int | None = None,
) -> Reply:
    """A streamed message of ``blocks``; ``split_every`` as in `sse_reply`."""
    message: dict[str, object] = {
        "id": "msg_loopback",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": dict(start_usage or {"input_tokens": 30, "output_tokens": 1}),
    }
    events = [_event("message_start", message=message), _event("ping")]
    for index, (start, deltas) in enumerate(blocks):
        events.append(_event("content_block_start", index=index, content_block=dict(start)))
        for delta in deltas:
            sent = _delta(start, delta) if isinstance(delta, str) else dict(delta)
            events.append(_event("content_block_delta", index=index, delta=sent))
        events.append(_event("content_block_stop", index=index))
    events += [
        _event(
            "message_delta",
            delta={"stop_reason": stop_reason, "stop_sequence": stop_sequence},
            usage=dict(end_usage or {"output_tokens": 21}),
        ),
        _event("message_stop"),
    ]
    return sse_reply(events, split_every=split_every)


def tool_use(id: object, name: str, input: object) -> dict[str, object]:
    """A ``tool_use`` content block (one that starts a stream has ``input`` ``{}``)."""
    return {"type": "tool_use", "id": id, "name": name, "input": input}


def json_pieces(*pieces: object) -> list[dict[str, object]]:
    """``input_json_delta`` deltas carrying ``pieces`` as they are (strings or not)."""
    return [{"type": "input_json_delta", "partial_json": piece} for piece in pieces]


def anthropic_error(
    status: int,
    message: str,
    *,
    error_type: str = "api_error",
    retry_after_ms: int | None = 1,
) -> Reply:
    """An Anthropic-style error: ``{"type": "error", "error": {"type", "message"}}``."""
    body = {"type": "error", "error": {"type": error_type, "message": message}}
    retry = (("retry-after-ms", str(retry_after_ms)),) if retry_after_ms is not None else ()
    return json_reply(body, status=status, headers=retry)


def _tokens(text: str) -> int:
    return max(1, len(text) // 4)


def _delta(block: Mapping[str, object], piece: str) -> dict[str, object]:
    if block["type"] == "text":
        return {"type": "text_delta", "text": piece}
    return {"type": "input_json_delta", "partial_json": piece}


def _event(kind: str, **fields: object) -> tuple[str, dict[str, object]]:
    return kind, {"type": kind, **fields}
