"""Approvals in the core, the way a custom loop uses them: ``Tool.requires_approval``, a
chain's ``approve=``, held calls in ``pending``, ``chain.resume`` and the decisions it
refuses; and the loop controls beside them (``max_concurrency`` on a chain and on a
tool). Agents are tested in ``tests/agents/test_approvals.py``."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import pytest
from pydantic import BaseModel

from formats import XMLFormat
from toolchain import (
    Approval,
    ApprovalError,
    ApprovalRequest,
    CompositeTool,
    ExecutionContext,
    JSONToolChain,
    Tool,
    ToolCall,
    ToolCallFinished,
    ToolCallStarted,
    ToolChainResult,
    ToolDefinitionError,
    ToolHook,
    ToolResult,
    tool,
)

FMT = XMLFormat()


class Refunds:
    """A refund tool that needs approval above 100 EUR, and what it did."""

    def __init__(self) -> None:
        self.done: list[tuple[str, int]] = []

        @tool(requires_approval=lambda order: order.amount_eur > 100)
        def refund(order_id: str, amount_eur: int, note: str = "") -> str:
            """Refund an order."""
            self.done.append((order_id, amount_eur))
            return f"refunded {amount_eur} EUR on {order_id}"

        @tool
        def lookup(order_id: str) -> dict[str, object]:
            """Look an order up."""
            self.done.append(("lookup", 0))
            return {"order_id": order_id, "paid_eur": 500}

        self.refund, self.lookup = refund, lookup

    def chain(self, **options: Any) -> JSONToolChain:
        return JSONToolChain(**options).register_tool(self.refund).register_tool(self.lookup)


def action(*calls: tuple[str, Mapping[str, object]]) -> str:
    return json.dumps([{"tool": name, "args": args} for name, args in calls])


def refund_of(order_id: str, amount: int) -> tuple[str, dict[str, object]]:
    return "refund", {"order_id": order_id, "amount_eur": amount}


# -- held, and resumed -----------------------------------------------------------------------


async def test_a_call_over_the_limit_is_held_while_the_others_of_its_action_run() -> None:
    shop = Refunds()
    ctx = ExecutionContext()
    ended: list[str] = []
    ctx.events.subscribe(ToolCallFinished, lambda event: ended.append(event.id))
    content = action(refund_of("A1", 20), refund_of("A2", 250), ("lookup", {"order_id": "A2"}))

    result = await shop.chain().execute(ctx, content, FMT)

    assert shop.done == [("A1", 20), ("lookup", 0)]  # the small refund needed no one
    [held] = result.pending
    assert (held.call_id, held.tool, held.via) == ("call_2", "refund", ())
    # The validated arguments, as plain data: the default filled in, as it would run.
    assert dict(held.args) == {"order_id": "A2", "amount_eur": 250, "note": ""}
    assert held.run_id == ctx.run_id and len(held.digest) == 64 and held.seal
    error = result.raw.errors[1]
    assert error is not None and error.kind == "held"
    assert error.message == "refund is waiting for a person's approval (call call_2)"
    assert result.raw.results[0] is not None and result.raw.results[2] is not None
    assert ended == ["call_1", "call_3"]  # a held call has not ended: it ends when decided


async def test_resuming_runs_the_held_call_once_with_the_reviewed_arguments() -> None:
    shop = Refunds()
    ctx, chain = ExecutionContext(), shop.chain()
    started: list[str] = []
    ctx.events.subscribe(ToolCallStarted, lambda event: started.append(event.id))
    held = await chain.execute(ctx, action(refund_of("A1", 20), refund_of("A2", 250)), FMT)
    # Whatever the caller does to the call after the pause, what was reviewed runs.
    assert held.raw.calls[1].args == {"order_id": "A2", "amount_eur": 250}

    done = await chain.resume(ctx, held, {"call_2": Approval.granted()}, FMT)

    assert shop.done == [("A1", 20), ("A2", 250)]
    assert done.pending == () and done.raw.ok
    assert done.raw.output(0, str) == "refunded 20 EUR on A1"  # kept from before the pause
    assert done.raw.output(1, str) == "refunded 250 EUR on A2"
    assert [o.id for o in done.observations] == ["call_1", "call_2"]
    assert started == ["call_1", "call_2"]
    assert "refunded 250 EUR on A2" in done.text and "waiting" not in done.text
    with pytest.raises(ApprovalError, match="decided already"):
        await chain.resume(ctx, held, {"call_2": Approval.granted()}, FMT)
    assert shop.done == [("A1", 20), ("A2", 250)]  # a decision approves once


async def test_a_denied_call_is_answered_with_its_reason() -> None:
    shop = Refunds()
    ctx, chain = ExecutionContext(), shop.chain()
    held = await chain.execute(ctx, action(refund_of("A2", 250)), FMT)

    done = await chain.resume(ctx, held, {"call_1": Approval.denied("over the agent's limit")}, FMT)

    assert shop.done == []
    error = done.raw.errors[0]
    assert error is not None and error.kind == "refused"
    assert error.message == "refund was not approved: over the agent's limit"
    assert "Error: refund was not approved: over the agent's limit" in done.text


async def test_three_held_calls_are_decided_one_by_one_in_reverse_order() -> None:
    shop = Refunds()
    ctx, chain = ExecutionContext(), shop.chain()
    content = action(refund_of("A", 200), refund_of("B", 300), refund_of("C", 400))
    result = await chain.execute(ctx, content, FMT)
    assert [r.call_id for r in result.pending] == ["call_1", "call_2", "call_3"]

    result = await chain.resume(ctx, result, {"call_3": Approval.granted()}, FMT)
    assert [r.call_id for r in result.pending] == ["call_1", "call_2"]
    result = await chain.resume(ctx, result, {"call_2": Approval.denied("B is disputed")}, FMT)
    assert [r.call_id for r in result.pending] == ["call_1"]
    result = await chain.resume(ctx, result, {"call_1": Approval.granted()}, FMT)

    assert result.pending == ()
    assert shop.done == [("C", 400), ("A", 200)]
    texts = {o.id: o.text for o in result.observations}
    assert texts == {
        "call_1": "refunded 200 EUR on A",
        "call_2": "Error: refund was not approved: B is disputed",
        "call_3": "refunded 400 EUR on C",
    }


# -- deciding in the run -------------------------------------------------------------------


def approver(
    answer: object, asked: list[ApprovalRequest]
) -> Callable[[ExecutionContext, ApprovalRequest], Any]:
    def approve(ctx: ExecutionContext, request: ApprovalRequest) -> Any:
        asked.append(request)
        return answer

    return approve


@pytest.mark.parametrize("is_async", [False, True])
async def test_the_chains_approver_decides_in_the_run(is_async: bool) -> None:
    shop = Refunds()
    asked: list[ApprovalRequest] = []

    async def grant(ctx: ExecutionContext, request: ApprovalRequest) -> Approval:
        asked.append(request)
        await asyncio.sleep(0)
        return Approval.granted()

    approve = grant if is_async else approver(Approval.granted(), asked)
    result = await shop.chain(approve=approve).execute(
        ExecutionContext(), action(refund_of("A1", 20), refund_of("A2", 250)), FMT
    )

    assert result.pending == () and result.raw.ok
    assert shop.done == [("A1", 20), ("A2", 250)]
    assert [(r.tool, dict(r.args)) for r in asked] == [
        ("refund", {"order_id": "A2", "amount_eur": 250, "note": ""})
    ]


async def test_an_approver_that_returns_none_holds_the_call() -> None:
    shop = Refunds()
    asked: list[ApprovalRequest] = []
    chain = shop.chain(approve=approver(None, asked))
    result = await chain.execute(ExecutionContext(), action(refund_of("A2", 250)), FMT)
    assert [r.call_id for r in result.pending] == ["call_1"] and len(asked) == 1
    assert shop.done == []


@pytest.mark.parametrize(
    ("answer", "logged"),
    [
        ({"approved": True}, "returned dict for refund, not an Approval or None"),
        ("yes", "returned str for refund, not an Approval or None"),
    ],
)
async def test_an_approver_answer_that_is_not_an_approval_approves_nothing(
    answer: object, logged: str, caplog: pytest.LogCaptureFixture
) -> None:
    shop = Refunds()
    chain = shop.chain(approve=approver(answer, []))
    with caplog.at_level(logging.ERROR, logger="toolchain"):
        result = await chain.execute(ExecutionContext(), action(refund_of("A2", 250)), FMT)
    assert shop.done == []
    error = result.raw.errors[0]
    assert error is not None and error.kind == "refused"
    assert error.message == "refund was not run: its approval could not be read"
    assert logged in caplog.text


async def test_an_approver_that_raises_refuses_the_call() -> None:
    def broken(ctx: ExecutionContext, request: ApprovalRequest) -> Approval:
        raise ConnectionError("the approvals service is down")

    shop = Refunds()
    result = await shop.chain(approve=broken).execute(
        ExecutionContext(), action(refund_of("A2", 250)), FMT
    )
    error = result.raw.errors[0]
    assert error is not None and error.kind == "refused"
    assert error.message.startswith("refund needs approval, and asking for it failed")
    assert shop.done == []


async def test_a_predicate_that_raises_holds_the_call(caplog: pytest.LogCaptureFixture) -> None:
    @tool(requires_approval=lambda order: 1 / 0)
    def cancel_order(order_id: str) -> str:
        """Cancel an order."""
        return "cancelled"

    chain = JSONToolChain().register_tool(cancel_order)
    with caplog.at_level(logging.WARNING, logger="toolchain"):
        result = await chain.execute(
            ExecutionContext(), '{"tool": "cancel_order", "args": {"order_id": "A1"}}', FMT
        )
    assert [r.tool for r in result.pending] == ["cancel_order"]  # fails closed
    assert "the requires_approval predicate of cancel_order raised" in caplog.text


async def test_a_call_whose_arguments_do_not_validate_fails_as_any_other_would() -> None:
    shop = Refunds()
    result = await shop.chain().execute(
        ExecutionContext(), '{"tool": "refund", "args": {"order_id": "A1"}}', FMT
    )
    error = result.raw.errors[0]
    assert error is not None and error.kind == "invalid_arguments" and result.pending == ()


class Wire(BaseModel):
    account: str
    amount: int


class WireTool(Tool[Wire, str]):
    name = "wire"
    description = "Wire money."
    requires_approval = True

    def call(self, ctx: ExecutionContext, input: Wire) -> ToolResult[str]:
        return ToolResult(f"wired {input.amount} to {input.account}")


async def test_requires_approval_set_on_a_tool_class() -> None:
    chain = JSONToolChain().register_tool(WireTool())
    ctx = ExecutionContext()
    result = await chain.execute(
        ctx, '{"tool": "wire", "args": {"account": "X", "amount": "7"}}', FMT
    )
    assert dict(result.pending[0].args) == {"account": "X", "amount": 7}  # validated
    done = await chain.resume(ctx, result, {"call_1": Approval.granted()}, FMT)
    assert done.raw.output(0, str) == "wired 7 to X"


def test_requires_approval_and_max_concurrency_are_checked_when_the_tool_is_made() -> None:
    with pytest.raises(ToolDefinitionError, match="requires_approval must be True, False or"):

        @tool(requires_approval="yes")  # type: ignore[call-overload, untyped-decorator]  # the mistake under test
        def nope() -> str:
            """Nothing."""
            return ""

    with pytest.raises(ToolDefinitionError, match="max_concurrency must be a positive int"):

        @tool(max_concurrency=0)
        def neither() -> str:
            """Nothing."""
            return ""


# -- the time limit waits for the person -------------------------------------------------


class SlowApprover:
    """Grants after ``wait`` seconds, as a person would (much longer than the timeout)."""

    def __init__(self, wait: float) -> None:
        self.wait = wait

    async def __call__(self, ctx: ExecutionContext, request: ApprovalRequest) -> Approval:
        await asyncio.sleep(self.wait)
        return Approval.granted()


@pytest.mark.parametrize("calls", [1, 3])
async def test_a_calls_time_limit_starts_after_its_approval(calls: int) -> None:
    """The chain's 0.1 s limit would cut a 0.3 s wait for a person; it counts from the
    decision, and still bounds the tool itself."""
    ran: list[int] = []

    @tool(requires_approval=True)
    async def deploy(n: int, seconds: float = 0.0) -> int:
        """Deploy a build."""
        await asyncio.sleep(seconds)
        ran.append(n)
        return n

    chain = JSONToolChain(timeout=0.1, approve=SlowApprover(0.3)).register_tool(deploy)
    content = action(*[("deploy", {"n": n}) for n in range(calls)])
    result = await chain.execute(ExecutionContext(), content, FMT)
    assert result.raw.ok, result.raw.errors
    assert sorted(ran) == list(range(calls))

    slow = action(*[("deploy", {"n": n, "seconds": 0.5}) for n in range(calls)])
    result = await chain.execute(ExecutionContext(), slow, FMT)
    kinds = [error.kind if error is not None else None for error in result.raw.errors]
    assert kinds == ["timeout"] * calls  # after the decision, the tool is timed as ever


# -- the decisions a resume refuses --------------------------------------------------------


async def _held_pair() -> tuple[Refunds, JSONToolChain, ExecutionContext, ToolChainResult]:
    shop = Refunds()
    chain, ctx = shop.chain(), ExecutionContext()
    held = await chain.execute(ctx, action(refund_of("A", 200), refund_of("B", 300)), FMT)
    return shop, chain, ctx, held


Mistake = Callable[[ToolChainResult], Awaitable[tuple[ToolChainResult, object, dict[str, str]]]]


async def _unknown_id(held: ToolChainResult) -> tuple[ToolChainResult, object, dict[str, str]]:
    decisions = {"call_1": Approval.granted(), "call_9": Approval.granted()}
    return held, decisions, {"call_9": "no call with this id is held (held: call_1, call_2)"}


async def _not_an_approval(
    held: ToolChainResult,
) -> tuple[ToolChainResult, object, dict[str, str]]:
    decisions = {"call_1": Approval.granted(), "call_2": {"approved": "false"}}
    why = "not an Approval but a dict: pass Approval.granted() or Approval.denied(reason)"
    return held, decisions, {"call_2": why}


async def _another_run(held: ToolChainResult) -> tuple[ToolChainResult, object, dict[str, str]]:
    other = await Refunds().chain().execute(ExecutionContext(), action(refund_of("A", 200)), FMT)
    bound = other.pending[0].approve()  # made for call_1 of the other run
    return held, {"call_1": bound}, {"call_1": "was made for a call of another run"}


async def _another_call(held: ToolChainResult) -> tuple[ToolChainResult, object, dict[str, str]]:
    bound = held.pending[1].approve()  # made for call_2, given for call_1
    return held, {"call_1": bound}, {"call_1": "was made for the call call_2, not this one"}


async def _edited_arguments(
    held: ToolChainResult,
) -> tuple[ToolChainResult, object, dict[str, str]]:
    request = held.pending[0]
    assert isinstance(request.args, dict)
    request.args["amount_eur"] = 9_000  # the args a person saw, changed after the pause
    why = "the held call was edited or forged: its seal does not match what was held"
    return held, {"call_1": Approval.granted()}, {"call_1": why}


async def _forged_request(
    held: ToolChainResult,
) -> tuple[ToolChainResult, object, dict[str, str]]:
    forged = dataclasses.replace(held.pending[0], tool="lookup")
    edited = dataclasses.replace(held, pending=(forged, held.pending[1]))
    why = "the held call was edited or forged: its seal does not match what was held"
    return edited, {"call_1": Approval.granted()}, {"call_1": why}


async def _bound_to_other_arguments(
    held: ToolChainResult,
) -> tuple[ToolChainResult, object, dict[str, str]]:
    bound = dataclasses.replace(held.pending[0].approve(), digest="0" * 64)
    return held, {"call_1": bound}, {"call_1": "was made for other arguments than the ones held"}


async def _not_a_mapping(held: ToolChainResult) -> tuple[ToolChainResult, object, dict[str, str]]:
    return (
        held,
        [("call_1", Approval.granted())],
        {"*": "decisions must map call ids to Approval, not list"},
    )


@pytest.mark.parametrize(
    "mistake",
    [
        _unknown_id,
        _not_an_approval,
        _another_run,
        _another_call,
        _edited_arguments,
        _forged_request,
        _bound_to_other_arguments,
        _not_a_mapping,
    ],
)
async def test_a_resume_with_a_refused_decision_approves_nothing_and_says_why(
    mistake: Mistake,
) -> None:
    shop, chain, ctx, held = await _held_pair()
    given, decisions, refused = await mistake(held)

    with pytest.raises(ApprovalError) as raised:
        await chain.resume(ctx, given, decisions, FMT)  # type: ignore[arg-type]  # on purpose

    assert raised.value.refused == refused
    assert str(raised.value).startswith("nothing was approved: ")
    assert shop.done == []
    # Nothing was used up: the real decisions still go through.
    fresh = dataclasses.replace(held, pending=tuple(_unedited(r) for r in held.pending))
    done = await chain.resume(ctx, fresh, {"call_1": held.pending[0].approve()}, FMT)
    assert shop.done == [("A", 200)] and [r.call_id for r in done.pending] == ["call_2"]


def _unedited(request: ApprovalRequest) -> ApprovalRequest:
    args = dict(request.args)
    if args.get("amount_eur") == 9_000:
        args["amount_eur"] = 200
    return dataclasses.replace(request, args=args)


def test_an_approval_is_a_real_bool() -> None:
    with pytest.raises(TypeError, match=r"Approval\.approved must be True or False, not str"):
        Approval("false")  # type: ignore[arg-type]  # what a form would send


# -- composite tools ---------------------------------------------------------------------------


class Site:
    """A composite ``cms`` whose ``publish`` sub-tool needs approval."""

    def __init__(self) -> None:
        self.ran: list[str] = []

        @tool
        def draft(page: str) -> str:
            """Save a draft."""
            self.ran.append(f"draft {page}")
            return f"draft of {page} saved"

        @tool(requires_approval=True)
        def publish(page: str) -> str:
            """Publish a page."""
            self.ran.append(f"publish {page}")
            return f"{page} is live"

        self.cms = CompositeTool("cms", "Site operations.", [draft, publish])

    def call(self) -> str:
        calls = [
            {"name": "draft", "args": {"page": "home"}},
            {"name": "publish", "args": {"page": "home"}},
            {"name": "draft", "args": {"page": "about"}},
        ]
        return json.dumps({"tool": "cms", "args": {"calls": calls}})


def entries(result: ToolChainResult) -> list[dict[str, object]]:
    output = result.raw.output(0, dict)
    return list(output["results"])


async def test_a_composites_held_sub_call_runs_alone_on_resume() -> None:
    site = Site()
    chain, ctx = JSONToolChain().register_tool(site.cms), ExecutionContext()

    held = await chain.execute(ctx, site.call(), FMT)

    assert site.ran == ["draft home"]  # publish held; the sub-call after it not run
    [request] = held.pending
    assert (request.tool, dict(request.args), request.via) == (
        "publish",
        {"page": "home"},
        ("cms",),
    )
    assert request.call_id.endswith("/1")
    error = held.raw.errors[0]
    assert error is not None and error.kind == "held"
    assert error.message.startswith("publish (through cms) is waiting for a person's approval")

    done = await chain.resume(ctx, held, {request.call_id: Approval.granted()}, FMT)

    assert site.ran == ["draft home", "publish home"]  # the draft before it not again
    assert entries(done) == [
        {"name": "draft", "result": "draft of home saved"},
        {"name": "publish", "result": "home is live"},
        {
            "name": "draft",
            "error": "not run: publish before it waits for a person's approval; make this "
            "call again once the run resumes",
        },
    ]


async def test_a_composites_denied_sub_call_is_its_error() -> None:
    site = Site()
    chain, ctx = JSONToolChain().register_tool(site.cms), ExecutionContext()
    held = await chain.execute(ctx, site.call(), FMT)
    done = await chain.resume(
        ctx, held, {held.pending[0].call_id: Approval.denied("not before Monday")}, FMT
    )
    assert site.ran == ["draft home"]
    assert entries(done)[1] == {
        "name": "publish",
        "error": "publish was not approved: not before Monday",
    }


async def test_a_composites_sub_call_is_decided_by_the_chains_approver() -> None:
    site = Site()
    asked: list[ApprovalRequest] = []
    chain = JSONToolChain(approve=approver(Approval.granted(), asked)).register_tool(site.cms)
    result = await chain.execute(ExecutionContext(), site.call(), FMT)
    assert result.pending == ()
    assert site.ran == ["draft home", "publish home", "draft about"]
    assert [(r.tool, r.via) for r in asked] == [("publish", ("cms",))]


# -- loop controls --------------------------------------------------------------------------


class Gauge:
    """How many calls run at once, at most, and in which order they started."""

    def __init__(self) -> None:
        self.now = 0
        self.most = 0
        self.order: list[int] = []

    async def work(self, n: int) -> int:
        self.order.append(n)
        self.now += 1
        self.most = max(self.most, self.now)
        for _ in range(3):  # several loop turns: every call that may start, starts
            await asyncio.sleep(0)
        self.now -= 1
        return n


def gauged(gauge: Gauge, **options: Any) -> Tool[Any, int]:
    @tool(name="work", **options)
    async def work(n: int) -> int:
        """Do some work."""
        return await gauge.work(n)

    return work


@pytest.mark.parametrize(("limit", "most"), [(None, 6), (2, 2), (1, 1)])
async def test_a_chains_max_concurrency_caps_the_calls_of_an_action(
    limit: int | None, most: int
) -> None:
    gauge = Gauge()
    chain = JSONToolChain(max_concurrency=limit).register_tool(gauged(gauge))
    result = await chain.execute(
        ExecutionContext(), action(*[("work", {"n": n}) for n in range(6)]), FMT
    )
    assert [result.raw.output(i, int) for i in range(6)] == list(range(6))
    assert gauge.most == most
    if limit == 1:
        assert gauge.order == list(range(6))  # one after another, in order


async def test_a_tools_max_concurrency_holds_across_the_run() -> None:
    """Two actions of one run at once (a sub-agent's and its parent's, say): the tool's
    limit counts them together; another tool is not held back."""
    gauge, other = Gauge(), Gauge()

    @tool
    async def free(n: int) -> int:
        """Unlimited work."""
        return await other.work(n)

    chain = JSONToolChain().register_tool(gauged(gauge, max_concurrency=2)).register_tool(free)
    run = ExecutionContext()
    child = run.child("helper")
    calls = [("work", {"n": n}) for n in range(4)] + [("free", {"n": n}) for n in range(4)]
    first, second = await asyncio.gather(
        chain.execute(run, action(*calls), FMT), chain.execute(child, action(*calls), FMT)
    )
    assert first.raw.ok and second.raw.ok
    assert gauge.most == 2 and other.most == 8


async def test_waiting_for_a_turn_does_not_count_against_the_time_limit() -> None:
    """Five calls of 0.06 s, one or two at a time, under a 0.15 s limit per call: 0.3 s
    or 0.18 s in all, and no call is cut (their time counts from their own start)."""

    @tool(max_concurrency=1)
    async def slow(n: int) -> int:
        """Slow work."""
        await asyncio.sleep(0.06)
        return n

    @tool
    async def steady(n: int) -> int:
        """Slow work too."""
        await asyncio.sleep(0.06)
        return n

    content = action(*[("slow", {"n": n}) for n in range(5)])
    rate_limited = JSONToolChain(timeout=0.15).register_tool(slow)
    result = await rate_limited.execute(ExecutionContext(), content, FMT)
    assert result.raw.ok, result.raw.errors

    content = action(*[("steady", {"n": n}) for n in range(6)])
    two_at_a_time = JSONToolChain(timeout=0.15, max_concurrency=2).register_tool(steady)
    result = await two_at_a_time.execute(ExecutionContext(), content, FMT)
    assert result.raw.ok, result.raw.errors


def test_max_concurrency_on_a_chain_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_concurrency must be a positive int or None"):
        JSONToolChain(max_concurrency=0)


class Waiting:
    """An approver that waits for a person who never comes (the run is cancelled)."""

    def __init__(self) -> None:
        self.asked = asyncio.Event()

    async def __call__(self, ctx: ExecutionContext, request: ApprovalRequest) -> Approval:
        self.asked.set()
        await asyncio.Event().wait()
        raise AssertionError("never decided")


@pytest.mark.parametrize("calls", [1, 2])
async def test_cancelling_the_run_while_a_person_decides_ends_the_call_not_the_chain(
    calls: int,
) -> None:
    approve = Waiting()
    shop = Refunds()
    ctx = ExecutionContext()
    content = action(*[refund_of(f"A{n}", 500) for n in range(calls)])
    running = asyncio.ensure_future(shop.chain(approve=approve).execute(ctx, content, FMT))
    await approve.asked.wait()
    ctx.cancel("the customer left")

    result = await running  # the chain returns: it raises nothing

    assert shop.done == []
    errors = [(e.kind, e.message) for e in result.raw.errors if e is not None]
    assert (
        errors
        == [("cancelled", "refund was cancelled while it waited for approval: the customer left")]
        * calls
    )


async def test_a_slow_async_guard_on_a_single_call_times_out_as_that_calls_error() -> None:
    """A guard (ToolSearch's approval is one) that outlasts the chain's time limit: the
    call fails with ``timeout``; the chain raised ``CancelledError`` for a lone call."""

    class Slow(ToolHook):
        async def guard_tool_call(self, ctx: ExecutionContext, call: ToolCall) -> None:
            await asyncio.sleep(1.0)

    shop = Refunds()
    ctx = ExecutionContext()
    ctx.hooks.add(Slow())
    result = await shop.chain(timeout=0.05).execute(ctx, action(("lookup", {"order_id": "A"})), FMT)
    error = result.raw.errors[0]
    assert error is not None and error.kind == "timeout"
    assert shop.done == []


def test_discoverys_approval_types_are_the_cores() -> None:
    from toolchain import discovery

    assert discovery.Approval is Approval and discovery.ApprovalRequest is ApprovalRequest
    request = discovery.ApprovalRequest("call_1", "publish", {"page": "p1"}, "moderate", ("cms",))
    assert (request.risk, request.via) == ("moderate", ("cms",))  # its extra field kept


async def test_an_mcp_tool_can_require_approval() -> None:
    """A real MCP server's tool (the SDK's stdio server): its requires_approval is a
    predicate on the arguments as the server's schema validated them."""
    import sys

    from tests.toolchain.mcp.servers import SERVER
    from toolchain.mcp import MCPServer

    async with MCPServer.stdio(sys.executable, [str(SERVER), "stdio"]) as server:
        chain = server.attach(JSONToolChain())
        weather = chain.tools["weather"]
        weather.requires_approval = lambda args: args["days"] > 3
        ctx = ExecutionContext()
        content = action(
            ("weather", {"city": "Oslo", "days": 2}), ("weather", {"city": "Rome", "days": 5})
        )
        held = await chain.execute(ctx, content, FMT)
        assert held.raw.output(0, str) == "Oslo: 21 °C for 2 day(s)"
        assert [dict(r.args) for r in held.pending] == [{"city": "Rome", "days": 5}]
        done = await chain.resume(ctx, held, {held.pending[0].call_id: Approval.granted()}, FMT)
        assert done.raw.output(1, str) == "Rome: 21 °C for 5 day(s)"
