"""What "iteration" named until this release is a "step" now, and a fact told by two events
is told by one; every old name still works for one release, warns once where it is used
(naming the new one), and is the very object the new name is."""

from __future__ import annotations

import asyncio
import importlib
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

import toolchain
from agents import (
    ModelTextDelta,
    ReActAgent,
    RunEvent,
    ScriptedModel,
    StepFinished,
    StepResult,
    StepStarted,
)
from agents.evals import CaseFileError, parse_case
from agents.evals.runner import DEFAULT_MAX_STEPS, CaseResult, EvalSettings
from formats import XMLFormat
from toolchain import ExecutionContext, Limits, Stats, ToolCallFinished, ToolCallStarted, tool


@tool
def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


@contextmanager
def one_warning(*names: str) -> Iterator[list[warnings.WarningMessage]]:
    """Exactly one DeprecationWarning, raised at the caller's line, naming ``names``."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        yield seen
    assert [w.category for w in seen] == [DeprecationWarning], [str(w.message) for w in seen]
    message = str(seen[0].message)
    assert all(name in message for name in names), message
    assert "the old name goes in the next release" in message or "old key" in message
    assert seen[0].filename == __file__  # the user's line, not ours


@pytest.mark.parametrize(
    ("module", "old", "new"),
    [
        ("agents", "Iteration", "StepResult"),
        ("agents", "IterationStarted", "StepStarted"),
        ("agents", "IterationFinished", "StepFinished"),
        ("agents.result", "Iteration", "StepResult"),
        ("agents.events", "IterationStarted", "StepStarted"),
        ("agents.events", "IterationFinished", "StepFinished"),
        ("agents.evals.runner", "DEFAULT_MAX_ITERATIONS", "DEFAULT_MAX_STEPS"),
        # One event per fact: the bus's names for facts the stream told with its own.
        ("agents", "RunEnded", "RunFinished"),
        ("agents.events", "RunEnded", "RunFinished"),
        ("toolchain", "BeforeToolCall", "ToolCallStarted"),
        ("toolchain", "AfterToolCall", "ToolCallFinished"),
    ],
)
def test_an_old_name_is_the_new_object_with_one_warning(module: str, old: str, new: str) -> None:
    imported = importlib.import_module(module)
    with one_warning(f"{module}.{old}", f"{module}.{new}"):
        found = getattr(imported, old)
    assert found is getattr(imported, new)
    assert old not in imported.__all__  # not offered: only found when asked for
    with pytest.raises(AttributeError, match="has no attribute 'Iterations'"):
        _ = imported.Iterations


def test_an_observer_of_an_old_event_name_still_sees_every_call() -> None:
    ctx = ExecutionContext()
    with one_warning("toolchain.BeforeToolCall"):
        before = toolchain.BeforeToolCall  # typed as ToolCallStarted, for a release
    with one_warning("toolchain.AfterToolCall"):
        after = toolchain.AfterToolCall
    seen: list[object] = []
    ctx.events.subscribe(before, seen.append)
    ctx.events.subscribe(after, seen.append)
    chain = toolchain.JSONToolChain().register_tool(shout)
    chain.execute_sync(ctx, '{"tool": "shout", "args": {"text": "hi"}}', XMLFormat())
    assert [type(event) for event in seen] == [ToolCallStarted, ToolCallFinished]


def test_limits_take_and_show_max_iterations_as_max_steps() -> None:
    with one_warning("Limits(max_iterations=...)", "Limits(max_steps=...)"):
        limits = Limits(max_iterations=1)
    assert limits == Limits(max_steps=1)
    with one_warning("Limits.max_iterations", "Limits.max_steps"):
        assert limits.max_iterations == 1
    with pytest.raises(TypeError, match="takes max_steps or max_iterations"):
        Limits(max_steps=2, max_iterations=3)


def test_a_run_bounded_by_the_old_keyword_stops_at_max_steps() -> None:
    call = '<action>{"tool": "nothing"}</action>'
    with one_warning("max_iterations"):
        limits = Limits(max_iterations=2)
    result = ReActAgent(ScriptedModel([call] * 3), limits=limits).run_sync("Loop.")
    assert (result.stopped_by, result.limit, len(result.steps)) == ("limit", "max_steps", 2)
    assert result.stats[Stats.STEPS] == 2
    with one_warning("AgentResult.iterations", "AgentResult.steps"):
        iterations = result.iterations
    assert iterations is result.steps
    with one_warning("Stats.ITERATIONS", "Stats.STEPS"):
        assert Stats.ITERATIONS == Stats.STEPS == "steps"
    with one_warning("starting_iteration", "starting_step"):
        assert limits.exceeded(Stats(), starting_iteration=True) is None


def test_each_event_of_a_step_keeps_iteration_as_its_step() -> None:
    model = ScriptedModel(["<answer>hi</answer>"])
    ctx = ExecutionContext()
    finished: list[StepFinished] = []
    started: list[StepStarted] = []
    ctx.events.subscribe(StepFinished, finished.append)
    ctx.events.subscribe(StepStarted, started.append)

    async def stream() -> list[RunEvent[str]]:
        return [event async for event in ReActAgent(model).stream("Hi.", ctx=ctx)]

    delta = next(e for e in asyncio.run(stream()) if isinstance(e, ModelTextDelta))
    for event, step in ((delta, 1), (started[0], 1)):
        with one_warning("`iteration`", "`step`"):
            assert event.iteration == event.step == step
    [done] = finished
    assert isinstance(done.step, StepResult)
    with one_warning("StepFinished.iteration", "StepFinished.step"):
        assert done.iteration is done.step


def test_an_eval_case_still_reads_max_iterations_as_max_steps() -> None:
    with one_warning("max_iterations is max_steps"):
        case = parse_case("---\nmax_iterations: 4\n---\nGo.", path="old.md")
    assert case.max_steps == 4 and parse_case("---\nmax_steps: 4\n---\nGo.").max_steps == 4
    with one_warning("PromptCase.max_iterations", "PromptCase.max_steps"):
        assert case.max_iterations == 4
    with pytest.raises(CaseFileError, match="max_iterations: give max_steps only"):
        parse_case("---\nmax_steps: 4\nmax_iterations: 4\n---\nGo.")
    result = CaseResult(case, "m", EvalSettings(), (), "answer", steps=3)
    with one_warning("CaseResult.iterations", "CaseResult.steps"):
        assert result.iterations == result.steps == 3
    assert DEFAULT_MAX_STEPS == 12
