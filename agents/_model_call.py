"""`call_model`: the model call of one step.

Whole or streamed, raced against the run's deadline and cancellation (`drain`); media a
model cannot take is replaced by a note and the call made once more; a failure ends the
run with ``RunStop("error")`` and a log record, never an exception out of ``run``. A
stream's pieces become run events as they arrive, through the extensions' text filters.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Generic, NoReturn, TypeVar, cast

from agents._extensions import feed, flush
from agents._race import Inbox, drain, race
from agents._step_log import log, log_model_failed
from agents._step_state import Done, RunStop, StepCall
from agents.events import AfterModelCall, BeforeModelCall, ModelTextDelta, RunEvent
from agents.models import (
    Message,
    Model,
    ModelError,
    ModelResponse,
    TextDelta,
    ToolCallDelta,
    UnsupportedContentError,
)
from agents.models._types import RemoteModel
from toolchain import ExecutionContext, TextContent, TextFilter
from toolchain.runtime import StepRunner, current_step_runner, describe_exception, redact

__all__ = ["Streaming", "call_model", "model_reply"]

AnswerT = TypeVar("AnswerT")

StreamEvents = Callable[[TextDelta | ToolCallDelta], Iterable[RunEvent[AnswerT]]]


@dataclass(frozen=True, slots=True)
class Streaming(Generic[AnswerT]):
    """How a streamed reply becomes run events: the agent's reader of one step's pieces
    (``events(index)``) and fresh text filters for one reply (``filters(ctx)``)."""

    events: Callable[[int], StreamEvents[AnswerT]]
    filters: Callable[[ExecutionContext], list[TextFilter]]


async def call_model(
    ctx: ExecutionContext,
    index: int,
    call: StepCall,
    conversation: list[Message],
    deadline: float | None,
    streaming: Streaming[AnswerT],
) -> AsyncGenerator[RunEvent[AnswerT] | Done[ModelResponse], None]:
    """Call the model of ``call``, yielding its stream's events, then ``Done(response)``.

    ``conversation`` is the run's own record: media replaced in the call's messages is
    replaced there too, so later steps do not send it again.
    """
    started = _before(ctx, index, call)
    queue: Inbox[RunEvent[AnswerT]] = Inbox()
    response: ModelResponse | None = None
    try:
        for retry in (False, True):
            work = _work(ctx, index, call, queue, streaming)
            try:
                draining = drain(work, queue, ctx, deadline, race_cancel=True)
                async with contextlib.aclosing(draining) as items:
                    async for item in items:
                        if isinstance(item, Done):
                            response = item.value
                        else:
                            yield item
                break
            except UnsupportedContentError as error:
                if retry or not _without_media(call, conversation, error):
                    raise
    except Exception as error:
        _stop_run(ctx, index, call.model, error)
    yield Done(_after(ctx, index, call.model, response, started))


async def model_reply(
    ctx: ExecutionContext,
    index: int,
    call: StepCall,
    conversation: list[Message],
    deadline: float | None,
) -> ModelResponse:
    """`call_model` for a run that is not streamed: the response, with no events, so
    awaited rather than iterated (a generator per step costs more than an instant
    model's call)."""
    started = _before(ctx, index, call)
    response: ModelResponse | None = None
    try:
        for retry in (False, True):
            try:
                response = await race(_work(ctx, index, call, None, None), ctx, deadline)
                break
            except UnsupportedContentError as error:
                if retry or not _without_media(call, conversation, error):
                    raise
    except Exception as error:
        _stop_run(ctx, index, call.model, error)
    return _after(ctx, index, call.model, response, started)


def _before(ctx: ExecutionContext, index: int, call: StepCall) -> float:
    """Tell ``BeforeModelCall`` observers; the call's start on the clock."""
    if ctx.events.has_subscribers(BeforeModelCall):  # the messages are copied for it
        model = call.model
        url = _base_url(model)
        ctx.events.emit(BeforeModelCall(ctx, index, model.name, tuple(call.messages), url))
    return time.perf_counter()


def _work(
    ctx: ExecutionContext,
    index: int,
    call: StepCall,
    queue: Inbox[RunEvent[AnswerT]] | None,
    streaming: Streaming[AnswerT] | None,
) -> Awaitable[ModelResponse]:
    """One attempt at the call: the model's own (streamed into ``queue``, or whole),
    or, in a durable run, a step (a replay reads the recorded response)."""
    runner = current_step_runner()
    start: Callable[[], Awaitable[ModelResponse]]
    if streaming is None or queue is None:
        if runner is None:  # the common case: made at once, no callable to make it later
            return call.model.generate(call.messages, call.options)
        start = functools.partial(call.model.generate, call.messages, call.options)
    else:
        start = functools.partial(_consume_stream, ctx, index, call, queue, streaming)
    return start() if runner is None else _step(runner, index, call.model.name, start)


def _without_media(call: StepCall, conversation: list[Message], error: Exception) -> bool:
    """A tool returned media this model cannot take: show it as a note, to ask once
    more rather than end the run over an attachment. False when there was none."""
    note = f"not shown: {call.model.name} cannot take it"
    if not _replace_media(call.messages, note):
        return False
    if call.messages is not conversation:
        _replace_media(conversation, note)
    log.warning("media dropped from the conversation: %s", error)
    return True


def _stop_run(ctx: ExecutionContext, index: int, model: Model, error: Exception) -> NoReturn:
    """A failed model call ends the run: what failed is raised as a ``RunStop``."""
    stop = _failed(ctx, index, model, error)
    if stop is error:
        raise error
    raise stop from error


def _failed(ctx: ExecutionContext, index: int, model: Model, error: Exception) -> Exception:
    """How a failed model call ends the run (logged): ``RunStop("error")``, or the
    ``RunStop`` that stopped it (the deadline, cancellation) itself."""
    if isinstance(error, RunStop):
        if error.kind == "limit":  # the run's deadline passed while the model wrote
            why = "it did not answer before the run's time limit"
            log_model_failed(ctx, index, model.name, "timeout", why)
        return error
    if isinstance(error, ModelError):
        status = getattr(error, "status_code", None)
        log_model_failed(ctx, index, model.name, type(error).__name__, str(error), status)
        return RunStop("error", f"model call failed: {error}")
    # A model that breaks its protocol: end, keep the run.
    detail = redact(describe_exception(error))
    kind = type(error).__name__
    log_model_failed(ctx, index, model.name, kind, f"it raised {detail}", error=error)
    return RunStop("error", f"model call failed: {detail}")


def _after(
    ctx: ExecutionContext,
    index: int,
    model: Model,
    response: ModelResponse | None,
    started: float,
) -> ModelResponse:
    """The response, counted and told to ``AfterModelCall`` observers; a call that
    returned none ends the run."""
    if response is None:
        log_model_failed(ctx, index, model.name, "no_response", "it returned no response")
        raise RunStop("error", f"model call failed: {model.name} returned no response")
    usage = response.usage
    ctx.stats.count_model_call(usage.input_tokens, usage.output_tokens, usage.cached_input_tokens)
    if ctx.events.has_subscribers(AfterModelCall):
        duration = time.perf_counter() - started
        ctx.events.emit(AfterModelCall(ctx, index, model.name, response, duration))
    return response


_REMOTE: dict[type[object], bool] = {}
"""Whether each class of model is a `RemoteModel`, found once: an ``isinstance`` against
a runtime protocol looks up each of its members, some 20 µs a model call."""


def _base_url(model: Model) -> str:
    """Where ``model`` sends its calls, when it says (`RemoteModel`); else ``""``."""
    remote = _REMOTE.get(type(model))
    if remote is None:
        remote = _REMOTE[type(model)] = isinstance(model, RemoteModel)
    return cast("RemoteModel", model).base_url if remote else ""


def _step(
    runner: StepRunner, index: int, name: str, start: Callable[[], Awaitable[ModelResponse]]
) -> Awaitable[ModelResponse]:
    """The model call ``start()`` as a step of a durable run, made again on passing failures."""
    return runner.step(f"model:{name}", lambda: _retrying(runner, index, name, start))


async def _retrying(
    runner: StepRunner, index: int, name: str, start: Callable[[], Awaitable[ModelResponse]]
) -> ModelResponse:
    """``start()``, made again while it fails for a passing reason (a durable run's model
    call): the runner says how long to wait, or to give up. Inside the step, so only the
    answer that worked, or the last failure, is recorded; a crash while waiting makes
    the call again on recovery. The wait races the run's deadline like the call does.
    A stream that failed part-way is streamed again from its start."""
    attempt = 1
    while True:
        try:
            return await start()
        except Exception as error:
            delay = runner.retry_delay(error, attempt)
            if delay is None:
                if attempt > 1:
                    log.warning(
                        "model call of step %d to %s failed %d times; giving up: %s",
                        index,
                        name,
                        attempt,
                        redact(describe_exception(error)),
                    )
                raise
            log.warning(
                "model call of step %d to %s failed (attempt %d): %s; trying again in %.1f s",
                index,
                name,
                attempt,
                redact(describe_exception(error)),
                delay,
            )
        await asyncio.sleep(delay)
        attempt += 1


async def _consume_stream(
    ctx: ExecutionContext,
    index: int,
    call: StepCall,
    queue: Inbox[RunEvent[AnswerT]],
    streaming: Streaming[AnswerT],
) -> ModelResponse:
    """Read the model's stream into ``queue`` as run events; the final response."""
    model = call.model
    events = streaming.events(index)
    filters = streaming.filters(ctx)
    final: ModelResponse | None = None
    section: str | None = None
    async for item in model.stream(call.messages, call.options):
        if isinstance(item, ModelResponse):
            final = item
        else:
            for event in events(item):
                if filters and isinstance(event, ModelTextDelta):
                    section = event.section
                    event = dataclasses.replace(event, text=feed(filters, event.text))
                    if not event.text:
                        continue  # held back: maybe the start of a reference
                queue.put_nowait(event)
    if filters and (rest := flush(filters)):
        queue.put_nowait(ModelTextDelta(index, section, rest))
    if final is None:
        raise ModelError(f"{model.name}: the stream ended without a final response")
    return final


def _replace_media(messages: list[Message], note: str) -> bool:
    """Swap every media part for a text note; True when anything was replaced."""
    replaced = False
    for position, message in enumerate(messages):
        if all(isinstance(part, TextContent) for part in message.content):
            continue
        parts = tuple(
            part if isinstance(part, TextContent) else TextContent(f"[{part.describe()}: {note}]")
            for part in message.content
        )
        messages[position] = Message(
            message.role, parts, message.tool_calls, message.tool_call_id, message.name
        )
        replaced = True
    return replaced
