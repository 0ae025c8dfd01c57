"""run_prompt: lmthing's first example, in Python on this library's loop.

Run: python examples/run_prompt.py                     # offline, on scripted stand-in models
     python examples/run_prompt.py openai:gpt-4o       # a real model (OPENAI_API_KEY set)
     python examples/run_prompt.py openai:gpt-4o text  # ... over the text protocol

The build function names a user and their data for the system prompt, registers a
weather tool and a researcher sub-agent, and writes the user message. The answer is
streamed as the model writes it, then the usage is printed.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel

from agents import Message, ModelError, Prompt, ScriptedModel, run_prompt
from agents.models import Model, ScriptedReply


class City(BaseModel):
    city: str


class Topic(BaseModel):
    topic: str


def get_weather(args: City) -> str:
    return f"Weather in {args.city}: Sunny, 72°F"


def research(args: Topic, prompt: Prompt) -> None:
    prompt.user(f"Research: {args.topic}")


def build(prompt: Prompt) -> None:
    # Named values for the system prompt; each call returns its <NAME> placeholder.
    user_name = prompt.def_("USER_NAME", "John Doe")
    user_data = prompt.def_data("USER_DATA", {"age": 30, "city": "NYC"})
    prompt.def_tool("get_weather", "Get weather for a city", City, get_weather)
    prompt.def_agent("researcher", "Research topics in depth", Topic, research)
    prompt.user(f"Help {user_name} ({user_data}) with their question about weather.")


def offline_model(messages: Sequence[Message]) -> str | ScriptedReply:
    """Stands in for a real model offline: checks the weather, asks the researcher, answers.
    The researcher sub-agent runs on the same model (none of its own is given)."""
    if messages[-1].role == "user" and messages[-1].text_content().startswith("Research:"):
        return "NYC summers are warm and humid; afternoon storms are common."
    results = [m for m in messages if m.role == "tool"]
    if not results:
        return ScriptedModel.call("get_weather", city="NYC")
    if len(results) == 1:
        return ScriptedModel.call("researcher", topic="NYC summer weather")
    return (
        "John, it is sunny and 72°F in NYC today. Summers there are warm and humid, "
        "so keep an eye out for an afternoon storm."
    )


async def main() -> None:
    model: Model | str = sys.argv[1] if len(sys.argv) > 1 else ScriptedModel(offline_model)
    protocol: Literal["native", "text"] = "text" if sys.argv[2:3] == ["text"] else "native"
    try:
        run = run_prompt(build, model=model, protocol=protocol, temperature=0.7)
        async for chunk in run.text_stream():  # the answer as the model writes it
            print(chunk, end="", flush=True)
        print()
    except ModelError as error:  # e.g. the provider's API key is not set
        sys.exit(str(error))
    result = await run.result()
    usage = await run.usage()
    called = [call.name for call in await run.tool_calls()]
    print(f"stopped by: {result.stopped_by}; tool calls: {called}")
    print(f"tokens used: {usage.total_tokens}")
    print("system prompt:\n" + result.messages[0].text_content())


if __name__ == "__main__":
    asyncio.run(main())
