"""A program's output goes through the observation hooks as a call's output does: the
relay boxes a long one into an ``internal://`` reference, and a later program passes
that reference on to a tool without reading it (the tool gets the whole value)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import pytest

from agents import ReActAgent, ToolCallingAgent
from agents.models import Message, ScriptedModel, ScriptedReply
from toolchain import tool
from toolchain.code import PythonToolChain
from toolchain.relay import ContextRelay

TRANSCRIPT = " ".join(f"point {n}." for n in range(5000)) + " The code is PELICAN-42."
checked: list[int] = []


@tool
def yt_transcribe(video_id: str) -> str:
    """Transcribe a YouTube video."""
    return TRANSCRIPT


@tool
def deep_check(text: str) -> str:
    """Analyse a text in depth."""
    checked.append(len(text))
    return f"Analysis: {len(text.split())} words."


def _text(message: Message) -> str:
    return " ".join(getattr(part, "text", "") for part in message.content)


def player(native: bool) -> Callable[[Sequence[Message]], str | ScriptedReply]:
    """Transcribes in one program, then deep-checks the reference it read in another."""

    def play(messages: Sequence[Message]) -> str | ScriptedReply:
        asked = sum(1 for m in messages if m.role == "assistant")
        if asked == 0:
            code = "await yt_transcribe(video_id='1')"
        elif asked == 1:
            [reference] = re.findall(r"internal://[\w-]+", _text(messages[-1]))
            code = f"await deep_check(text={reference!r})"
        else:
            return "<answer>done</answer>" if not native else "done"
        if native:
            return ScriptedModel.call("run_python", code=code)
        return f"<action>\n{code}\n</action>"

    return play


@pytest.mark.parametrize("native", [False, True], ids=["react", "native"])
def test_a_programs_long_output_is_boxed_and_a_later_program_passes_it_on(native: bool) -> None:
    checked.clear()
    chain = PythonToolChain().register_tool(yt_transcribe).register_tool(deep_check)
    kind = ToolCallingAgent if native else ReActAgent
    agent = kind(
        ScriptedModel(player(native)), tool_chain=chain, extensions=[ContextRelay(threshold=2000)]
    )
    result = agent.run_sync("Transcribe video 1 and deep-check it.")
    first, second = (step.tool_results[0] for step in result.steps[:2])
    assert re.fullmatch(r"internal://[\w-]+", first.observations[0].text)
    assert first.raw.output(-1, object) is not None  # raw keeps the ProgramOutput
    assert second.observations[0].text == "Analysis: 10004 words."
    assert checked == [len(TRANSCRIPT)]  # the tool got the whole value, the model 33 chars
