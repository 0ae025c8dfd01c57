"""A multi-turn chat with tools, on any model: each line you type continues the conversation.

Run: python examples/chat.py                       # offline, on a scripted stand-in model
     python examples/chat.py openai:gpt-4o-mini    # a real model (OPENAI_API_KEY set)
     python examples/chat.py --save chat.json      # resume from / save to chat.json

A file ``--save`` names that cannot be read back (not a conversation, another version,
not a regular file) or written ends the chat with a line saying why, and is left as it was.

Type a line, read the answer, type the next; Ctrl-D ends the chat. Lines piped into
stdin work too: ``printf 'Weather in Paris?\\nAnd the time there?\\n' | python examples/chat.py``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TextIO
from zoneinfo import ZoneInfo

from agents import Message, ModelError, ScriptedModel, ToolCallingAgent
from agents.models import ScriptedReply, messages_from_json, messages_to_json
from toolchain import JSONToolChain, ToolError, tool

CITIES: dict[str, tuple[str, dict[str, object]]] = {  # time zone, weather
    "paris": ("Europe/Paris", {"sky": "sunny", "high_c": 21, "low_c": 12}),
    "oslo": ("Europe/Oslo", {"sky": "light rain", "high_c": 9, "low_c": 3}),
    "tokyo": ("Asia/Tokyo", {"sky": "cloudy", "high_c": 17, "low_c": 11}),
}


def _city(name: str) -> tuple[str, dict[str, object]]:
    found = CITIES.get(name.strip().lower())
    if found is None:
        raise ToolError(f"no data for {name!r}; known cities: Paris, Oslo, Tokyo")
    return found


@tool
def get_weather(city: str) -> dict[str, object]:
    """Today's weather in a city: sky, high and low in °C."""
    return {"city": city, **_city(city)[1]}


@tool
def get_local_time(city: str) -> str:
    """The current local time in a city, as HH:MM."""
    return dt.datetime.now(ZoneInfo(_city(city)[0])).strftime("%H:%M")


def offline_model(messages: Sequence[Message]) -> str | ScriptedReply:
    """Stands in for a real model offline: calls a tool for the city last talked about
    (in this line or earlier in the conversation), then answers from its result."""
    last = messages[-1]
    if last.role == "tool":
        return f"{last.name} says: {last.text_content()}"
    said = [m.text_content().lower() for m in messages if m.role == "user"]
    city = next((c for line in reversed(said) for c in CITIES if c in line), None)
    if city is None:
        return "Which city? I know the weather and the time in Paris, Oslo and Tokyo."
    tool_name = "get_local_time" if "time" in said[-1] else "get_weather"
    return ScriptedModel.call(tool_name, city=city.title())


def read_lines() -> Iterator[str]:
    """The user's lines until end of input; piped lines are echoed to read as a chat."""
    stdin: TextIO | None = sys.stdin  # None when the process was started without one
    if stdin is None:
        return
    interactive = stdin.isatty()
    while True:
        try:
            line = input("you> " if interactive else "").strip()
        except EOFError:
            return
        if not interactive:
            print(f"you> {line}")
        if line:
            yield line


def load_history(path: Path) -> Sequence[Message]:
    """The conversation saved at ``path`` (none yet if there is no file). A file that
    cannot be read ends the chat saying why, before it could be overwritten."""
    if not path.exists():
        return ()
    if not path.is_file():  # a FIFO would wait forever, a directory cannot be read
        sys.exit(f"cannot resume from {path}: not a regular file")
    try:
        return messages_from_json(path.read_bytes())
    except OSError as error:
        sys.exit(f"cannot resume from {path}: {error.strerror or error}")
    except ValueError as error:  # not JSON, too deep, wrong types, another version
        sys.exit(f"cannot resume from {path}: {error}")


def save_history(path: Path, history: Sequence[Message]) -> None:
    """Write the conversation to ``path``; a file that cannot be written ends the chat."""
    try:
        path.write_text(messages_to_json(history), encoding="utf-8")
    except OSError as error:  # a full disk, a missing folder
        sys.exit(f"cannot save to {path}: {error.strerror or error}")


def main() -> None:
    parser = argparse.ArgumentParser(description="Chat with a tool-calling agent.")
    parser.add_argument("model", nargs="?", help="provider:model_id (default: offline)")
    parser.add_argument("--save", type=Path, help="resume from and save to this JSON file")
    args = parser.parse_args()

    try:
        agent = ToolCallingAgent(
            args.model or ScriptedModel(offline_model, name="offline"),
            tool_chain=JSONToolChain().register_tool(get_weather).register_tool(get_local_time),
            behavior="You are a friendly, brief assistant. Use the tools for weather and time.",
        )
    except ModelError as error:  # e.g. the provider's API key is not set
        sys.exit(str(error))
    history: Sequence[Message] = ()
    if args.save:
        history = load_history(args.save)
        if history:
            print(f"(resumed {len(history)} messages from {args.save})")

    for line in read_lines():
        result = agent.run_sync(line, history=history)
        for step in result.steps:
            for call in step.tool_calls:
                print(f"  -> {call.name}({call.arguments})")
        reply = (
            result.answer if result.ok else f"({result.stopped_by}: {result.error or result.limit})"
        )
        print(f"assistant> {reply}")
        history = result.messages  # the next line continues this conversation
        if args.save:
            save_history(args.save, history)

    print(f"(conversation: {len(history)} messages)")


if __name__ == "__main__":
    main()
