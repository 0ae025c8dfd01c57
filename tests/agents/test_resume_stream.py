"""``agent.resume_stream``: a run paused on held calls goes on as a stream of the same
typed events ``stream`` yields (the decided calls, the model's text in pieces, the
later steps' calls, ``RunFinished`` last), for both agents, on a scripted model and on
an OpenAI-compatible server on loopback; its decisions are checked at the call, its
paused run taken when it is first advanced, and closing it early cancels the run (the
suite's leak guard fails a test that leaves a task behind)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any, cast

import pytest

from agents import ResumeError, ToolCallingAgent
from agents.events import (
    AnswerReady,
    ModelTextDelta,
    ObservationReady,
    RunEvent,
    RunFinished,
    ToolCallFinished,
    ToolCallStarted,
)
from agents.models import OpenAIChatModel, ScriptedModel, ScriptedReply, ToolCallRequest
from tests.support.agent_kinds import KINDS, Kind, Output, agent, answer, call, chain_for
from tests.support.chat_script import calls, chat_script
from tests.support.loopback import LoopbackServer
from toolchain import Approval, tool

# A call closed by the collector instead of cancelled says so only as an unraisable
# exception: here it fails the test.
pytestmark = pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")

RAN: list[str] = []


@tool(requires_approval=True)
def wipe(disk: str) -> str:
    """Erase a disk."""
    RAN.append(f"wipe {disk}")
    return f"{disk} erased"


@tool
def lookup(disk: str) -> str:
    """Look a disk up."""
    RAN.append(f"lookup {disk}")
    return f"{disk}: 512 GB"


def _made(kind: Kind, *outputs: Any) -> tuple[Any, ScriptedModel]:
    RAN.clear()
    model = ScriptedModel(list(outputs), chunk_size=3)
    return agent(kind, model, chain_for(kind, wipe, lookup)), model


async def _all(events: AsyncIterator[RunEvent[Any]]) -> list[RunEvent[Any]]:
    return [event async for event in events]


def _both(kind: Kind) -> Output:
    """One step calling ``wipe`` on sda and sdb (one action, or one native turn)."""
    if kind == "native":
        return ScriptedReply(
            tool_calls=(
                ToolCallRequest("c1", "wipe", '{"disk": "sda"}'),
                ToolCallRequest("c2", "wipe", '{"disk": "sdb"}'),
            )
        )
    body = '[{"tool": "wipe", "args": {"disk": "sda"}}, {"tool": "wipe", "args": {"disk": "sdb"}}]'
    return f"<action>{body}</action>"


def _answer_pieces(kind: Kind, events: list[RunEvent[Any]]) -> list[str]:
    section = None if kind == "native" else "answer"
    return [e.text for e in events if isinstance(e, ModelTextDelta) and e.section == section]


@KINDS
async def test_a_resumed_run_streams_its_calls_and_text_as_they_happen(kind: Kind) -> None:
    runner, model = _made(
        kind,
        call(kind, "wipe", disk="sdb"),
        call(kind, "lookup", disk="sdb"),
        answer(kind, "sdb is erased and free"),
    )
    paused = await runner.run("Erase sdb")
    [held] = paused.pending
    assert RAN == []

    events = await _all(runner.resume_stream(paused, {held.call_id: held.approve()}))

    kinds = [type(event).__name__ for event in events]
    # The decided call, its observation, then the next step's call, then the answer.
    first_text = kinds.index("ModelTextDelta")
    assert kinds[:3] == ["ToolCallStarted", "ToolCallFinished", "ObservationReady"]
    assert kinds[first_text - 3 : first_text] == [
        "ToolCallStarted",
        "ToolCallFinished",
        "ObservationReady",
    ]
    assert kinds[-2:] == ["AnswerReady", "RunFinished"]
    started = [(e.id, e.name, dict(e.args)) for e in events if isinstance(e, ToolCallStarted)]
    assert started[0] == (held.call_id, "wipe", {"disk": "sdb"})
    assert started[1][1:] == ("lookup", {"disk": "sdb"})
    finished = [e for e in events if isinstance(e, ToolCallFinished)]
    assert [f.result.text if f.result else None for f in finished] == [
        "sdb erased",
        "sdb: 512 GB",
    ]
    pieces = _answer_pieces(kind, events)
    assert "".join(pieces) == "sdb is erased and free" and len(pieces) > 3
    final = events[-1]
    assert isinstance(final, RunFinished) and final.result.answer == "sdb is erased and free"
    assert isinstance(events[-2], AnswerReady)
    assert RAN == ["wipe sdb", "lookup sdb"]  # each once
    assert len(model.requests) == 3  # the model was not asked to make the call again


@KINDS
async def test_resume_and_resume_stream_end_with_the_same_result(kind: Kind) -> None:
    script = (call(kind, "wipe", disk="sdb"), answer(kind, "sdb is erased"))
    whole, _ = _made(kind, *script)
    paused = await whole.run("Erase sdb")
    done = await whole.resume(paused, {paused.pending[0].call_id: Approval.granted()})

    streamed, _ = _made(kind, *script)
    paused = await streamed.run("Erase sdb")
    events = await _all(
        streamed.resume_stream(paused, {paused.pending[0].call_id: Approval.granted()})
    )
    final = events[-1]
    assert isinstance(final, RunFinished)
    assert (final.result.answer, final.result.stopped_by) == (done.answer, done.stopped_by)
    assert [m.text_content() for m in final.result.messages] == [
        m.text_content() for m in done.messages
    ]
    assert final.result.stats["model_calls"] == done.stats["model_calls"] == 2


@KINDS
async def test_a_denied_call_streams_its_denial_and_the_run_goes_on(kind: Kind) -> None:
    runner, model = _made(kind, call(kind, "wipe", disk="sdb"), answer(kind, "kept sdb"))
    paused = await runner.run("Erase sdb")
    [held] = paused.pending

    events = await _all(
        runner.resume_stream(paused, {held.call_id: Approval.denied("sdb holds the backups")})
    )

    [ended] = [e for e in events if isinstance(e, ToolCallFinished)]
    assert ended.id == held.call_id and ended.error is not None
    assert "sdb holds the backups" in ended.error.message
    observation = next(e for e in events if isinstance(e, ObservationReady))
    assert "sdb holds the backups" in observation.text
    assert "".join(_answer_pieces(kind, events)) == "kept sdb"
    assert RAN == [] and len(model.requests) == 2


@KINDS
async def test_a_call_left_undecided_streams_a_paused_result(kind: Kind) -> None:
    # Two held calls in one step; one decided, the other left waiting.
    runner, model = _made(kind, _both(kind), answer(kind, "both erased"))
    paused = await runner.run("Erase sda and sdb")
    first, second = paused.pending

    events = await _all(runner.resume_stream(paused, {second.call_id: second.approve()}))

    final = events[-1]
    assert isinstance(final, RunFinished) and final.result.stopped_by == "paused"
    assert [p.call_id for p in final.result.pending] == [first.call_id]
    assert not any(isinstance(e, ModelTextDelta) for e in events)  # no model call
    assert RAN == ["wipe sdb"] and len(model.requests) == 1

    rest = await _all(runner.resume_stream(final.result, {first.call_id: first.approve()}))
    assert "".join(_answer_pieces(kind, rest)) == "both erased"
    assert RAN == ["wipe sdb", "wipe sda"]


@KINDS
async def test_a_refused_decision_raises_at_the_call_and_approves_nothing(kind: Kind) -> None:
    runner, model = _made(kind, call(kind, "wipe", disk="sdb"), answer(kind, "sdb is erased"))
    paused = await runner.run("Erase sdb")
    [held] = paused.pending

    with pytest.raises(ResumeError) as refused:
        runner.resume_stream(paused, {"call_9": Approval.granted()})
    assert "call_9: no call with this id is held" in str(refused.value)
    with pytest.raises(ResumeError, match="nothing was approved"):
        runner.resume_stream(paused, {held.call_id: cast(Any, {"approved": True})})
    assert RAN == [] and len(model.requests) == 1

    # Still paused: a proper decision resumes it.
    events = await _all(runner.resume_stream(paused, {held.call_id: held.approve()}))
    assert RAN == ["wipe sdb"] and isinstance(events[-1], RunFinished)


async def test_the_run_is_taken_when_the_stream_is_first_advanced() -> None:
    runner, _ = _made("react", call("react", "wipe", disk="sdb"), answer("react", "erased"))
    paused = await runner.run("Erase sdb")
    decisions = {paused.pending[0].call_id: Approval.granted()}

    never = runner.resume_stream(paused, decisions)  # never advanced: the run stays paused
    late = cast(AsyncGenerator[RunEvent[Any], None], runner.resume_stream(paused, decisions))
    done = await runner.resume(paused, decisions)
    assert done.answer == "erased" and RAN == ["wipe sdb"]

    with pytest.raises(ResumeError, match="resumed already"):
        await anext(late)
    await cast(AsyncGenerator[RunEvent[Any], None], never).aclose()
    assert RAN == ["wipe sdb"]  # once


@KINDS
@pytest.mark.parametrize("how", ["resume_stream", "stream"])
async def test_closing_the_stream_early_ends_the_run_at_once(kind: Kind, how: str) -> None:
    """Closed as soon as the call starts (no loop turn between): the call is cancelled
    before ``aclose`` returns, not left to the collector; no task is left (the leak
    guard checks) and the model is not called again."""
    entered = asyncio.Event()
    seen: list[str] = []

    @tool(requires_approval=how == "resume_stream")
    async def hang(disk: str) -> str:
        """Wait until the run ends."""
        entered.set()
        try:
            await asyncio.Event().wait()
        except BaseException as error:
            seen.append(type(error).__name__)  # cancelled, not closed by the collector
            raise
        return disk

    model = ScriptedModel([call(kind, "hang", disk="sdb"), answer(kind, "never")])
    runner = agent(kind, model, chain_for(kind, hang))
    if how == "stream":
        stream = runner.stream("Erase sdb")
    else:
        paused = await runner.run("Erase sdb")
        [held] = paused.pending
        stream = runner.resume_stream(paused, {held.call_id: held.approve()})
    async with contextlib.aclosing(cast(AsyncGenerator[RunEvent[Any], None], stream)) as events:
        async for event in events:
            if isinstance(event, ToolCallStarted):
                await entered.wait()  # set already: no loop turn
                break
        assert seen == []

    assert seen == ["CancelledError"]
    assert len(model.requests) == 1


def test_a_native_run_on_an_openai_compatible_server_streams_after_resume(
    loopback: LoopbackServer,
) -> None:
    RAN.clear()
    loopback.respond_with(
        chat_script([calls(("wipe", {"disk": "sdb"})), "sdb is erased, as you asked."])
    )
    model = OpenAIChatModel("gpt-test", api_key="k", base_url=loopback.openai_base_url)
    runner = ToolCallingAgent(model, tools=[wipe])
    paused = runner.run_sync("Erase sdb")
    [held] = paused.pending

    async def resumed() -> list[RunEvent[Any]]:
        return await _all(runner.resume_stream(paused, {held.call_id: held.approve()}))

    events = asyncio.run(resumed())

    assert loopback.requests[-1].json()["stream"] is True
    pieces = _answer_pieces("native", events)
    assert "".join(pieces) == "sdb is erased, as you asked." and len(pieces) > 1
    kinds = [type(event).__name__ for event in events]
    assert kinds.index("ToolCallFinished") < kinds.index("ModelTextDelta")
    assert RAN == ["wipe sdb"] and len(loopback.requests) == 2
