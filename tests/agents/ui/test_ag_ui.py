"""`agents.ui.ag_ui_app`: a run posted as an AG-UI ``RunAgentInput`` comes back as AG-UI
events, each read by the protocol's own models (``ag-ui-protocol``) and the whole stream
checked by its conformance validator (``ag-ui-validate``), for both agents: streamed
text and reasoning, tool calls with their results, a tool's error, a call held for
approval as an interrupt resumed by the next request, and a state the client edited
refused."""

from __future__ import annotations

import json
from typing import Any

import pytest
from ag_ui.core import (
    EventType,
    RunErrorEvent,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    StateSnapshotEvent,
)
from ag_ui_validate.pytest_plugin import assert_valid_agui

from agents.demo import build_demo
from agents.ui import ag_ui_app
from tests.agents.ui.conftest import (
    DEMO_CALLS,
    RAN,
    last,
    made,
    of_type,
    post_ag_ui,
    refunds,
    run_input,
    shop_agent,
    wire,
)
from tests.support.agent_kinds import KINDS, Kind, answer, call
from toolchain.mcp import MCPServer


def _types(events: list[Any]) -> list[str]:
    return [event.type.value for event in events]


def _state(events: list[Any]) -> dict[str, Any]:
    snapshot: StateSnapshotEvent = of_type(events, "STATE_SNAPSHOT")[-1]
    state: dict[str, Any] = snapshot.snapshot
    return state


@pytest.mark.parametrize("native", [False, True], ids=["react", "native"])
async def test_the_demo_run_streams_as_valid_ag_ui_events(native: bool) -> None:
    demo = build_demo(native=native)
    events = await post_ag_ui(ag_ui_app(demo.agent), run_input(demo.task))

    assert_valid_agui(wire(events), max_warnings=0)
    types = _types(events)
    assert types[0] == "RUN_STARTED" and types[-1] == "RUN_FINISHED"
    assert types.count("STEP_STARTED") == types.count("STEP_FINISHED") == 5
    started = [(e.tool_call_id, e.tool_call_name) for e in of_type(events, "TOOL_CALL_START")]
    assert [name for _, name in started] == DEMO_CALLS
    results = {e.tool_call_id: e.content for e in of_type(events, "TOOL_CALL_RESULT")}
    assert set(results) == {call_id for call_id, _ in started}
    customer = json.loads(results[started[0][0]])
    assert customer["email"] == "john.smith@email.com"
    args = [json.loads(e.delta) for e in of_type(events, "TOOL_CALL_ARGS")]
    assert args[0] == {"email": "john.smith@email.com"}
    # The answer streams in pieces; a ReAct agent's thinking streams as reasoning.
    text = "".join(e.delta for e in of_type(events, "TEXT_MESSAGE_CONTENT"))
    assert text.strip().endswith("Your vegetarian meal preference carries over.")
    assert len(of_type(events, "TEXT_MESSAGE_CONTENT")) > 1
    reasoning = "".join(e.delta for e in of_type(events, "REASONING_MESSAGE_CONTENT"))
    if native:
        assert reasoning == ""
    else:
        assert "Gold members change once per booking for free" in reasoning
    finished = last(events, RunFinishedEvent)
    assert finished.outcome is not None and finished.outcome.type == "success"
    assert finished.usage is not None and finished.usage[0].input_tokens
    assert isinstance(finished.result, str) and "AA102" in finished.result
    state = _state(events)
    assert state["stoppedBy"] == "answer" and state["usage"]["inputTokens"] > 0


@KINDS
async def test_a_tool_error_is_the_call_result_the_model_read(kind: Kind) -> None:
    agent, _ = made(kind, [call(kind, "lookup", disk="nope"), answer(kind, "no such disk")])
    events = await post_ag_ui(ag_ui_app(agent), run_input("How big is nope?"))

    assert_valid_agui(wire(events), max_warnings=0)
    (result,) = of_type(events, "TOOL_CALL_RESULT")
    assert result.content == "Error: no disk named nope; list the disks first"
    assert events[-1].type == EventType.RUN_FINISHED


@KINDS
async def test_a_held_call_is_an_interrupt_and_the_next_request_resumes_it(kind: Kind) -> None:
    agent, model = made(kind, [call(kind, "wipe", disk="sdb"), answer(kind, "sdb is erased")])
    app = ag_ui_app(agent)
    paused = await post_ag_ui(app, run_input("Erase sdb"))

    assert_valid_agui(wire(paused), max_warnings=0)
    assert RAN == []
    finished = last(paused, RunFinishedEvent)
    assert isinstance(finished.outcome, RunFinishedInterruptOutcome)
    (interrupt,) = finished.outcome.interrupts
    assert interrupt.reason == "tool_approval"
    assert interrupt.metadata == {"tool": "wipe", "args": {"disk": "sdb"}}
    (started,) = of_type(paused, "TOOL_CALL_START")
    assert (started.tool_call_id, started.tool_call_name) == (interrupt.id, "wipe")
    assert of_type(paused, "TOOL_CALL_RESULT") == []
    # Told inside its step, as any call of the step is.
    assert _types(paused)[-5:] == [
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "STEP_FINISHED",
        "STATE_SNAPSHOT",
        "RUN_FINISHED",
    ]
    assert _state(paused)["pending"] == [
        {"callId": interrupt.id, "tool": "wipe", "args": {"disk": "sdb"}}
    ]

    decision = {"interruptId": interrupt.id, "status": "resolved", "payload": {"approved": True}}
    resumed = await post_ag_ui(
        app, run_input(None, run="run-2", state=_state(paused), resume=[decision])
    )

    assert_valid_agui(wire(resumed), max_warnings=0)
    assert RAN == ["wipe sdb"]  # once, with the arguments that were shown
    (result,) = of_type(resumed, "TOOL_CALL_RESULT")
    assert (result.tool_call_id, result.content) == (interrupt.id, "sdb erased")
    text = "".join(e.delta for e in of_type(resumed, "TEXT_MESSAGE_CONTENT"))
    assert text == "sdb is erased"
    assert resumed[-1].type == EventType.RUN_FINISHED
    assert len(model.requests) == 2  # no request asking the model to make the call again


def _thinking(kind: Kind, text: str, then: str) -> str:
    """A ReAct step thinking ``text`` before ``then``; a native one says ``then`` only."""
    return then if kind == "native" else f"<thinking>{text}</thinking>\n{then}"


@KINDS
async def test_a_resumed_run_streams_its_calls_and_text_as_they_happen(kind: Kind) -> None:
    answer_text = "sdb is erased and sdc is 512 GB, as you asked me."
    agent, model = made(
        kind,
        [
            call(kind, "wipe", disk="sdb"),
            call(kind, "lookup", disk="sdc"),
            _thinking(kind, "Both are done; now I tell the person.", answer(kind, answer_text)),
        ],
    )
    app = ag_ui_app(agent)
    paused = await post_ag_ui(app, run_input("Erase sdb, then size sdc"))
    interrupt_id = _state(paused)["pending"][0]["callId"]

    entry = {"interruptId": interrupt_id, "status": "resolved", "payload": {"approved": True}}
    resumed = await post_ag_ui(app, run_input(None, state=_state(paused), resume=[entry]))

    assert_valid_agui(wire(resumed), max_warnings=0)
    types = _types(resumed)
    # The held call's result, then the next step and its call, then the answer, in pieces.
    results = of_type(resumed, "TOOL_CALL_RESULT")
    assert [r.content for r in results] == ["sdb erased", '{"disk":"sdc","size_gb":512}']
    lookup = [e for e in of_type(resumed, "TOOL_CALL_START") if e.tool_call_name == "lookup"]
    assert len(lookup) == 1
    text = of_type(resumed, "TEXT_MESSAGE_CONTENT")
    assert "".join(e.delta for e in text) == answer_text and len(text) > 3
    at = resumed.index
    assert at(results[0]) < types.index("STEP_STARTED") < at(lookup[0]) < at(results[1])
    assert at(results[1]) < types.index("TEXT_MESSAGE_START") < types.index("RUN_FINISHED")
    reasoning = of_type(resumed, "REASONING_MESSAGE_CONTENT")
    if kind == "react":  # the thinking streams too, not told whole at the step's end
        assert "".join(e.delta for e in reasoning) == "Both are done; now I tell the person."
        assert len(reasoning) > 1
    else:
        assert reasoning == []
    assert RAN == ["wipe sdb", "lookup sdc"] and len(model.requests) == 3


async def test_a_resume_whose_decision_is_refused_by_the_run_is_a_run_error() -> None:
    """A decision the run refuses (``ResumeError``): ``resume_refused``, nothing ran, and
    the run is still paused for a proper decision."""
    agent, _ = made("native", [call("native", "wipe", disk="sdb"), answer("native", "done")])
    app = ag_ui_app(agent)
    paused = await post_ag_ui(app, run_input("Erase sdb"))
    interrupt_id = _state(paused)["pending"][0]["callId"]

    wrong = {"interruptId": "call_9", "status": "resolved", "payload": {"approved": True}}
    refused = await post_ag_ui(app, run_input(None, state=_state(paused), resume=[wrong]))

    assert_valid_agui(wire(refused), max_warnings=0)
    error = last(refused, RunErrorEvent)
    assert error.code == "resume_refused"
    assert "call_9: no call with this id is held" in error.message
    assert RAN == []
    right = {**wrong, "interruptId": interrupt_id}
    resumed = await post_ag_ui(app, run_input(None, state=_state(paused), resume=[right]))
    assert RAN == ["wipe sdb"] and resumed[-1].type == EventType.RUN_FINISHED


@KINDS
async def test_a_denied_call_is_answered_with_the_reason(kind: Kind) -> None:
    agent, model = made(kind, [call(kind, "wipe", disk="sdb"), answer(kind, "not erased")])
    app = ag_ui_app(agent)
    paused = await post_ag_ui(app, run_input("Erase sdb"))
    interrupt_id = _state(paused)["pending"][0]["callId"]

    denial = {"approved": False, "reason": "sdb holds the backups"}
    entry = {"interruptId": interrupt_id, "status": "resolved", "payload": denial}
    resumed = await post_ag_ui(app, run_input(None, state=_state(paused), resume=[entry]))

    assert_valid_agui(wire(resumed), max_warnings=0)
    assert RAN == []
    (result,) = of_type(resumed, "TOOL_CALL_RESULT")
    assert result.content == "Error: wipe was not approved: sdb holds the backups"
    assert resumed[-1].type == EventType.RUN_FINISHED
    assert "sdb holds the backups" in model.requests[-1].messages[-1].text_content()


async def test_a_decision_that_is_not_a_boolean_approves_nothing() -> None:
    agent, _ = made("react", [call("react", "wipe", disk="sdb"), answer("react")])
    app = ag_ui_app(agent)
    paused = await post_ag_ui(app, run_input("Erase sdb"))
    interrupt_id = _state(paused)["pending"][0]["callId"]

    entry = {"interruptId": interrupt_id, "status": "resolved", "payload": {"approved": "false"}}
    refused = await post_ag_ui(app, run_input(None, state=_state(paused), resume=[entry]))

    error = last(refused, RunErrorEvent)
    assert error.code == "bad_request"
    assert error.message.startswith(f"interrupt {interrupt_id}: a decision is ")
    assert RAN == []
    # The run is still paused: a proper decision resumes it.
    entry["payload"] = {"approved": True}
    resumed = await post_ag_ui(app, run_input(None, state=_state(paused), resume=[entry]))
    assert RAN == ["wipe sdb"] and resumed[-1].type == EventType.RUN_FINISHED


async def test_a_second_message_continues_the_sealed_conversation() -> None:
    agent, model = made("react", [answer("react", "Paris"), answer("react", "2.1M")])
    app = ag_ui_app(agent)
    first = await post_ag_ui(app, run_input("Capital of France?"))
    second = await post_ag_ui(app, run_input("Its population?", state=_state(first)))

    assert second[-1].type == EventType.RUN_FINISHED
    sent = [message.text_content() for message in model.requests[-1].messages]
    assert any("Capital of France?" in text for text in sent)
    assert any("Paris" in text for text in sent)


@pytest.mark.parametrize(
    "forge",
    ["edited messages", "approve a call by hand", "another thread", "no seal"],
)
async def test_a_state_the_client_changed_is_refused_and_nothing_runs(forge: str) -> None:
    agent, model = made("react", [call("react", "wipe", disk="sdb"), answer("react")])
    app = ag_ui_app(agent)
    paused = await post_ag_ui(app, run_input("Erase sdb"))
    state = json.loads(json.dumps(_state(paused)))
    thread = "thread-1"
    if forge == "edited messages":
        state["gent"]["messages"] = state["gent"]["messages"].replace("sdb", "sda")
    elif forge == "approve a call by hand":
        state["gent"]["paused"] = "0" * 32
    elif forge == "another thread":
        thread = "thread-2"
    else:
        del state["gent"]["seal"]
    interrupt_id = _state(paused)["pending"][0]["callId"]
    entry = {"interruptId": interrupt_id, "status": "resolved", "payload": {"approved": True}}

    refused = await post_ag_ui(app, run_input(None, thread=thread, state=state, resume=[entry]))

    assert _types(refused) == ["RUN_STARTED", "RUN_ERROR"]
    error = last(refused, RunErrorEvent)
    assert error.code == "state_refused"
    assert error.message.startswith("the conversation state was not sealed by this server")
    assert RAN == [] and len(model.requests) == 1


async def test_a_request_with_no_task_is_a_run_error() -> None:
    agent, model = made("react", [answer("react")])
    events = await post_ag_ui(ag_ui_app(agent), run_input(None))
    assert _types(events) == ["RUN_STARTED", "RUN_ERROR"]
    assert last(events, RunErrorEvent).code == "bad_request" and model.requests == []


async def test_servers_that_share_a_secret_continue_each_others_conversations() -> None:
    """Behind a load balancer: the state one process sealed opens in another that has
    the same ``secret``; an app with its own key refuses it."""
    secret = b"s" * 32
    first_agent, _ = made("react", [answer("react", "Paris")])
    first = await post_ag_ui(ag_ui_app(first_agent, secret=secret), run_input("Capital?"))
    state = _state(first)

    other, model = made("react", [answer("react", "2.1M")])
    went_on = await post_ag_ui(ag_ui_app(other, secret=secret), run_input("And?", state=state))
    assert went_on[-1].type == EventType.RUN_FINISHED
    assert any("Paris" in m.text_content() for m in model.requests[-1].messages)

    stranger, _ = made("react", [answer("react")])
    refused = await post_ag_ui(ag_ui_app(stranger), run_input("And?", state=state))
    assert last(refused, RunErrorEvent).code == "state_refused"


# -- an MCP server's question (elicitation) ----------------------------------------------------


def _question(events: list[Any]) -> Any:
    finished = last(events, RunFinishedEvent)
    assert isinstance(finished.outcome, RunFinishedInterruptOutcome)
    (interrupt,) = finished.outcome.interrupts
    return interrupt


def _answer(interrupt_id: str, payload: object, status: str = "resolved") -> dict[str, Any]:
    return {"interruptId": interrupt_id, "status": status, "payload": payload}


@KINDS
async def test_a_servers_question_is_an_interrupt_and_its_answer_resumes_the_call(
    kind: Kind, shop: MCPServer
) -> None:
    agent, model = shop_agent(
        kind, shop, [call(kind, "refund", order="A7"), answer(kind, "A7 is refunded, as asked.")]
    )
    app = ag_ui_app(agent)
    asked = await post_ag_ui(app, run_input("Refund A7"))

    assert_valid_agui(wire(asked), max_warnings=0)
    question = _question(asked)
    (refund,) = of_type(asked, "TOOL_CALL_START")  # the call; the question is no call
    assert (refund.tool_call_name, question.tool_call_id) == ("refund", refund.tool_call_id)
    assert (question.reason, question.message) == ("input_required", "Refund order A7?")
    assert question.metadata == {"tool": "refund", "args": {"order": "A7"}}
    schema = question.response_schema
    assert schema["properties"]["action"] == {"enum": ["accept", "decline", "cancel"]}
    assert schema["properties"]["content"]["properties"]["ok"]["type"] == "boolean"
    assert of_type(asked, "TOOL_CALL_RESULT") == [] and await refunds(shop) == 0
    (pending,) = _state(asked)["pending"]
    assert pending["question"] == "Refund order A7?" and pending["callId"] == question.id

    accept = _answer(question.id, {"action": "accept", "content": {"ok": True}})
    resumed = await post_ag_ui(app, run_input(None, state=_state(asked), resume=[accept]))

    assert_valid_agui(wire(resumed), max_warnings=0)
    (result,) = of_type(resumed, "TOOL_CALL_RESULT")
    assert result.tool_call_id == refund.tool_call_id
    assert json.loads(result.content) == {"result": "refunded A7"}
    text = of_type(resumed, "TEXT_MESSAGE_CONTENT")
    assert "".join(e.delta for e in text) == "A7 is refunded, as asked." and len(text) > 1
    assert resumed[-1].type == EventType.RUN_FINISHED
    assert await refunds(shop) == 1 and len(model.requests) == 2


@pytest.mark.parametrize(
    ("entry", "told"),
    [
        ({"payload": {"action": "decline"}}, "decline"),
        ({"payload": {"action": "cancel"}}, "cancel"),
        ({"status": "cancelled"}, "cancel"),
    ],
    ids=["decline", "cancel", "status cancelled"],
)
async def test_a_declined_or_cancelled_question_is_told_to_the_server(
    shop: MCPServer, entry: dict[str, Any], told: str
) -> None:
    agent, _ = shop_agent("native", shop, [call("native", "refund", order="A7"), "Kept it."])
    app = ag_ui_app(agent)
    asked = await post_ag_ui(app, run_input("Refund A7"))
    answer_entry = {"interruptId": _question(asked).id, "status": "resolved", **entry}

    resumed = await post_ag_ui(app, run_input(None, state=_state(asked), resume=[answer_entry]))

    (result,) = of_type(resumed, "TOOL_CALL_RESULT")
    assert json.loads(result.content) == {"result": f"kept A7: the customer answered {told}"}
    assert await refunds(shop) == 0 and resumed[-1].type == EventType.RUN_FINISHED


async def test_an_answer_that_does_not_fit_the_schema_is_refused_and_the_question_stays(
    shop: MCPServer,
) -> None:
    agent, model = shop_agent("native", shop, [call("native", "ship", order="A7"), "Shipped."])
    app = ag_ui_app(agent)
    asked = await post_ag_ui(app, run_input("Ship A7"))
    question = _question(asked)
    assert question.message == "Where should order A7 go?"

    unfit = _answer(question.id, {"action": "accept", "content": {"street": "Main St 1"}})
    refused = await post_ag_ui(app, run_input(None, state=_state(asked), resume=[unfit]))

    assert_valid_agui(wire(refused), max_warnings=0)
    error = last(refused, RunErrorEvent)
    assert error.code == "bad_request"
    assert error.message == (
        f"interrupt {question.id}: the answer does not fit the schema the question asked "
        "for: city: required field is missing"
    )
    assert len(model.requests) == 1
    # Still asked: a fitting answer ships it.
    fit = _answer(
        question.id, {"action": "accept", "content": {"street": "Main St 1", "city": "Lyon"}}
    )
    resumed = await post_ag_ui(app, run_input(None, state=_state(asked), resume=[fit]))
    (result,) = of_type(resumed, "TOOL_CALL_RESULT")
    assert json.loads(result.content) == {"result": "shipped A7 to Main St 1, Lyon"}


@pytest.mark.parametrize("forge", ["a question never asked", "an approval for the question"])
async def test_a_forged_answer_is_refused_and_nothing_is_sent(shop: MCPServer, forge: str) -> None:
    agent, model = shop_agent("native", shop, [call("native", "refund", order="A7"), "Done."])
    app = ag_ui_app(agent)
    asked = await post_ag_ui(app, run_input("Refund A7"))
    question = _question(asked)
    if forge == "a question never asked":
        entry = _answer(f"{question.id}-2", {"action": "accept", "content": {"ok": True}})
    else:
        entry = _answer(question.id, {"approved": True})

    refused = await post_ag_ui(app, run_input(None, state=_state(asked), resume=[entry]))

    error = last(refused, RunErrorEvent)
    if forge == "a question never asked":
        assert error.code == "resume_refused"
        assert f"{question.id}-2: no call with this id is held" in error.message
    else:
        assert error.code == "bad_request"
        assert error.message.startswith(f"interrupt {question.id}: an answer to a question is ")
    assert await refunds(shop) == 0 and len(model.requests) == 1
