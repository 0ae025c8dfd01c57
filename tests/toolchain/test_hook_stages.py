"""Every tool-hook stage reports a failing hook the same way, sync or async.

The four stages of a call that run hooks (before, guard, after, observation) share one
runner (``toolchain._hooks.run_stage``). Whatever the stage, a hook that raises, or that
returns what its stage does not take, fails that call only: the model reads what went
wrong in the stage's words, ``raw.errors`` keeps it, the developer gets a log record, and
the action's other calls run. A plain hook and an ``async`` one fail alike.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Literal

import pytest

from formats import XMLFormat
from toolchain import (
    ExecutionContext,
    JSONToolChain,
    ToolCall,
    ToolCallRefused,
    ToolHook,
    ToolResult,
    tool,
)


@tool
def echo(text: str) -> str:
    """Return the text as it is."""
    return text


Stage = Literal["before", "guard", "after", "observation"]
Mode = Literal["sync", "async"]
ACTION = '[{"tool": "echo", "args": {"text": "one"}}, {"tool": "echo", "args": {"text": "two"}}]'


def failing_hook(stage: Stage, mode: Mode, behaviour: Callable[[], object]) -> ToolHook:
    """A hook whose ``stage`` method does ``behaviour`` (raise, or return a value) on the
    first call only (text ``one``), as a plain or an ``async`` method."""

    def act(call: ToolCall) -> Any:
        return behaviour() if call.args.get("text") == "one" else None

    def wrap(call: ToolCall) -> Any:
        if mode == "sync":
            return act(call)

        async def later() -> Any:
            return act(call)

        return later()

    class Failing(ToolHook):
        def before_tool_call(self, ctx: ExecutionContext, call: ToolCall) -> Any:
            return wrap(call) if stage == "before" else None

        def guard_tool_call(self, ctx: ExecutionContext, call: ToolCall) -> Any:
            return wrap(call) if stage == "guard" else None

        def after_tool_call(
            self, ctx: ExecutionContext, call: ToolCall, result: ToolResult[Any]
        ) -> Any:
            return wrap(call) if stage == "after" else None

        def rewrite_observation(
            self, ctx: ExecutionContext, call: ToolCall, result: ToolResult[Any], text: str
        ) -> Any:
            return wrap(call) if stage == "observation" else None

    return Failing()


def boom() -> object:
    raise RuntimeError("boom")


def run(hook: ToolHook, caplog: pytest.LogCaptureFixture) -> tuple[str, str, str]:
    """The first call's error kind and message, and the second call's observation."""
    ctx = ExecutionContext()
    ctx.hooks.add(hook)
    chain = JSONToolChain().register_tool(echo)
    with caplog.at_level(logging.INFO, logger="toolchain"):
        result = chain.execute_sync(ctx, ACTION, XMLFormat())
    first, second = result.raw.errors
    assert first is not None and second is None  # one bad call never stops the others
    assert result.observations[0].text == f"Error: {first.message}"
    assert first.message in result.text
    return first.kind, first.message, result.observations[1].text


LOGGED = {
    "before": "a before-tool-call hook failed on echo",
    "guard": "a tool-call guard failed on echo",
    "after": "an after-tool-call hook failed on echo",
    "observation": "an observation hook failed on echo",
}


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("stage", ["before", "guard", "after", "observation"])
def test_a_hook_that_raises_fails_its_call_in_every_stage(
    stage: Stage, mode: Mode, caplog: pytest.LogCaptureFixture
) -> None:
    kind, message, other = run(failing_hook(stage, mode, boom), caplog)
    assert (kind, message) == ("hook_error", "a tool-call hook failed: RuntimeError: boom")
    assert other == "two"
    [record] = [r for r in caplog.records if r.getMessage() == LOGGED[stage]]
    assert record.levelno == logging.WARNING and record.exc_info is not None


WRONG = {
    "before": "a tool-call hook returned int, not a ToolCall",
    "after": "a tool-call hook returned int, not a ToolResult",
    "observation": "an observation hook returned int, not a str or (str, media)",
}


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("stage", ["before", "after", "observation"])
def test_a_hook_that_returns_the_wrong_type_fails_its_call_in_every_stage(
    stage: Stage, mode: Mode, caplog: pytest.LogCaptureFixture
) -> None:
    kind, message, other = run(failing_hook(stage, mode, lambda: 42), caplog)
    assert (kind, message) == ("hook_error", WRONG[stage])
    assert other == "two"
    [record] = [r for r in caplog.records if r.getMessage().startswith(WRONG[stage] + " (hook ")]
    assert record.levelno == logging.ERROR


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_whatever_a_guard_returns_lets_the_call_run(
    mode: Mode, caplog: pytest.LogCaptureFixture
) -> None:
    ctx = ExecutionContext()
    ctx.hooks.add(failing_hook("guard", mode, lambda: 42))
    chain = JSONToolChain().register_tool(echo)
    result = chain.execute_sync(ctx, ACTION, XMLFormat())
    assert result.raw.errors == (None, None)
    assert [o.text for o in result.observations] == ["one", "two"]


def refuse() -> object:
    raise ToolCallRefused("not today")


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("stage", ["before", "guard"])
def test_a_refusal_from_a_before_hook_or_a_guard_is_a_refusal(
    stage: Stage, mode: Mode, caplog: pytest.LogCaptureFixture
) -> None:
    kind, message, other = run(failing_hook(stage, mode, refuse), caplog)
    assert (kind, message) == ("refused", "echo was refused: not today")
    assert other == "two"
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("stage", ["after", "observation"])
def test_a_refusal_raised_after_the_call_ran_is_a_failing_hook(
    stage: Stage, mode: Mode, caplog: pytest.LogCaptureFixture
) -> None:
    # Too late to refuse: the tool ran. The hook failed, and the call says so.
    kind, message, _ = run(failing_hook(stage, mode, refuse), caplog)
    assert (kind, message) == ("hook_error", "a tool-call hook failed: ToolCallRefused: not today")
