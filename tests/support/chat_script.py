"""A scripted chat behind `LoopbackServer`: each request gets the next turn of a script.

A turn is the model's text, a `Calls` (native tool calls, optionally after text), or a
function of the request giving one of those (to echo a reference the run made, say).
Each turn is sent in the shape the request asks for: OpenAI chat completions or the
Anthropic Messages API (by path), whole or streamed (by the body's ``stream`` flag,
text in pieces of ``chunk_size`` characters). Call ids count up over the whole script:
``call_1``, ``call_2``, … Past the last turn the server answers 400 (not retried),
saying the script ran out.

    with LoopbackServer() as server:
        server.respond_with(chat_script([calls(("get_weather", {"city": "Oslo"})), "Rain."]))
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from tests.support.anthropic_replies import (
    Block,
    anthropic_blocks,
    anthropic_blocks_stream,
    anthropic_message,
    anthropic_stream,
    tool_use,
)
from tests.support.loopback import Handler, RecordedRequest, Reply, refusal
from tests.support.openai_replies import (
    openai_call,
    openai_call_delta,
    openai_calls,
    openai_calls_stream,
    openai_completion,
    openai_stream,
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


def chat_script(turns: Sequence[Turn], *, chunk_size: int = 7) -> Handler:
    """A ``respond_with`` handler playing ``turns`` in order."""
    remaining = deque(turns)
    lock = threading.Lock()
    counter = [0]

    def handle(request: RecordedRequest) -> Reply:
        with lock:
            if not remaining:
                return refusal(f"all {len(turns)} scripted outputs were used")
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
            pieces = [turn[i : i + chunk_size] for i in range(0, len(turn), chunk_size)]
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
    if not streamed:
        return openai_calls([openai_call(i, n, a) for i, n, a in made], text=text or None)
    deltas = [{"content": text}] if text else []
    deltas += [openai_call_delta(index, *call) for index, call in enumerate(made)]
    return openai_calls_stream(deltas)


def _anthropic_calls(text: str, made: _Made, streamed: bool) -> Reply:
    uses = [(i, name, json.loads(arguments)) for i, name, arguments in made]
    if not streamed:
        blocks: list[Mapping[str, object]] = [{"type": "text", "text": text}] if text else []
        blocks += [tool_use(i, name, args) for i, name, args in uses]
        return anthropic_blocks(blocks, usage={"input_tokens": 20, "output_tokens": 9})
    started: list[Block] = [({"type": "text", "text": ""}, [text])] if text else []
    started += [(tool_use(i, name, {}), [json.dumps(args)]) for i, name, args in uses]
    return anthropic_blocks_stream(
        started,
        start_usage={"input_tokens": 20, "output_tokens": 1},
        end_usage={"output_tokens": 9},
    )
