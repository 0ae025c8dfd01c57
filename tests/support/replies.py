"""A reply in either provider's shape, for tests that run once per provider.

``Provider`` names the wire (``"openai"`` or ``"anthropic"``); each builder gives the
same reply in that provider's shape, from `tests.support.openai_replies` or
`tests.support.anthropic_replies`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from tests.support.anthropic_replies import (
    anthropic_blocks,
    anthropic_blocks_stream,
    anthropic_message,
    anthropic_stream,
    tool_use,
)
from tests.support.loopback import Reply
from tests.support.openai_replies import (
    openai_call,
    openai_call_delta,
    openai_calls,
    openai_calls_stream,
    openai_completion,
    openai_stream,
    openai_usage,
)

__all__ = [
    "Call",
    "Provider",
    "calls_reply",
    "streamed_calls",
    "streamed_text_reply",
    "text_reply",
]

Provider = Literal["openai", "anthropic"]
Call = tuple[str, str, str]
"""A call the model makes: its id, the tool's name and the argument JSON as sent."""


def text_reply(provider: Provider, text: str, *, usage: tuple[int, int] = (30, 5)) -> Reply:
    """A whole text answer."""
    if provider == "openai":
        return openai_completion(text, prompt_tokens=usage[0], completion_tokens=usage[1])
    return anthropic_message(text, input_tokens=usage[0], output_tokens=usage[1])


def streamed_text_reply(provider: Provider, *pieces: str) -> Reply:
    """A text answer streamed in ``pieces``."""
    return openai_stream(pieces) if provider == "openai" else anthropic_stream(pieces)


def calls_reply(
    provider: Provider, calls: Sequence[Call], *, text: str = "", usage: tuple[int, int] = (20, 9)
) -> Reply:
    """One whole reply making ``calls`` (after ``text``)."""
    if provider == "openai":
        wire = [openai_call(call_id, name, arguments) for call_id, name, arguments in calls]
        return openai_calls(wire, text=text or None, usage=openai_usage(*usage))
    blocks: list[Mapping[str, object]] = [{"type": "text", "text": text}] if text else []
    blocks += [tool_use(i, name, json.loads(arguments)) for i, name, arguments in calls]
    return anthropic_blocks(blocks, usage={"input_tokens": usage[0], "output_tokens": usage[1]})


def streamed_calls(provider: Provider, calls: Sequence[tuple[str, str, Sequence[str]]]) -> Reply:
    """One streamed reply making ``calls`` one after the other, arguments in those pieces."""
    if provider == "openai":
        deltas: list[Mapping[str, Any]] = []
        for index, (call_id, name, pieces) in enumerate(calls):
            deltas.append(openai_call_delta(index, call_id, name, ""))
            deltas += [openai_call_delta(index, arguments=piece) for piece in pieces]
        return openai_calls_stream(deltas)
    return anthropic_blocks_stream(
        [(tool_use(call_id, name, {}), pieces) for call_id, name, pieces in calls]
    )
