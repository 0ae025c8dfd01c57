"""A scripted chat behind `LoopbackServer`: each request gets the next turn of a script.

A turn is the model's text, a `Calls` (native tool calls, optionally after text), or a
function of the request giving one of those (to echo a reference the run made, say).
Each turn is sent in the shape the request asks for: OpenAI chat completions or the
Anthropic Messages API (by path), whole or streamed (by the body's ``stream`` flag).
Call ids count up over the whole script: ``call_1``, ``call_2``, …

    with LoopbackServer() as server:
        server.respond_with(chat_script([calls(("get_weather", {"city": "Oslo"})), "Rain."]))
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from tests.support.loopback import (
    Handler,
    RecordedRequest,
    Reply,
    anthropic_message,
    anthropic_stream,
    json_reply,
    openai_completion,
    openai_stream,
    sse_reply,
)

__all__ = ["Calls", "Turn", "calls", "chat_script", "last_tool_text"]


@dataclass(frozen=True)
class Calls:
    """A turn that calls tools: ``(name, arguments)`` pairs, after ``text``."""

    calls: tuple[tuple[str, Mapping[str, object]], ...]
    text: str = ""


def calls(*pairs: tuple[str, Mapping[str, object]], text: str = "") -> Calls:
    """A `Calls` turn: ``calls(("add", {"a": 1}), ("add", {"a": 2}))``."""
    return Calls(pairs, text)


Turn = str | Calls | Callable[[RecordedRequest], "str | Calls"]


def chat_script(turns: Sequence[Turn]) -> Handler:
    """A ``respond_with`` handler playing ``turns`` in order; past the end it answers 400."""
    remaining = deque(turns)
    lock = threading.Lock()
    counter = [0]

    def handle(request: RecordedRequest) -> Reply:
        with lock:
            if not remaining:
                body = {"error": {"message": f"script of {len(turns)} turns used up"}}
                return json_reply(body, status=400, headers=(("x-should-retry", "false"),))
            turn = remaining.popleft()
            if callable(turn):
                turn = turn(request)
            ids = []
            if isinstance(turn, Calls):
                for _ in turn.calls:
                    counter[0] += 1
                    ids.append(f"call_{counter[0]}")
        streamed = bool(request.json().get("stream"))
        anthropic = request.path.partition("?")[0].endswith("/messages")
        if isinstance(turn, str):
            pieces = [turn[i : i + 7] for i in range(0, len(turn), 7)] or [""]
            if anthropic:
                return anthropic_stream(pieces) if streamed else anthropic_message(turn)
            return openai_stream(pieces) if streamed else openai_completion(turn)
        pairs = zip(ids, turn.calls, strict=True)
        made = [(i, name, json.dumps(args, separators=(",", ":"))) for i, (name, args) in pairs]
        if anthropic:
            return _anthropic_calls(turn.text, made, streamed)
        return _openai_calls(turn.text, made, streamed)

    return handle


def last_tool_text(request: RecordedRequest) -> str:
    """The content of the last tool message the request carries (either provider)."""
    messages = request.json()["messages"]
    for message in reversed(messages):
        if message.get("role") == "tool":
            return str(message.get("content", ""))
        content = message.get("content")
        if isinstance(content, list):
            for block in reversed(content):
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    inner = block.get("content")
                    if isinstance(inner, list):
                        return "".join(str(part.get("text", "")) for part in inner)
                    return str(inner)
    raise AssertionError("the request carries no tool result")


_Made = list[tuple[str, str, str]]


def _openai_calls(text: str, made: _Made, streamed: bool) -> Reply:
    wire = [
        {"id": i, "type": "function", "function": {"name": n, "arguments": a}} for i, n, a in made
    ]
    usage = {"prompt_tokens": 20, "completion_tokens": 9, "total_tokens": 29}
    head = {"id": "chatcmpl-script", "created": 1_700_000_000, "model": "gpt-loopback"}
    if not streamed:
        message = {"role": "assistant", "content": text or None, "tool_calls": wire}
        choice = {"index": 0, "message": message, "logprobs": None, "finish_reason": "tool_calls"}
        whole = {**head, "object": "chat.completion", "choices": [choice], "usage": usage}
        return json_reply(whole)

    def chunk(delta: Mapping[str, object], finish: str | None = None) -> dict[str, object]:
        choice = {"index": 0, "delta": dict(delta), "logprobs": None, "finish_reason": finish}
        return {**head, "object": "chat.completion.chunk", "choices": [choice], "usage": None}

    events: list[tuple[str | None, object]] = [(None, chunk({"role": "assistant", "content": ""}))]
    if text:
        events.append((None, chunk({"content": text})))
    for index, entry in enumerate(wire):
        events.append((None, chunk({"tool_calls": [{"index": index, **entry}]})))
    events.append((None, chunk({}, "tool_calls")))
    done = {**head, "object": "chat.completion.chunk", "choices": [], "usage": usage}
    events += [(None, done), (None, "[DONE]")]
    return sse_reply(events)


def _anthropic_calls(text: str, made: _Made, streamed: bool) -> Reply:
    blocks: list[dict[str, object]] = [{"type": "text", "text": text}] if text else []
    blocks += [{"type": "tool_use", "id": i, "name": n, "input": json.loads(a)} for i, n, a in made]
    message: dict[str, object] = {
        "id": "msg_script",
        "type": "message",
        "role": "assistant",
        "model": "claude-loopback",
        "content": blocks,
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": 20, "output_tokens": 9},
    }
    if not streamed:
        return json_reply(message)
    start = {**message, "content": [], "stop_reason": None, "usage": {"input_tokens": 20}}
    events: list[tuple[str | None, object]] = [
        ("message_start", {"type": "message_start", "message": start})
    ]
    for index, block in enumerate(blocks):
        if block["type"] == "text":
            opened: dict[str, object] = {"type": "text", "text": ""}
            delta: dict[str, object] = {"type": "text_delta", "text": block["text"]}
        else:
            opened = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        events += [
            (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": opened},
            ),
            (
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": delta},
            ),
            ("content_block_stop", {"type": "content_block_stop", "index": index}),
        ]
    events += [
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "tool_use", "stop_sequence": None},
                "usage": {"output_tokens": 9},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return sse_reply(events)
