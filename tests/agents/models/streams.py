"""Reading a model's stream in the adapter tests: its deltas, then one final response."""

from __future__ import annotations

from agents.models import GenerateOptions, Message, Model, ModelResponse, TextDelta, ToolCallDelta

__all__ = ["stream_items", "stream_texts"]


async def stream_items(
    model: Model, messages: list[Message], options: GenerateOptions | None = None
) -> tuple[list[TextDelta | ToolCallDelta], ModelResponse]:
    """What ``model.stream`` yields: the deltas, and the response that must come last, once."""
    items = [item async for item in model.stream(messages, options)]
    final = items.pop()
    assert isinstance(final, ModelResponse)
    assert not any(isinstance(item, ModelResponse) for item in items)
    return [item for item in items if not isinstance(item, ModelResponse)], final


async def stream_texts(
    model: Model, messages: list[Message], options: GenerateOptions | None = None
) -> tuple[list[str], ModelResponse]:
    """The texts of the stream's `TextDelta` items, and the final response."""
    items, final = await stream_items(model, messages, options)
    return [item.text for item in items if isinstance(item, TextDelta)], final
