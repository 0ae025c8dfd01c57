"""Context relay: a 50 KB transcript travels to the next tool as a short reference.

Run: python examples/relay.py                       # offline, on a scripted stand-in model
     python examples/relay.py openai:gpt-4o-mini    # a real model (OPENAI_API_KEY set)

``yt_transcribe``'s output is over the threshold, so it is stored and the model sees
only ``internal://<id>``. The model passes that reference to ``deep_check``, which
receives the whole transcript, then reads the last 30 characters with
``internal_resource_read_slice`` instead of reading the transcript itself.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence

from agents import Message, ModelError, ScriptedModel, ToolCallingAgent, render_transcript
from agents.models import ScriptedReply
from toolchain import JSONToolChain, tool
from toolchain.relay import ContextRelay

TRANSCRIPT = (
    " ".join(
        f"[{n // 60:02d}:{n % 60:02d}] and that brings us to point {n} of the talk."
        for n in range(950)
    )
    + " Thanks for watching! The code is PELICAN-42."
)
received: list[str] = []  # the texts deep_check was given


@tool
def yt_transcribe(video_id: str) -> str:
    """Transcribe a YouTube video."""
    return TRANSCRIPT


@tool
def deep_check(text: str) -> str:
    """Analyse a text in depth."""
    received.append(text)
    return f"Analysis: {len(text.split())} words, nothing alarming."


def offline_model(messages: Sequence[Message]) -> str | ScriptedReply:
    """Stands in for a real model offline: passes the reference on, then reads its end."""
    last = messages[-1]
    seen = "\n".join(m.text_content() for m in messages if m.role == "tool")
    reference = re.search(r"internal://[\w-]+", seen)
    if reference is None:
        return ScriptedModel.call("yt_transcribe", video_id="123")
    if last.name == "yt_transcribe":
        return ScriptedModel.call("deep_check", {"text": reference.group()})
    if last.name == "deep_check":
        return ScriptedModel.call(
            "internal_resource_read_slice",
            opaque_reference=reference.group(),
            start_index=-30,
            length=30,
        )
    return f"Checked: nothing alarming. The transcript ends: {last.text_content()!r}"


def main() -> None:
    model = sys.argv[1] if len(sys.argv) > 1 else ScriptedModel(offline_model, name="offline")
    chain = JSONToolChain().register_tool(yt_transcribe).register_tool(deep_check)
    try:
        agent = ToolCallingAgent(model, tool_chain=chain, extensions=[ContextRelay(threshold=2000)])
    except ModelError as error:  # e.g. the provider's API key is not set
        sys.exit(str(error))
    result = agent.run_sync("Transcribe video 123, deep-check it, and tell me how it ends.")
    print(render_transcript(result.messages[1:]))  # all but the system prompt
    shown = next((m.text_content() for m in result.messages if m.name == "yt_transcribe"), None)
    if shown is None or not received:  # a real model may fail, or take another path
        why = result.error or result.limit or "yt_transcribe and deep_check were not both called"
        sys.exit(f"\nthe transcript was not passed on ({result.stopped_by}: {why})")
    print(f"\nthe model saw {len(shown)} characters of yt_transcribe: {shown}")
    print(f"deep_check received {len(received[0])} characters: the whole transcript")


if __name__ == "__main__":
    main()
