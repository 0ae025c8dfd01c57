"""Compaction: step hooks that keep a long run's model calls small.

A run keeps its whole conversation (``AgentResult.messages``); these hooks change only
what each model call is sent (see `agents.steps`). They count the run's *steps*: each
step starts with an assistant message and goes on with what answers it (tool messages,
an observation, feedback), so they cut only just before an assistant message and a
call is never sent without its result. The messages before and including the task
(an earlier conversation continued with ``history=``) are always sent whole.

What was left out is said in a text part added to a copy of the task message, so the
roles of the messages sent still alternate as every provider requires.

- `SlidingWindow` sends only the last ``max_steps`` steps, with a note of how many
  earlier ones were left out.
- `SummarizingCompaction` condenses the older steps into a summary (one model call),
  kept in ``ctx.state`` and reused, and summarises again only when enough new steps
  have piled up.

Both are step hooks: pass them in ``step_hooks=[...]``.

>>> from agents import ToolCallingAgent, ScriptedModel
>>> from toolchain import JSONToolChain, tool
>>> @tool
... def add(a: int, b: int) -> int:
...     '''Add two integers.'''
...     return a + b
>>> model = ScriptedModel([ScriptedModel.call("add", a=n, b=1) for n in range(4)] + ["Done."])
>>> chain = JSONToolChain().register_tool(add)
>>> agent = ToolCallingAgent(model, tool_chain=chain, step_hooks=[SlidingWindow(2)])
>>> agent.run_sync("Add one to 0, 1, 2 and 3.").answer
'Done.'
>>> [message.role for message in model.requests[-1].messages]
['system', 'user', 'assistant', 'tool', 'assistant', 'tool']
>>> model.requests[-1].messages[1].text_content()
'Add one to 0, 1, 2 and 3.\\n\\n[2 earlier steps were left out to save space]'
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import re
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass

from agents._errors import AgentStateError, AgentValueError
from agents.models import GenerateOptions, Message, Model, ModelResponse, resolve_model
from agents.steps import StepRequest
from toolchain import ExecutionContext, StateKey, TextContent
from toolchain.runtime import current_step_runner as current_runner
from toolchain.runtime import describe_exception, logger, redact

__all__ = ["SUMMARY_PROMPT", "SlidingWindow", "SummarizingCompaction"]

_log = logger("agents")
_CANCEL_GRACE = 1.0

SUMMARY_PROMPT = """\
You condense the working notes of an AI agent so that it can go on with its task.

## The summary so far

{summary}

## Steps to add to it

{steps}

## Instructions

Write an updated summary covering the summary so far and the steps above. Keep:
1. what was found out, with the exact values (numbers, names, ids, paths, quotes);
2. what was decided, and what was done (which tools were called, with what result);
3. errors met and how they were dealt with;
4. what is still left to do.
Be concise, but drop nothing the agent may need. Write only the summary."""
"""The default prompt of `SummarizingCompaction`: ``{summary}`` is the summary so far
(or a line saying there is none), ``{steps}`` the steps to add to it, as text."""

_PLACEHOLDER = re.compile(r"\{(summary|steps)\}")
_NO_SUMMARY = "None yet: this is the first summary."


@dataclass(frozen=True, slots=True)
class SlidingWindow:
    """A step hook sending only the last ``max_steps`` steps of the run.

    The earlier conversation and the task are always sent; a note added to the
    task message says how many steps were left out. Nothing changes while the run
    has ``max_steps`` steps or fewer.

    >>> from agents import GenerateOptions, Message, ScriptedModel, StepRequest
    >>> from toolchain import ExecutionContext
    >>> task = Message.text("user", "Count to three.")
    >>> steps = [
    ...     Message.text(role, f"{verb} {n}")
    ...     for n in (1, 2, 3)
    ...     for role, verb in (("assistant", "say"), ("user", "said"))
    ... ]
    >>> request = StepRequest(4, "Be brief.", (task, *steps), (), ScriptedModel([]),
    ...                       GenerateOptions())
    >>> sent = SlidingWindow(max_steps=1)(ExecutionContext(), request)
    >>> [message.text_content() for message in sent.messages]
    ['Count to three.\\n\\n[2 earlier steps were left out to save space]', 'say 3', 'said 3']
    >>> SlidingWindow(max_steps=3)(ExecutionContext(), request) is None
    True
    """

    max_steps: int
    """How many of the latest steps are sent (at least 1)."""

    def __post_init__(self) -> None:
        if self.max_steps < 1:
            raise AgentValueError(f"max_steps must be at least 1, got {self.max_steps}")

    def __call__(self, ctx: ExecutionContext, step: StepRequest) -> StepRequest | None:
        starts = _step_starts(step)
        if starts is None or len(starts) <= self.max_steps:
            return None
        dropped = len(starts) - self.max_steps
        return _compact(step, starts, dropped, _left_out(dropped))


@dataclass(frozen=True, slots=True)
class _Summary:
    """A summary of a run's first ``steps`` steps, as kept in ``ctx.state``."""

    text: str
    steps: int
    prefix: tuple[Message, ...]
    """The messages it was made from, up to the first step it left out of it: a later
    step uses it only while its conversation still starts with them (a context reused
    for another run, or another hook's changes, make it stale)."""


class SummarizingCompaction:
    """A step hook replacing the run's older steps with a model-written summary.

    While the run has at most ``trigger_steps`` steps nothing changes. Past that, one
    call to ``model`` condenses every step but the last ``keep_steps`` into a summary,
    which is sent in a copy of the task message in their place. The summary (and how
    many steps it covers) is kept in ``ctx.state`` and reused by the next steps; once
    more than ``trigger_steps`` steps have piled up after it, the summary and those
    steps (again all but the last ``keep_steps``) are condensed into a new one. So a
    call sends the summary and between ``keep_steps`` and ``trigger_steps`` whole
    steps, and the summary model is called once every ``trigger_steps - keep_steps +
    1`` steps at most, not at every step.

    ``model`` may be a ``Model`` or a model string (see `agents.models.resolve_model`);
    a small, cheap model usually does. ``prompt`` has ``{summary}`` (the summary so
    far) and ``{steps}`` (the steps to add, as text; media shown by description) in it;
    the default is `SUMMARY_PROMPT`. ``options`` are the summary call's settings.

    The summary call's tokens are added to ``ctx.stats`` (``Stats.INPUT_TOKENS``,
    ``Stats.OUTPUT_TOKENS``, and ``Stats.MODEL_CALLS``), so the run's token limits
    count them; ``AgentResult.usage`` counts the agent's own calls only. If the call
    fails (any error, or an empty summary), a warning is logged on the ``agents``
    logger and that step falls back to a sliding window of ``keep_steps`` steps (with
    the previous summary, if there is one); the next step tries again.

    >>> import asyncio
    >>> from agents import GenerateOptions, Message, ScriptedModel, StepRequest
    >>> from toolchain import ExecutionContext
    >>> summarizer = ScriptedModel(["Steps 1-2 said 1 and 2."])
    >>> compaction = SummarizingCompaction(summarizer, keep_steps=1, trigger_steps=2)
    >>> task = Message.text("user", "Count to three.")
    >>> steps = [
    ...     Message.text(role, f"{verb} {n}")
    ...     for n in (1, 2, 3)
    ...     for role, verb in (("assistant", "say"), ("user", "said"))
    ... ]
    >>> request = StepRequest(4, "Be brief.", (task, *steps), (), ScriptedModel([]),
    ...                       GenerateOptions())
    >>> ctx = ExecutionContext()
    >>> sent = asyncio.run(compaction(ctx, request))
    >>> print(sent.messages[0].text_content())
    Count to three.
    <BLANKLINE>
    [Steps 1 to 2 of this run were left out to save space. A summary of them:]
    Steps 1-2 said 1 and 2.
    >>> [message.text_content() for message in sent.messages[1:]]
    ['say 3', 'said 3']
    >>> again = asyncio.run(compaction(ctx, request))  # the stored summary is reused
    >>> again == sent, len(summarizer.requests)
    (True, 1)
    """

    __slots__ = ("_keep_steps", "_key", "_model", "_options", "_prompt", "_trigger_steps")

    def __init__(
        self,
        model: Model | str,
        *,
        keep_steps: int,
        trigger_steps: int,
        prompt: str = SUMMARY_PROMPT,
        options: GenerateOptions | None = None,
    ) -> None:
        if keep_steps < 0:
            raise AgentValueError(f"keep_steps must be 0 or more, got {keep_steps}")
        if trigger_steps < max(keep_steps, 1):
            raise AgentValueError(
                f"trigger_steps must be at least keep_steps and at least 1, got "
                f"trigger_steps={trigger_steps}, keep_steps={keep_steps}"
            )
        if "{steps}" not in prompt:
            raise AgentValueError("the prompt must have {steps} in it: where the steps go")
        self._model = resolve_model(model)
        self._keep_steps = keep_steps
        self._trigger_steps = trigger_steps
        self._prompt = prompt
        self._options = options if options is not None else GenerateOptions()
        self._key = StateKey[_Summary]("agents.compaction.summary")  # one per compaction

    @property
    def model(self) -> Model:
        """The model that writes the summaries."""
        return self._model

    @property
    def keep_steps(self) -> int:
        """How many of the latest steps a new summary leaves whole."""
        return self._keep_steps

    @property
    def trigger_steps(self) -> int:
        """The most whole steps sent; past it, they are summarised."""
        return self._trigger_steps

    @property
    def prompt(self) -> str:
        """The summary call's prompt, with ``{summary}`` and ``{steps}`` in it."""
        return self._prompt

    @property
    def options(self) -> GenerateOptions:
        """The summary call's settings."""
        return self._options

    def __repr__(self) -> str:
        return (
            f"SummarizingCompaction({self._model.name!r}, keep_steps={self._keep_steps}, "
            f"trigger_steps={self._trigger_steps})"
        )

    async def __call__(self, ctx: ExecutionContext, step: StepRequest) -> StepRequest | None:
        starts = _step_starts(step)
        if starts is None:
            return None
        previous = self._stored(ctx, step)
        covered = previous.steps if previous is not None else 0
        if len(starts) - covered <= self._trigger_steps:
            if previous is None:
                return None
            return _compact(step, starts, covered, _summary_note(previous))
        upto = len(starts) - self._keep_steps
        summary = await self._summarize(ctx, step, starts, previous, upto)
        if summary is None:  # the call failed: a window for this step, retried next step
            note = _left_out(upto - covered)
            if previous is not None:
                note = f"{_summary_note(previous)}\n\n{_left_out(upto - covered, later=True)}"
            return _compact(step, starts, upto, note)
        ctx.state.set(self._key, summary)
        return _compact(step, starts, upto, _summary_note(summary))

    def _stored(self, ctx: ExecutionContext, step: StepRequest) -> _Summary | None:
        """This run's summary so far, if there is one and it still fits the conversation."""
        summary = ctx.state.get(self._key)
        if summary is None:
            return None
        if step.messages[: len(summary.prefix)] != summary.prefix:
            return None
        return summary

    async def _summarize(
        self,
        ctx: ExecutionContext,
        step: StepRequest,
        starts: Sequence[int],
        previous: _Summary | None,
        upto: int,
    ) -> _Summary | None:
        """A summary of the first ``upto`` steps, or None (logged) if the call failed."""
        covered = previous.steps if previous is not None else 0
        messages = step.messages
        cut = starts[upto] if upto < len(starts) else len(messages)
        values = {
            "summary": previous.text if previous is not None else _NO_SUMMARY,
            "steps": _render_steps(messages, starts[covered:upto], cut, covered + 1),
        }
        text = _PLACEHOLDER.sub(lambda match: values[match.group(1)], self._prompt)
        try:
            response = await self._generate(ctx, [Message.text("user", text)])
            usage = response.usage
            ctx.stats.count_model_call(
                usage.input_tokens, usage.output_tokens, usage.cached_input_tokens
            )
            summary = response.text.strip()
            if not summary:
                raise AgentValueError("the model returned an empty summary")
        except Exception as error:
            _log.warning(
                "compaction: summarising steps %d to %d with %s failed (%s); "
                "a sliding window is used for this step",
                covered + 1,
                upto,
                self._model.name,
                redact(describe_exception(error)),
            )
            return None
        return _Summary(summary, upto, messages[:cut])

    async def _generate(self, ctx: ExecutionContext, messages: list[Message]) -> ModelResponse:
        """The summary call, given up on if the run is cancelled meanwhile."""
        if ctx.cancelled:
            raise AgentStateError(f"the run was cancelled: {ctx.cancel_reason}")
        model, options = self._model, self._options

        def summarize() -> Awaitable[ModelResponse]:
            return model.generate(messages, options)

        # In a durable run the summary is a step too: a replay reads the recorded one.
        runner = current_runner()
        made = summarize() if runner is None else runner.step(f"summary:{model.name}", summarize)
        work = asyncio.ensure_future(made)
        cancelled = asyncio.ensure_future(ctx.wait_cancelled())
        try:
            await asyncio.wait({work, cancelled}, return_when=asyncio.FIRST_COMPLETED)
            if work.done():
                return work.result()
            raise AgentStateError(f"the run was cancelled: {ctx.cancel_reason}")
        finally:
            cancelled.cancel()
            work.cancel()  # a no-op once it is done
            # A cancelled task ends at its next step: let both end here, not after the
            # run (bounded, for a model call that ignores its cancellation).
            await asyncio.wait({cancelled, work}, timeout=_CANCEL_GRACE)


def _step_starts(step: StepRequest) -> list[int] | None:
    """Where each of the run's steps starts in ``step.messages``, oldest first.

    None if ``task_index`` does not point into the messages (nothing to compact then).
    """
    messages = step.messages
    if not 0 <= step.task_index < len(messages):
        return None
    return [
        index
        for index in range(step.task_index + 1, len(messages))
        if messages[index].role == "assistant"
    ]


def _compact(step: StepRequest, starts: Sequence[int], first_kept: int, note: str) -> StepRequest:
    """``step`` without steps ``[0, first_kept)``, and ``note`` added to its task message."""
    messages = step.messages
    cut = starts[first_kept] if first_kept < len(starts) else len(messages)
    head = list(messages[: starts[0]]) if starts else list(messages)
    task = head[step.task_index]
    head[step.task_index] = dataclasses.replace(
        task, content=(*task.content, TextContent(f"\n\n{note}"))
    )
    return dataclasses.replace(step, messages=(*head, *messages[cut:]))


def _left_out(count: int, *, later: bool = False) -> str:
    which = "later" if later else "earlier"
    if count == 1:
        return f"[1 {which} step was left out to save space]"
    return f"[{count} {which} steps were left out to save space]"


def _summary_note(summary: _Summary) -> str:
    steps = "Step 1" if summary.steps == 1 else f"Steps 1 to {summary.steps}"
    verb = "was" if summary.steps == 1 else "were"
    what = "it" if summary.steps == 1 else "them"
    return f"[{steps} of this run {verb} left out to save space. A summary of {what}:]\n" + (
        summary.text
    )


def _render_steps(
    messages: Sequence[Message], starts: Sequence[int], end: int, first_number: int
) -> str:
    """Steps as text for the summary prompt: each step's messages, labelled."""
    blocks: list[str] = []
    bounds = [*starts, end]
    for number, (start, stop) in enumerate(itertools.pairwise(bounds), first_number):
        lines = [f"### Step {number}"]
        lines.extend(_render_message(message) for message in messages[start:stop])
        blocks.append("\n\n".join(lines))
    return "\n\n".join(blocks)


def _render_message(message: Message) -> str:
    parts = [
        part.text if isinstance(part, TextContent) else f"[{part.describe()}]"
        for part in message.content
    ]
    parts.extend(f"(calls {call.name} with {call.arguments})" for call in message.tool_calls)
    if message.role == "tool":
        label = f"Result of {message.name or 'a tool'}"
    elif message.role == "assistant":
        label = "Agent"
    else:
        label = message.role.capitalize()
    return f"{label}:\n" + "\n".join(part for part in parts if part)
