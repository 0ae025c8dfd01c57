"""When the model is told about its variables, and what it reads then.

The default (``auto``) style costs a run nothing until referencing can pay: each result
is shown under its name, and the one-sentence guide with the list of variables rides on
the step only from the step after an output of ``guide_at`` bytes (1,024 by default), or
when variables come from an earlier run. ``full`` and ``minimal`` keep the guide in the
system prompt and the list on every step. The per-step list stays bounded however many
variables a run keeps.
"""

from __future__ import annotations

import asyncio
import json
from typing import Literal

import pytest

from agents import ReActAgent, ScriptedModel, ToolCallingAgent
from formats import XMLFormat
from tests.support.agent_kinds import answer, call
from toolchain import ExecutionContext, JSONToolChain, Limits, tool
from toolchain.relay import ContextRelay
from toolchain.variables import ToolVariables

Mode = Literal["text", "native"]
MODES = pytest.mark.parametrize("mode", ["text", "native"])

GUIDE = (
    'Pass a result on by its $name, not a copy: "$name", "$name.field" or "$name.items[0]" '
    "as an argument value (the tool gets the real value); answers may use them too."
)


@tool
def text_of(size: int) -> str:
    """A text of ``size`` characters."""
    return "y" * size


@tool
def count(text: str) -> int:
    """The length of a text."""
    return len(text)


def make_agent(
    mode: Mode, model: ScriptedModel, variables: ToolVariables, steps: int = 10
) -> ReActAgent[str] | ToolCallingAgent[str]:
    chain = JSONToolChain().register_tool(text_of).register_tool(count)
    limits = Limits(max_steps=steps)
    if mode == "native":
        return ToolCallingAgent(model, tool_chain=chain, extensions=[variables], limits=limits)
    return ReActAgent(model, tool_chain=chain, extensions=[variables], limits=limits)


def texts(model: ScriptedModel) -> list[str]:
    """Each request's messages, as one text."""
    return ["\n".join(m.text_content() for m in r.messages) for r in model.requests]


@MODES
def test_small_outputs_are_only_named_and_the_guide_comes_after_a_large_one(mode: Mode) -> None:
    model = ScriptedModel(
        [
            call(mode, "text_of", size=10),
            call(mode, "text_of", size=2_000),
            call(mode, "count", text="$text_of_2"),
            answer(mode, "$count_1 characters"),
        ]
    )
    result = make_agent(mode, model, ToolVariables()).run_sync("How long?")
    assert result.ok and result.answer == "2000 characters", result.error
    requests = texts(model)
    assert "$text_of_1 = yyyyyyyyyy" in requests[1]  # the name, beside the result
    for request in requests[:2]:  # no output of 1,024 bytes yet: no guide, no list
        assert "$name" not in request and "Variables:" not in request
    for request in requests[2:]:
        assert GUIDE in request
    last = model.requests[-1].messages[-1].text_content()
    # Outputs this run showed under their names are listed without a preview.
    assert (
        f"{GUIDE}\nVariables:\n- $text_of_1 (text_of, str)\n- $text_of_2 (text_of, str)\n" in last
    )
    assert "- $count_1 (count, int)\n" in last
    # The guide is never in the system prompt, so it never costs the requests before it.
    assert GUIDE not in model.requests[-1].messages[0].text_content()


def test_the_auto_section_on_a_chain() -> None:
    variables = ToolVariables(guide_at=100)
    chain = JSONToolChain(extensions=[variables]).register_tool(text_of)
    ctx = ExecutionContext()
    assert variables.instructions() == ""
    chain.execute_sync(ctx, '{"tool": "text_of", "args": {"size": 99}}', XMLFormat())
    assert variables.prompt_section(ctx) == ""  # 99 bytes stored: under guide_at
    chain.execute_sync(ctx, '{"tool": "text_of", "args": {"size": 100}}', XMLFormat())
    assert variables.prompt_section(ctx) == (
        f"{GUIDE}\nVariables:\n- $text_of_1 (text_of, str)\n- $text_of_2 (text_of, str)"
    )
    chain.execute_sync(ctx, '{"tool": "text_of", "args": {"size": 1}}', XMLFormat())
    assert variables.prompt_section(ctx).startswith(GUIDE)  # once it pays, it stays


def test_a_large_value_a_program_sets_brings_the_guide() -> None:
    variables = ToolVariables()
    ctx = ExecutionContext()
    asyncio.run(variables.set_variable(ctx, "notes", "short"))
    assert variables.prompt_section(ctx) == ""
    asyncio.run(variables.set_variable(ctx, "report", {"rows": list(range(400))}))
    # The model never saw a program's values: they come with their previews.
    assert variables.prompt_section(ctx) == (
        f"{GUIDE}\nVariables:\n- $notes (program, str): short\n"
        f'- $report (program, object: rows): {{"rows":[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,'
        "15,16,17,18,19,20,21,22,23,24,25,26…"
    )


@MODES
def test_variables_from_an_earlier_run_bring_the_guide_to_the_next(mode: Mode) -> None:
    model = ScriptedModel(
        [
            call(mode, "text_of", size=3),
            answer(mode, "$text_of_1"),
            call(mode, "count", text="$text_of_1"),
            answer(mode, "$count_1"),
        ]
    )
    agent = make_agent(mode, model, ToolVariables())
    first = agent.run_sync("A short text.")
    assert first.answer == "yyy"
    assert all(GUIDE not in request for request in texts(model))
    state = json.loads(json.dumps(first.extension_state))
    second = agent.run_sync("Its length?", history=first.messages, extension_state=state)
    assert second.answer == "3", second.error
    # Turn two's first step: the model has not seen $text_of_1 named in this run.
    assert (
        model.requests[2]
        .messages[-1]
        .text_content()
        .endswith(
            f"<tool_variables>\n{GUIDE}\nVariables:\n- $text_of_1 (text_of, str): yyy\n"
            "</tool_variables>"
        )
    )


@MODES
@pytest.mark.parametrize("style", ["full", "minimal"])
def test_the_full_and_minimal_styles_guide_in_the_system_prompt_and_list_every_step(
    mode: Mode, style: Literal["full", "minimal"]
) -> None:
    model = ScriptedModel([call(mode, "text_of", size=3), answer(mode, "$text_of_1")])
    variables = ToolVariables(instruction_style=style)
    result = make_agent(mode, model, variables).run_sync("A short text.")
    assert result.answer == "yyy"
    system = model.requests[0].messages[0].text_content()
    assert variables.instructions() in system
    assert ("$$ is a literal $" in system) is (style == "full")
    last = model.requests[1].messages[-1].text_content()
    assert "Variables:\n- $text_of_1 (text_of, str): yyy" in last and GUIDE not in last


def test_an_unknown_style_or_a_negative_guide_at_is_refused() -> None:
    with pytest.raises(ValueError, match="instruction_style is 'auto', 'full' or 'minimal'"):
        ToolVariables(instruction_style="short")  # type: ignore[arg-type]  # the mistake tested
    with pytest.raises(ValueError, match="guide_at at least 0"):
        ToolVariables(guide_at=-1)


@MODES
def test_the_per_step_list_stays_bounded_over_a_long_run(mode: Mode) -> None:
    steps = 60
    outputs = [call(mode, "text_of", size=2_000) for _ in range(steps)]
    model = ScriptedModel([*outputs, answer(mode, "done")])
    variables = ToolVariables(listed=5)
    result = make_agent(mode, model, variables, steps + 1).run_sync("Make texts.")
    assert result.ok, result.error
    sections = [r.messages[-1].text_content() for r in model.requests[2:]]
    lines = [s[s.index(GUIDE) : s.rindex("</tool_variables>")].splitlines() for s in sections]
    # The guide, "Variables:", the count of older ones and the five most recent, at most.
    assert max(len(each) for each in lines) <= 8
    assert lines[-1][2] == f"({steps - 5} older variables not listed; still usable)"
    assert lines[-1][-1] == f"- $text_of_{steps} (text_of, str)"
    assert max(len(s) for s in sections[10:]) - min(len(s) for s in sections[10:]) < 10


def test_a_boxed_output_keeps_its_preview_in_the_list() -> None:
    variables = ToolVariables()
    relay = ContextRelay(threshold=1_000)
    chain = JSONToolChain(extensions=[relay, variables]).register_tool(text_of)
    ctx = ExecutionContext()
    shown = chain.execute_sync(ctx, '{"tool": "text_of", "args": {"size": 5000}}', XMLFormat())
    assert shown.observations[0].text.startswith("$text_of_1 = internal://")
    # The model read a reference, not the text: the list shows what it holds.
    assert variables.prompt_section(ctx).endswith(f"- $text_of_1 (text_of, str): {'y' * 79}…")


@tool
def record(names: list[str], numbered: bool = False) -> dict[object, int]:
    """A record with these keys (numbered: the number key 1, or 1.0, equal to it)."""
    if numbered:
        return {1: 1} if names == ["1"] else {1.0: 1}
    return {name: n for n, name in enumerate(names)}


def test_each_output_is_described_by_its_own_keys() -> None:
    # Described once per set of keys (a tool's outputs mostly share theirs): an output
    # with other keys, or keys that are equal but written otherwise, is described anew.
    variables = ToolVariables(instruction_style="full")
    chain = JSONToolChain(extensions=[variables]).register_tool(record)
    ctx = ExecutionContext()
    for args in (
        {"names": ["city", "temp"]},
        {"names": ["city", "temp"]},
        {"names": ["city", "wind"]},
        {"names": list("abcdefgh")},
        {"names": ["1"], "numbered": True},
        {"names": ["1.0"], "numbered": True},
        {"names": ["k" * 50, "temp"]},  # a key too long to be kept with its description
        {"names": ["k" * 50, "temp"]},
    ):
        call = json.dumps({"tool": "record", "args": args})
        assert chain.execute_sync(ctx, call, XMLFormat()).raw.errors == (None,)
    assert [v.kind for v in variables.list_variables(ctx)] == [
        "object: city, temp",
        "object: city, temp",
        "object: city, wind",
        "object: a, b, c, d, e, f, …",
        "object: 1",
        "object: 1.0",
        f"object: {'k' * 40}, temp",
        f"object: {'k' * 40}, temp",
    ]
