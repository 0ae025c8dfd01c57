"""A gated call inside a program pauses the program and the run; resuming runs the
reviewed call and the program goes on from that call, not from its start."""

from __future__ import annotations

from collections import Counter

import pytest

from agents import ReActAgent, ScriptedModel, ToolCallingAgent
from formats import XMLFormat
from toolchain import Approval, ApprovalRequest, ExecutionContext, ToolChainResult, tool
from toolchain.code import ProgramOutput, PythonToolChain

runs: Counter[str] = Counter()


@tool
def balance(account: str) -> float:
    """The balance of an account."""
    runs["balance"] += 1
    return 120.0


@tool(requires_approval=lambda args: args.amount > 50)
def transfer(account: str, amount: float) -> str:
    """Move money out of an account."""
    runs["transfer"] += 1
    return f"moved {amount:g} from {account}"


PROGRAM = (
    'money = await balance("ana")\n'
    'print("balance", money)\n'
    'done = await transfer("ana", money / 2)\n'
    'print("then", done)'
)


@pytest.fixture(autouse=True)
def _counted() -> None:
    runs.clear()


def chain() -> PythonToolChain:
    return PythonToolChain().register_tool(balance).register_tool(transfer)


def shown(result: ToolChainResult) -> str:
    return result.observations[-1].text


def test_a_gated_call_holds_the_program_and_resuming_goes_on_from_it() -> None:
    made, ctx, fmt = chain(), ExecutionContext(), XMLFormat()
    held = made.execute_sync(ctx, PROGRAM, fmt)
    (request,) = held.pending
    assert (request.tool, dict(request.args), request.via) == (
        "transfer",
        {"account": "ana", "amount": 60.0},
        ("run_python",),  # it came from a program
    )
    assert runs == Counter({"balance": 1})
    done = made.resume_sync(ctx, held, {request.call_id: request.approve()}, fmt)
    assert shown(done) == "balance 120.0\nthen moved 60 from ana"
    assert done.pending == ()
    assert runs == Counter({"balance": 1, "transfer": 1})  # balance was not run again
    program = done.raw.results[-1]
    assert program is not None
    assert program.output == ProgramOutput(
        "balance 120.0\nthen moved 60 from ana\n", None, "balance 120.0\nthen moved 60 from ana"
    )


def test_a_denied_call_raises_in_the_program_where_it_waited() -> None:
    made, ctx, fmt = chain(), ExecutionContext(), XMLFormat()
    program = (
        'try:\n    await transfer("ana", 80)\nexcept Exception as e:\n    print("told:", e)\n'
        'print("balance", await balance("ana"))'
    )
    held = made.execute_sync(ctx, program, fmt)
    (request,) = held.pending
    done = made.resume_sync(ctx, held, {request.call_id: Approval.denied("over budget")}, fmt)
    assert shown(done) == "told: transfer was not approved: over budget\nbalance 120.0"
    assert runs == Counter({"balance": 1})


def test_gathered_gated_calls_are_decided_one_by_one() -> None:
    made, ctx, fmt = chain(), ExecutionContext(), XMLFormat()
    program = (
        "import asyncio\n"
        'a, b = await asyncio.gather(transfer("ana", 60), transfer("bob", 70))\n'
        "print(a, '|', b)"
    )
    held = made.execute_sync(ctx, program, fmt)
    (first,) = held.pending
    assert dict(first.args) == {"account": "ana", "amount": 60.0}
    second_held = made.resume_sync(ctx, held, {first.call_id: first.approve()}, fmt)
    (second,) = second_held.pending
    assert dict(second.args) == {"account": "bob", "amount": 70.0}
    assert runs == Counter({"transfer": 1})
    done = made.resume_sync(ctx, second_held, {second.call_id: second.approve()}, fmt)
    assert shown(done) == "moved 60 from ana | moved 70 from bob"
    assert runs == Counter({"transfer": 2})


def test_an_approver_in_the_run_decides_without_a_pause() -> None:
    asked: list[ApprovalRequest] = []

    def approve(ctx: ExecutionContext, request: ApprovalRequest) -> Approval:
        asked.append(request)
        return request.approve()

    made = PythonToolChain(approve=approve).register_tool(balance).register_tool(transfer)
    result = made.execute_sync(ExecutionContext(), PROGRAM, XMLFormat())
    assert result.pending == ()
    assert shown(result) == "balance 120.0\nthen moved 60 from ana"
    # the approver is told where the call came from, as a person reading pending is
    assert [(r.tool, r.via) for r in asked] == [("transfer", ("run_python",))]


def test_both_agents_pause_on_a_programs_gated_call_and_resume_it() -> None:
    for kind in ("react", "native"):
        runs.clear()
        if kind == "react":
            model = ScriptedModel([f"<action>{PROGRAM}</action>", "<answer>moved</answer>"])
            agent: ReActAgent[str] | ToolCallingAgent[str] = ReActAgent(model, tool_chain=chain())
        else:
            call = ScriptedModel.call("run_python", {"code": PROGRAM})
            model = ScriptedModel([call, "moved"])
            agent = ToolCallingAgent(model, tool_chain=chain())
        paused = agent.run_sync("Move half of Ana's money.")
        assert paused.stopped_by == "paused", kind
        (request,) = paused.pending
        assert (request.tool, request.via) == ("transfer", ("run_python",))
        done = agent.resume_sync(paused, {request.call_id: request.approve()})
        assert done.answer == "moved", kind
        assert runs == Counter({"balance": 1, "transfer": 1}), kind
        (result,) = done.steps[0].tool_results
        assert shown(result) == "balance 120.0\nthen moved 60 from ana"
