"""Compaction hooks (``agents.compaction``) on both agents: what each model call is sent.

Every request a model received is checked: a native call is never sent without its
tool message, the earlier conversation and the task are always there, what was left
out is said in the task message, and the size stays bounded. The summarising
compaction is checked for when it calls its model, what it sends it, how it reuses
and replaces its summary, how it falls back, and that its tokens are counted.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import AsyncIterator, Callable, Sequence

import pytest

from agents import (
    Limits,
    RunFinished,
    SlidingWindow,
    StepHook,
    SummarizingCompaction,
)
from agents.compaction import SUMMARY_PROMPT
from agents.models import (
    GenerateOptions,
    Message,
    ModelError,
    ModelResponse,
    ScriptedModel,
    ScriptedReply,
    TextDelta,
    ToolCallDelta,
    ToolCallRequest,
    Usage,
)
from tests.support.agent_kinds import (
    KINDS,
    Agent,
    Kind,
    Output,
    add,
    agent,
    answer,
    chain_for,
    yaml_call,
)
from toolchain import ExecutionContext, Stats, TextContent

TASK = "Add 1000 to each number."


def tool_step(kind: Kind, n: int) -> Output:
    """Step ``n`` calls ``add(10 * n, 1000)``: its result, ``1000 + 10 * n``, names it."""
    return yaml_call(kind, "add", a=10 * n, b=1000)


def two_call_step(kind: Kind, n: int) -> str | ScriptedReply:
    """A step making two calls at once (one action, or two native calls in one turn)."""
    if kind == "react":
        return (
            "<action>\n"
            f"- tool: add\n  args: {{a: {10 * n}, b: 1000}}\n"
            f"- tool: add\n  args: {{a: {10 * n}, b: 2000}}\n"
            "</action>"
        )
    calls = (
        ToolCallRequest("", "add", f'{{"a": {10 * n}, "b": 1000}}'),
        ToolCallRequest("", "add", f'{{"a": {10 * n}, "b": 2000}}'),
    )
    return ScriptedReply("", calls)


def script(kind: Kind, steps: int, *, two_calls_at: int = 0) -> list[str | ScriptedReply]:
    """``steps`` tool steps (one of them making two calls, if asked), then the answer."""
    outputs = [
        two_call_step(kind, n) if n == two_calls_at else tool_step(kind, n)
        for n in range(1, steps + 1)
    ]
    return [*outputs, answer(kind)]


def build(
    kind: Kind, model: ScriptedModel, hooks: Sequence[StepHook], limits: Limits | None = None
) -> Agent:
    chain = chain_for(kind, add)
    return agent(kind, model, chain, step_hooks=hooks, limits=limits or Limits())


def step_starts(messages: Sequence[Message], task_at: int) -> list[int]:
    """Where each step (an assistant message and what answers it) starts."""
    return [i for i in range(task_at + 1, len(messages)) if messages[i].role == "assistant"]


def assert_calls_keep_their_results(kind: Kind, messages: Sequence[Message]) -> None:
    """Each tool message follows the assistant message that made its call, and every
    call is answered before anything else; in text mode, roles alternate."""
    if kind == "react":
        roles = [message.role for message in messages]
        assert roles[0] == "system"
        assert roles[1:] == ["user", "assistant"] * (len(roles) // 2 - 1) + ["user"], roles
        return
    pending: set[str] | None = None
    for message in messages:
        if message.role == "tool":
            assert pending is not None, f"a tool message with no call before it: {message}"
            assert message.tool_call_id in pending, f"{message.tool_call_id} was not called"
            pending.discard(message.tool_call_id)
            continue
        assert not pending, f"calls {pending} were sent without their results"
        pending = {call.id for call in message.tool_calls} if message.role == "assistant" else None
    assert not pending, f"calls {pending} were sent without their results"


def earlier_conversation() -> tuple[Message, ...]:
    return (
        Message.text("system", "an old system prompt: never sent again"),
        Message.text("user", "Remember the number 7."),
        Message.text("assistant", "<answer>Noted: 7.</answer>"),
    )


# -- the sliding window ---------------------------------------------------------------


@KINDS
@pytest.mark.parametrize("with_history", [False, True])
async def test_the_window_sends_the_task_history_and_last_steps_whole(
    kind: Kind, with_history: bool
) -> None:
    model = ScriptedModel(script(kind, 7, two_calls_at=4))
    history = earlier_conversation() if with_history else ()
    result = await build(kind, model, [SlidingWindow(2)]).run(TASK, history=history)
    assert result.ok, result.error
    kept = [m for m in history if m.role != "system"]
    task_at = 1 + len(kept)  # in a request: the system message, the history, the task
    full = result.messages  # the run keeps everything
    original_task = full[task_at]
    assert TASK in original_task.text_content()
    starts = step_starts(full, task_at)
    assert len(starts) == 8 and len(model.requests) == 8
    for number, request in enumerate(model.requests, 1):
        sent = request.messages
        done = number - 1  # steps in the conversation when this call was made
        conversation = full[: starts[done]] if done < len(starts) else full
        assert_calls_keep_their_results(kind, sent)
        assert sent[0] == full[0]
        assert list(sent[1:task_at]) == kept
        left_out = max(0, done - 2)
        task = sent[task_at]
        if left_out == 0:
            assert sent == conversation
            continue
        assert task.content[:-1] == original_task.content
        note = task.content[-1]
        plural = "step was" if left_out == 1 else "steps were"
        assert isinstance(note, TextContent)
        assert note.text == f"\n\n[{left_out} earlier {plural} left out to save space]"
        assert sent[task_at + 1 :] == conversation[starts[left_out] :]
        assert sent[task_at + 1].role == "assistant"
        # Bounded: two steps of at most three messages (a turn with two native calls).
        assert len(sent) <= task_at + 1 + 2 * 3


@KINDS
async def test_the_window_leaves_short_runs_alone(kind: Kind) -> None:
    plain = ScriptedModel(script(kind, 3))
    windowed = ScriptedModel(script(kind, 3))
    await build(kind, plain, []).run(TASK)
    await build(kind, windowed, [SlidingWindow(3)]).run(TASK)
    assert windowed.requests == plain.requests


@KINDS
async def test_the_window_applies_to_streamed_runs_too(kind: Kind) -> None:
    model = ScriptedModel(script(kind, 4))
    events = [event async for event in build(kind, model, [SlidingWindow(1)]).stream(TASK)]
    final = events[-1]
    assert isinstance(final, RunFinished) and final.result.ok
    last = model.requests[-1].messages
    assert last[1].text_content().endswith("[3 earlier steps were left out to save space]")
    assert len(last) == 4  # system, task, the last step's two messages
    assert_calls_keep_their_results(kind, last)


def test_the_window_needs_at_least_one_step() -> None:
    with pytest.raises(ValueError, match="max_steps must be at least 1"):
        SlidingWindow(0)


# -- the summarising compaction ---------------------------------------------------------


def summary_prompts(model: ScriptedModel) -> list[str]:
    prompts: list[str] = []
    for request in model.requests:
        (message,) = request.messages
        assert message.role == "user"
        prompts.append(message.text_content())
    return prompts


@KINDS
@pytest.mark.parametrize("with_history", [False, True])
async def test_a_summary_replaces_old_steps_and_is_reused_until_more_pile_up(
    kind: Kind, with_history: bool
) -> None:
    summarizer = ScriptedModel(["SUMMARY-ONE", "SUMMARY-TWO"], name="summarizer")
    compaction = SummarizingCompaction(summarizer, keep_steps=1, trigger_steps=3)
    model = ScriptedModel(script(kind, 8, two_calls_at=5))
    history = earlier_conversation() if with_history else ()
    result = await build(kind, model, [compaction]).run(TASK, history=history)
    assert result.ok, result.error
    kept = [m for m in history if m.role != "system"]
    task_at = 1 + len(kept)
    full = result.messages
    starts = step_starts(full, task_at)
    assert len(model.requests) == 9

    # Called twice in nine steps: when step 4 would be the fourth whole step sent
    # (steps 1-3 summarised), and when steps 4-7 had piled up after it (4-6 added).
    first, second = summary_prompts(summarizer)
    assert "None yet" in first
    assert [f"### Step {n}" in first for n in range(1, 5)] == [True, True, True, False]
    assert "1030" in first and "1040" not in first  # step 3's result, not step 4's
    assert "SUMMARY-ONE" in second and "None yet" not in second
    assert [f"### Step {n}" in second for n in range(3, 8)] == [False, True, True, True, False]
    assert "1030" not in second and "1060" in second and "1070" not in second

    for number, request in enumerate(model.requests, 1):
        sent = request.messages
        done = number - 1
        conversation = full[: starts[done]] if done < len(starts) else full
        assert_calls_keep_their_results(kind, sent)
        assert sent[0] == full[0] and list(sent[1:task_at]) == kept
        if done <= 3:
            assert sent == conversation
            continue
        summary, covered = ("SUMMARY-ONE", 3) if done <= 6 else ("SUMMARY-TWO", 6)
        task = sent[task_at]
        assert task.content[:-1] == full[task_at].content
        assert task.text_content().endswith(
            f"[Steps 1 to {covered} of this run were left out to save space. "
            f"A summary of them:]\n{summary}"
        )
        assert sent[task_at + 1 :] == conversation[starts[covered] :]
        assert 1 <= done - covered <= 3  # between keep_steps and trigger_steps whole steps


@KINDS
async def test_nothing_is_summarised_while_the_run_is_short(kind: Kind) -> None:
    summarizer = ScriptedModel([])
    model = ScriptedModel(script(kind, 3))
    compaction = SummarizingCompaction(summarizer, keep_steps=1, trigger_steps=3)
    result = await build(kind, model, [compaction]).run(TASK)
    assert result.ok
    assert summarizer.requests == []
    assert model.requests[-1].messages == result.messages[:-1]


@KINDS
async def test_keep_steps_zero_summarises_every_step(kind: Kind) -> None:
    summarizer = ScriptedModel(["S1", "S2"])
    model = ScriptedModel(script(kind, 4))
    compaction = SummarizingCompaction(summarizer, keep_steps=0, trigger_steps=2)
    result = await build(kind, model, [compaction]).run(TASK)
    assert result.ok, result.error
    # Step 4 (3 steps done > 2): all three summarised; step 5: one new step, reused.
    assert len(summarizer.requests) == 1
    fourth, fifth = model.requests[3].messages, model.requests[4].messages
    assert len(fourth) == 2 and fourth[1].text_content().endswith("summary of them:]\nS1")
    assert len(fifth) == 4 and fifth[1] == fourth[1]


class FixedUsageModel:
    """A summary model reporting the same large usage on every call."""

    def __init__(self, usage: Usage) -> None:
        self.usage = usage
        self.calls = 0

    @property
    def name(self) -> str:
        return "fixed-usage"

    async def generate(
        self, messages: Sequence[Message], options: GenerateOptions | None = None
    ) -> ModelResponse:
        self.calls += 1
        return ModelResponse(f"summary {self.calls}", "stop", self.usage, self.name)

    async def stream(
        self, messages: Sequence[Message], options: GenerateOptions | None = None
    ) -> AsyncIterator[TextDelta | ToolCallDelta | ModelResponse]:
        yield await self.generate(messages, options)


@KINDS
async def test_summary_tokens_reach_the_run_stats(kind: Kind) -> None:
    summarizer = FixedUsageModel(Usage(1000, 100, cached_input_tokens=600))
    compaction = SummarizingCompaction(summarizer, keep_steps=1, trigger_steps=2)
    model = ScriptedModel(script(kind, 5))
    result = await build(kind, model, [compaction]).run(TASK)
    assert result.ok, result.error
    assert summarizer.calls == 2  # steps 1-2 at step 4, then 1-4 at step 6
    stats = result.stats
    assert stats[Stats.INPUT_TOKENS] == result.usage.input_tokens + 2000
    assert stats[Stats.OUTPUT_TOKENS] == result.usage.output_tokens + 200
    cached = result.usage.cached_input_tokens + 1200  # the summary's prompt-cache reads too
    assert stats[Stats.CACHED_INPUT_TOKENS] == cached
    assert stats[Stats.MODEL_CALLS] == len(model.requests) + 2


@KINDS
async def test_the_token_limit_counts_summary_tokens(kind: Kind) -> None:
    summarizer = FixedUsageModel(Usage(10**7, 1))
    compaction = SummarizingCompaction(summarizer, keep_steps=1, trigger_steps=2)
    model = ScriptedModel(script(kind, 6))
    result = await build(kind, model, [compaction], Limits(max_input_tokens=10**6)).run(TASK)
    assert result.stopped_by == "limit"
    assert result.limit is not None and "input" in result.limit
    assert summarizer.calls == 1
    assert len(model.requests) == 4  # the summary came before step 4; step 5 was refused
    assert result.usage.input_tokens < 10**6


def failing(error: Exception) -> ScriptedModel:
    def reply(messages: Sequence[Message]) -> str:
        raise error

    return ScriptedModel(reply, name="failing")


FAILURES = pytest.mark.parametrize(
    ("make_summarizer", "reason"),
    [
        (lambda: ScriptedModel([], name="exhausted"), "ScriptExhaustedError"),
        (lambda: failing(ModelError("the summary model is down")), "the summary model is down"),
        (lambda: failing(RuntimeError("a bug in the summary model")), "a bug in the summary"),
        (lambda: ScriptedModel(["  "] * 2, name="blank"), "empty summary"),
    ],
    ids=["exhausted", "model-error", "any-error", "empty"],
)


@KINDS
@FAILURES
async def test_a_failed_summary_falls_back_to_the_window_and_is_retried(
    kind: Kind,
    make_summarizer: Callable[[], ScriptedModel],
    reason: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    summarizer = make_summarizer()
    model = ScriptedModel(script(kind, 4))
    compaction = SummarizingCompaction(summarizer, keep_steps=1, trigger_steps=2)
    with caplog.at_level(logging.WARNING, logger="agents"):
        result = await build(kind, model, [compaction]).run(TASK)
    assert result.ok, result.error
    assert result.answer == "done"
    assert len(summarizer.requests) == 2  # tried at step 4, and again at step 5
    fourth, fifth = model.requests[3].messages, model.requests[4].messages
    assert fourth[1].text_content().endswith("[2 earlier steps were left out to save space]")
    assert fifth[1].text_content().endswith("[3 earlier steps were left out to save space]")
    assert len(fourth) == len(fifth) == 4  # system, task, the last step
    assert_calls_keep_their_results(kind, fourth)
    assert_calls_keep_their_results(kind, fifth)
    warnings = [r for r in caplog.records if r.name == "agents" and "compaction" in r.message]
    assert len(warnings) == 2
    assert all(r.levelno == logging.WARNING and reason in r.message for r in warnings)


@KINDS
async def test_a_failed_resummary_keeps_the_previous_summary(kind: Kind) -> None:
    summarizer = ScriptedModel(["S1"])
    model = ScriptedModel(script(kind, 6))
    compaction = SummarizingCompaction(summarizer, keep_steps=1, trigger_steps=2)
    result = await build(kind, model, [compaction]).run(TASK)
    assert result.ok, result.error
    # Step 4: steps 1-2 summarised. Step 5 reuses it. Step 6: steps 3-4 should be
    # added but the model is out of replies: S1 stays, 3-4 are left out.
    assert len(summarizer.requests) == 3  # steps 4, 6 and 7
    sixth = model.requests[5].messages
    note = "A summary of them:]\nS1\n\n[2 later steps were left out to save space]"
    assert sixth[1].text_content().endswith(note)
    assert len(sixth) == 4
    assert_calls_keep_their_results(kind, sixth)


@KINDS
async def test_a_summary_is_not_reused_by_another_run_on_the_same_context(kind: Kind) -> None:
    summarizer = ScriptedModel(["FIRST-RUN", "SECOND-RUN"])
    compaction = SummarizingCompaction(summarizer, keep_steps=1, trigger_steps=2)
    ctx = ExecutionContext()
    first_model, second_model = ScriptedModel(script(kind, 3)), ScriptedModel(script(kind, 3))
    await build(kind, first_model, [compaction]).run(TASK, ctx=ctx)
    # A new conversation on the same context: its steps are not the ones summarised.
    result = await build(kind, second_model, [compaction]).run("Another task.", ctx=ctx)
    assert result.ok, result.error
    assert len(summarizer.requests) == 2
    assert "None yet" in summary_prompts(summarizer)[1]
    assert second_model.requests[-1].messages[1].text_content().endswith("SECOND-RUN")


@KINDS
async def test_a_cancelled_run_does_not_wait_for_its_summary(kind: Kind) -> None:
    ctx = ExecutionContext()

    class Hanging(FixedUsageModel):
        async def generate(
            self, messages: Sequence[Message], options: GenerateOptions | None = None
        ) -> ModelResponse:
            self.calls += 1
            ctx.cancel("the user gave up")
            await asyncio.Event().wait()  # never set: only cancellation ends this
            raise AssertionError("unreachable")

    summarizer = Hanging(Usage())
    compaction = SummarizingCompaction(summarizer, keep_steps=1, trigger_steps=2)
    model = ScriptedModel(script(kind, 4))
    result = await build(kind, model, [compaction]).run(TASK, ctx=ctx)
    assert result.stopped_by == "cancelled"
    assert summarizer.calls == 1
    # Steps 1-3; step 4 was cancelled during its hooks, so its model call is never made.
    assert len(model.requests) == 3


def test_a_summary_model_may_be_a_model_string(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    compaction = SummarizingCompaction("openai:gpt-4o-mini", keep_steps=2, trigger_steps=4)
    assert "gpt-4o-mini" in compaction.model.name
    assert compaction.keep_steps == 2 and compaction.trigger_steps == 4
    assert compaction.prompt == SUMMARY_PROMPT
    assert "gpt-4o-mini" in repr(compaction)


async def test_a_custom_prompt_gets_the_summary_and_steps_in_one_pass() -> None:
    summarizer = ScriptedModel(["S1", "S2"])
    prompt = 'JSON stays: {"a": 1}. Before: {summary}. New: {steps}. Literal {other}.'
    compaction = SummarizingCompaction(summarizer, keep_steps=0, trigger_steps=1, prompt=prompt)
    model = ScriptedModel(script("native", 4))
    await build("native", model, [compaction]).run(TASK)
    first, second = summary_prompts(summarizer)
    assert first.startswith('JSON stays: {"a": 1}. Before: None yet')
    assert first.endswith("Literal {other}.")
    assert "{steps}" not in first and "### Step 1" in first
    assert "Before: S1. New: ### Step 3" in second


@pytest.mark.parametrize(
    ("keep", "trigger", "prompt", "message"),
    [
        (-1, 3, SUMMARY_PROMPT, "keep_steps must be 0 or more"),
        (3, 2, SUMMARY_PROMPT, "trigger_steps must be at least keep_steps"),
        (0, 0, SUMMARY_PROMPT, "trigger_steps must be at least keep_steps and at least 1"),
        (1, 2, "Summarise {summary}.", "must have {steps} in it"),
    ],
)
def test_bad_settings_are_refused(keep: int, trigger: int, prompt: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        SummarizingCompaction(
            ScriptedModel([]), keep_steps=keep, trigger_steps=trigger, prompt=prompt
        )
