"""OpenAI chat completion replies for `LoopbackServer`, in the shapes api.openai.com sends.

One builder per kind of reply:

``openai_completion(text)`` / ``openai_stream(deltas)``
    A text answer, whole or as ``chat.completion.chunk`` events (one per delta, a
    finish chunk, a usage chunk with empty ``choices``, then ``data: [DONE]``). Usage:
    10 prompt tokens and a quarter of the text's length, unless given.
``openai_calls(tool_calls, text=None)`` / ``openai_calls_stream(deltas)``
    Native tool calls, whole (``tool_calls`` as the wire carries them, each made by
    ``openai_call``, or anything malformed) or streamed (each delta one
    ``openai_call_delta`` piece, ``{"content": ...}`` text, or anything malformed).
    Usage: ``openai_usage()``, 20 prompt and 9 completion tokens, unless given.
``openai_error(status, message)``
    The error body. ``retry_after_ms`` (1 by default) sets the ``retry-after-ms`` header
    the SDK honours, so retries happen at once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tests.support.loopback import Reply, json_reply, sse_reply

__all__ = [
    "MODEL",
    "openai_call",
    "openai_call_delta",
    "openai_calls",
    "openai_calls_stream",
    "openai_completion",
    "openai_error",
    "openai_stream",
    "openai_usage",
]

MODEL = "gpt-loopback"
"""The model every reply names unless told otherwise."""


def openai_usage(
    prompt: int = 20, completion: int = 9, *, cached: int | None = None
) -> dict[str, Any]:
    """A ``usage`` body; ``cached`` adds ``prompt_tokens_details.cached_tokens``."""
    body: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    if cached is not None:
        body["prompt_tokens_details"] = {"cached_tokens": cached, "audio_tokens": 0}
    return body


def openai_completion(
    text: str,
    *,
    finish_reason: str = "stop",
    prompt_tokens: int = 10,
    completion_tokens: int | None = None,
    model: str = MODEL,
    choice_extra: Mapping[str, object] | None = None,
) -> Reply:
    """A ``chat.completion`` answering ``text``; ``choice_extra`` adds fields to its choice."""
    completion = completion_tokens if completion_tokens is not None else _tokens(text)
    message = {"role": "assistant", "content": text, "refusal": None}
    usage = openai_usage(prompt_tokens, completion)
    return _completion(message, finish_reason, usage, model, choice_extra)


def openai_calls(
    tool_calls: object,
    *,
    text: str | None = None,
    finish_reason: str = "tool_calls",
    usage: Mapping[str, Any] | None = None,
    model: str = MODEL,
) -> Reply:
    """A ``chat.completion`` whose message carries ``tool_calls`` (after ``text``)."""
    message = {"role": "assistant", "content": text, "refusal": None, "tool_calls": tool_calls}
    return _completion(message, finish_reason, dict(usage or openai_usage()), model, None)


def openai_call(call_id: str | None, name: str, arguments: str) -> dict[str, Any]:
    """One entry of a message's ``tool_calls``; a ``None`` id is left out."""
    call: dict[str, Any] = {"type": "function", "function": {"name": name, "arguments": arguments}}
    if call_id is not None:
        call["id"] = call_id
    return call


def openai_stream(
    deltas: Sequence[str],
    *,
    finish_reason: str = "stop",
    prompt_tokens: int = 10,
    completion_tokens: int | None = None,
    model: str = MODEL,
    include_usage: bool = True,
) -> Reply:
    """A text answer streamed as ``deltas``; without ``include_usage`` no usage chunk."""
    completion = completion_tokens if completion_tokens is not None else _tokens("".join(deltas))
    usage = openai_usage(prompt_tokens, completion) if include_usage else None
    return _stream([{"content": delta} for delta in deltas], finish_reason, usage, model, None)


def openai_calls_stream(
    deltas: Sequence[Mapping[str, Any]],
    *,
    finish_reason: str = "tool_calls",
    usage: Mapping[str, Any] | None = None,
    model: str = MODEL,
    split_every: int | None = None,
) -> Reply:
    """A streamed message of ``deltas`` (tool-call pieces, text); ``split_every`` as in
    `sse_reply`."""
    return _stream(deltas, finish_reason, dict(usage or openai_usage()), model, split_every)


def openai_call_delta(
    index: int, call_id: str | None = None, name: str | None = None, arguments: str | None = None
) -> dict[str, Any]:
    """A delta with one ``tool_calls`` piece; a call's first piece has its id and name."""
    entry: dict[str, Any] = {"index": index}
    if call_id is not None:
        entry.update(id=call_id, type="function")
    function: dict[str, str] = {}
    if name is not None:
        function["name"] = name
    if arguments is not None:
        function["arguments"] = arguments
    if function:
        entry["function"] = function
    return {"tool_calls": [entry]}


def openai_error(
    status: int,
    message: str,
    *,
    error_type: str = "server_error",
    retry_after_ms: int | None = 1,
) -> Reply:
    """An OpenAI-style error: ``{"error": {"message", "type", "param", "code"}}``."""
    body = {"error": {"message": message, "type": error_type, "param": None, "code": None}}
    retry = (("retry-after-ms", str(retry_after_ms)),) if retry_after_ms is not None else ()
    return json_reply(body, status=status, headers=retry)


def _tokens(text: str) -> int:
    return max(1, len(text) // 4)


def _completion(
    message: Mapping[str, object],
    finish_reason: str,
    usage: Mapping[str, Any],
    model: str,
    choice_extra: Mapping[str, object] | None,
) -> Reply:
    choice = {
        "index": 0,
        "message": dict(message),
        "logprobs": None,
        "finish_reason": finish_reason,
        **(choice_extra or {}),
    }
    return json_reply(
        {
            "id": "chatcmpl-loopback",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": model,
            "choices": [choice],
            "usage": dict(usage),
        }
    )


def _stream(
    deltas: Sequence[Mapping[str, Any]],
    finish_reason: str,
    usage: Mapping[str, Any] | None,
    model: str,
    split_every: int | None,
) -> Reply:
    def chunk(choices: list[object], usage: object = None) -> dict[str, object]:
        return {
            "id": "chatcmpl-loopback",
            "object": "chat.completion.chunk",
            "created": 1_700_000_000,
            "model": model,
            "choices": choices,
            "usage": usage,
        }

    def choice(delta: Mapping[str, object], finish: str | None = None) -> dict[str, object]:
        return {"index": 0, "delta": dict(delta), "logprobs": None, "finish_reason": finish}

    events: list[tuple[str | None, object]] = [
        (None, chunk([choice({"role": "assistant", "content": ""})]))
    ]
    events += [(None, chunk([choice(delta)])) for delta in deltas]
    events.append((None, chunk([choice({}, finish_reason)])))
    if usage is not None:
        events.append((None, chunk([], dict(usage))))
    events.append((None, "[DONE]"))
    return sse_reply(events, split_every=split_every)
