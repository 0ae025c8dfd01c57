"""What extensions know, on the spans: o200k tokens the relay's boxing and tool_search's
deferred definitions kept out, the tools a search found, the variables a call's
arguments read, and approvals held and decided (by the callback, or by a person
between runs).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from agents import Message, ReActAgent, ScriptedModel, ToolCallingAgent
from agents.models import ScriptedReply
from tests.agents.otel.tracing import Traced, failed
from toolchain import Tool, tool
from toolchain.discovery import Approval, ApprovalRequest, ToolIndex, ToolInfo, ToolSearch
from toolchain.relay import ContextRelay
from toolchain.variables import ToolVariables


@tool
def transcribe(video_id: str) -> str:
    """Transcribe a video."""
    return "word " * 3000


@tool
def count_words(text: str) -> int:
    """Count the words of a text."""
    return len(text.split())


@tool
def weather(city: str) -> dict[str, object]:
    """Today's weather in a city."""
    return {"city": city, "celsius": 21}


@tool
def report(celsius: int, city: str) -> str:
    """Write a one-line report."""
    return f"{city}: {celsius} C"


def attributes(traced: Traced, name: str) -> dict[str, object]:
    return dict(traced.one(name).attributes or {})


async def test_an_output_the_relay_boxed_says_how_many_tokens_it_kept_out(spans: Traced) -> None:
    def script(messages: Sequence[Message]) -> str | ScriptedReply:
        step = sum(1 for message in messages if message.role == "assistant")
        if step == 0:
            return ScriptedModel.call("transcribe", video_id="v1")
        if step == 1:  # the reference the model was shown, passed on
            return ScriptedModel.call("count_words", text=messages[-1].text_content().strip())
        return "3000 words."

    model = ScriptedModel(script)
    agent = ToolCallingAgent(
        model, tools=[transcribe, count_words], extensions=[ContextRelay(threshold=1000)]
    )
    result = await agent.run("How long is video v1?")
    assert result.answer == "3000 words."
    boxed = attributes(spans, "execute_tool transcribe")
    assert boxed["gent.relay.boxed"] is True
    assert boxed["gent.relay.outputs_boxed"] == 1
    kept = boxed["gent.relay.tokens_kept"]
    assert isinstance(kept, int) and kept > 2900  # "word " is one o200k token
    assert "gent.relay.boxed" not in attributes(spans, "execute_tool count_words")
    run = attributes(spans, "invoke_agent agent")
    assert run["gent.relay.tokens_kept"] == kept and run["gent.relay.outputs_boxed"] == 1


async def test_a_call_whose_arguments_named_variables_lists_them(spans: Traced) -> None:
    model = ScriptedModel(
        [
            '<action>{"tool": "weather", "args": {"city": "Oslo"}}</action>',
            '<action>{"tool": "report", "args": {"celsius": "$weather_1.celsius", '
            '"city": "$weather_1.city"}}</action>',
            "<answer>$report_1</answer>",
        ]
    )
    agent = ReActAgent(model, tools=[weather, report], extensions=[ToolVariables()])
    assert (await agent.run("Report Oslo's weather.")).answer == "Oslo: 21 C"
    assert attributes(spans, "execute_tool report")["gent.variables.resolved"] == ("weather_1",)
    assert "gent.variables.resolved" not in attributes(spans, "execute_tool weather")


KINDS = ("invoice", "order", "customer", "shipment", "refund", "supplier", "warehouse", "coupon")


def finder(kind: str) -> Tool[Any, Any]:
    def find(record_id: str) -> str:
        return f"{kind} {record_id}"

    return tool(name=f"find_{kind}", description=f"Find a {kind} by its id.")(find)


@tool
def publish_page(page_id: str) -> str:
    """Publish a draft page so visitors see it."""
    return f"{page_id} is live"


async def test_tool_search_says_what_it_found_and_what_its_deferral_kept_out(
    spans: Traced,
) -> None:
    search = ToolSearch([finder(kind) for kind in KINDS], defer=True)
    model = ScriptedModel(
        [
            ScriptedModel.call("tool_search", query="find a refund", limit=1),
            ScriptedModel.call("find_refund", record_id="r-1"),
            "refund r-1",
        ]
    )
    agent = ToolCallingAgent(model, extensions=[search], name="finder")
    assert (await agent.run("Find refund r-1.")).ok
    found = attributes(spans, "execute_tool tool_search")
    assert found["gent.tool_search.found"] == ("find_refund",)
    assert found["gent.tool_search.activated"] == ("find_refund",)
    assert "gent.tool_search.query" not in found  # the model's words are content
    steps = [dict(s.attributes or {}) for s in spans.named("chat scripted")]
    hidden = [step["gent.tool_search.deferred_tools"] for step in steps]
    assert hidden == [8, 7, 7]  # find_refund, once found, is offered from then on
    kept = [cast(int, step["gent.tool_search.tokens_kept"]) for step in steps]
    assert all(k > 0 for k in kept) and kept[0] > kept[1] == kept[2]
    run = attributes(spans, "invoke_agent finder")
    assert run["gent.tool_search.tokens_kept"] == sum(kept)


def approvals_index() -> ToolIndex:
    info = ToolInfo("publish_page", phrases=("publish a page",), requires_confirmation=True)
    return ToolIndex([publish_page], [info])


async def test_an_approval_by_the_callback_is_on_the_call(spans_with_content: Traced) -> None:
    spans = spans_with_content
    asked: list[ApprovalRequest] = []

    def approve(ctx: object, request: ApprovalRequest) -> Approval:
        asked.append(request)
        return Approval.granted("looks fine")

    search = ToolSearch(approvals_index(), defer=False, approve=approve)
    model = ScriptedModel([ScriptedModel.call("publish_page", page_id="p-7"), "p-7 is live."])
    assert (await ToolCallingAgent(model, extensions=[search]).run("Publish p-7.")).ok
    call = attributes(spans, "execute_tool publish_page")
    assert call["gent.approval.outcome"] == "approved"
    assert call["gent.approval.decided_by"] == "approver"
    assert call["gent.approval.id"] == asked[0].call_id
    assert call["gent.approval.risk"] == "safe"
    assert call["gent.approval.reason"] == "looks fine"


async def test_a_held_call_pauses_the_run_and_a_persons_decision_is_on_the_resume(
    spans: Traced,
) -> None:
    search = ToolSearch(approvals_index(), defer=False)
    model = ScriptedModel([ScriptedModel.call("publish_page", page_id="p-7"), "p-7 is live."])
    agent = ToolCallingAgent(model, extensions=[search], name="publisher")
    first = await agent.run("Publish p-7.")
    assert first.stopped_by == "paused"
    run = spans.one("invoke_agent publisher")
    assert failed(run) is None  # a pause waits for a person: nothing failed
    assert dict(run.attributes or {})["gent.run.stopped_by"] == "paused"
    assert dict(run.attributes or {})["gent.approval.held_calls"] == 1

    spans.clear()
    (request,) = first.pending
    second = await agent.resume(first, {request.call_id: Approval.granted()})
    assert second.answer == "p-7 is live."
    decided = attributes(spans, "execute_tool publish_page")
    assert decided["gent.approval.outcome"] == "approved"
    assert decided["gent.approval.decided_by"] == "person"
    assert decided["gent.approval.id"] == request.call_id
    assert decided["gen_ai.tool.call.id"] == request.call_id  # the call that was held


async def test_a_tool_that_requires_approval_is_traced_without_discovery(spans: Traced) -> None:
    """``ApprovalChecked`` is the core's: a tool's own ``requires_approval`` is traced
    as discovery's gated tools are."""

    @tool(requires_approval=True)
    def publish_page(page_id: str) -> str:
        """Publish a page."""
        return f"{page_id} is live"

    model = ScriptedModel([ScriptedModel.call("publish_page", page_id="p-7"), "p-7 is live."])
    agent = ToolCallingAgent(model, tools=[publish_page], name="publisher")
    first = await agent.run("Publish p-7.")
    assert (
        dict(spans.one("invoke_agent publisher").attributes or {})["gent.approval.held_calls"] == 1
    )
    spans.clear()
    second = await agent.resume(first, {first.pending[0].call_id: Approval.denied("not now")})
    assert second.ok
    decided = attributes(spans, "execute_tool publish_page")
    assert (decided["gent.approval.outcome"], decided["gent.approval.decided_by"]) == (
        "denied",
        "person",
    )
