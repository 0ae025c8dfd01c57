"""A sub-agent's held call, the user's way: ``def_agent`` sub-agents inside ``run_prompt``.

A call held in a sub-agent pauses the sub-agent and its parent; the parent's
``result.pending`` lists the sub-agent's call, ``via`` naming the way it came;
``PromptRun.resume`` resumes the sub-agent from its paused step (the approved call runs
there, the sub-agent goes on, its answer becomes the parent's call result) and no model
is asked to repeat anything: every test counts each model's requests."""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

import pytest
from pydantic import BaseModel

from agents import AgentResult, Prompt, ResumeError, run_prompt
from agents.models import OpenAIChatModel, ScriptedModel
from tests.agents.test_approvals import several
from tests.support.agent_kinds import Kind, answer, call
from tests.support.chat_script import calls, chat_script, last_tool_text
from tests.support.loopback import LoopbackServer
from toolchain import Approval, ApprovalRequest, CompositeTool, ExecutionContext, Tool, tool
from toolchain.runtime import run_sync

Protocol = Literal["native", "text"]
PROTOCOLS = pytest.mark.parametrize("protocol", ["native", "text"])


def kind_of(protocol: Protocol) -> Kind:
    return "react" if protocol == "text" else "native"


class Page(BaseModel):
    page: str


class Site:
    """``publish`` needs approval; ``preview`` never does. Records what ran."""

    def __init__(self) -> None:
        self.ran: list[str] = []

        @tool(requires_approval=True)
        def publish(page: str) -> str:
            """Publish a page."""
            self.ran.append(f"publish {page}")
            return f"{page} is live"

        @tool(requires_approval=True)
        def unpublish(page: str) -> str:
            """Take a page down."""
            self.ran.append(f"unpublish {page}")
            return f"{page} is down"

        @tool
        def preview(page: str) -> str:
            """Preview a page."""
            self.ran.append(f"preview {page}")
            return f"{page} looks fine"

        self.publish, self.unpublish, self.preview = publish, unpublish, preview


def sub_agent(
    name: str, tools: list[Tool[Any, Any]], model: ScriptedModel, protocol: Protocol, **more: Any
) -> Any:
    """A build declaring the sub-agent ``name``: ``tools`` (or another sub-agent)."""

    def build(args: Page, prompt: Prompt) -> None:
        for each in tools:
            prompt.def_tool(each)
        for declare in more.get("agents", ()):
            declare(prompt)
        prompt.user(f"Work on {args.page}")

    def declare(prompt: Prompt) -> None:
        prompt.def_agent(name, f"The {name}.", Page, build, model=model, protocol=protocol)

    return declare


def top(*declares: Any, task: str = "Publish the FAQ") -> Any:
    def build(prompt: Prompt) -> None:
        for declare in declares:
            declare(prompt)
        prompt.user(task)

    return build


def tool_texts(result: AgentResult[Any]) -> list[str]:
    """What the run's model was told of its calls (native: tool messages; text: the
    observations)."""
    texts = [m.text_content() for m in result.messages if m.role == "tool"]
    return texts or [
        o.text for step in result.steps for r in step.tool_results for o in r.observations
    ]


# -- one sub-agent -------------------------------------------------------------------------------


@PROTOCOLS
def test_a_sub_agents_held_call_pauses_the_parent_and_resume_runs_it_in_the_sub_agent(
    protocol: Protocol,
) -> None:
    kind, site = kind_of(protocol), Site()
    child = ScriptedModel(
        [
            call(kind, "preview", page="faq"),
            call(kind, "publish", page="faq"),
            answer(kind, "faq published"),
        ]
    )
    parent = ScriptedModel([call(kind, "publisher", page="faq"), answer(kind, "The FAQ is live.")])
    run = run_prompt(
        top(sub_agent("publisher", [site.preview, site.publish], child, protocol)),
        model=parent,
        protocol=protocol,
    )

    paused = run.run_sync()

    assert paused.stopped_by == "paused" and site.ran == ["preview faq"]
    [held] = paused.pending
    assert (held.tool, dict(held.args), held.via) == ("publish", {"page": "faq"}, ("publisher",))
    assert held.call_id.startswith("call_") and "/" in held.call_id  # an id of the parent's
    assert paused.paused is not None and "publish" in paused.paused
    assert (len(parent.requests), len(child.requests)) == (1, 2)

    done = run.resume_sync({held.call_id: held.approve()})

    assert done.ok and done.answer == "The FAQ is live."
    assert site.ran == ["preview faq", "publish faq"]  # preview ran once, publish once
    assert (len(parent.requests), len(child.requests)) == (2, 3)  # nobody asked again
    assert "faq is live" in child.requests[-1].messages[-1].text_content()
    assert tool_texts(done)[-1].strip() == "faq published"  # the sub-agent's answer
    assert done.pending == () and run.run_sync() is done  # result() is the latest


@PROTOCOLS
def test_a_denied_sub_agent_call_tells_the_sub_agent_why_and_the_parent_gets_its_answer(
    protocol: Protocol,
) -> None:
    kind, site = kind_of(protocol), Site()
    child = ScriptedModel([call(kind, "publish", page="faq"), answer(kind, "legal said no")])
    parent = ScriptedModel([call(kind, "publisher", page="faq"), answer(kind, "Not published.")])
    run = run_prompt(
        top(sub_agent("publisher", [site.publish], child, protocol)),
        model=parent,
        protocol=protocol,
    )
    [held] = run.run_sync().pending

    done = run.resume_sync({held.call_id: held.deny("waits for legal review")})

    assert done.answer == "Not published." and site.ran == []
    told = child.requests[-1].messages[-1].text_content()
    assert "publish was not approved: waits for legal review" in told
    assert tool_texts(done)[-1].strip() == "legal said no"
    assert (len(parent.requests), len(child.requests)) == (2, 2)


def test_sub_agents_nested_two_levels_pause_and_resume_through_both() -> None:
    site = Site()
    writer = ScriptedModel([ScriptedModel.call("publish", page="faq"), "published"])
    editor = ScriptedModel([ScriptedModel.call("writer", page="faq"), "the writer published it"])
    parent = ScriptedModel([ScriptedModel.call("editor", page="faq"), "Done: the FAQ is live."])
    inner = sub_agent("writer", [site.publish], writer, "native")
    run = run_prompt(top(sub_agent("editor", [], editor, "native", agents=[inner])), model=parent)

    paused = run.run_sync()

    [held] = paused.pending
    assert (held.tool, held.via) == ("publish", ("editor", "writer"))
    assert held.call_id.count("/") == 2  # one group per sub-agent it came through
    assert held.run_id == run.ctx.run_id  # a decision is bound to the parent's run

    done = run.resume_sync({held.call_id: held.approve()})

    assert done.answer == "Done: the FAQ is live." and site.ran == ["publish faq"]
    assert [len(m.requests) for m in (parent, editor, writer)] == [2, 2, 2]
    assert tool_texts(done)[-1].strip() == "the writer published it"


def test_a_sub_agent_inside_a_composite_tool_is_held_with_the_composite_in_its_path() -> None:
    site = Site()
    child = ScriptedModel([ScriptedModel.call("publish", page="faq"), "published"])
    parent = ScriptedModel(
        [
            ScriptedModel.call("ops", calls=[{"name": "publisher", "args": {"page": "faq"}}]),
            "ok",
        ]
    )

    def build(prompt: Prompt) -> None:
        sub_agent("publisher", [site.publish], child, "native")(prompt)
        agent_tool = prompt.tools.pop("publisher")
        prompt.def_tool(CompositeTool("ops", "Operations.", [agent_tool]))
        prompt.user("Publish the FAQ")

    run = run_prompt(build, model=parent)
    [held] = run.run_sync().pending
    assert held.via == ("ops", "publisher")  # outermost first

    done = run.resume_sync({held.call_id: Approval.granted()})

    assert done.answer == "ok" and site.ran == ["publish faq"]
    assert "published" in tool_texts(done)[-1]
    assert [len(m.requests) for m in (parent, child)] == [2, 2]


# -- several held calls, a sub-agent pausing again ----------------------------------------------


def test_two_held_calls_of_a_sub_agent_step_are_decided_one_by_one_in_reverse_order() -> None:
    site = Site()
    child = ScriptedModel(
        [
            several("native", ("publish", {"page": "faq"}), ("unpublish", {"page": "old"})),
            "both done",
        ]
    )
    parent = ScriptedModel([ScriptedModel.call("publisher", page="faq"), "All done."])
    run = run_prompt(
        top(sub_agent("publisher", [site.publish, site.unpublish], child, "native")), model=parent
    )

    paused = run.run_sync()
    first, second = paused.pending
    assert (first.tool, second.tool) == ("publish", "unpublish")
    assert first.call_id.split("/")[0] == second.call_id.split("/")[0]  # one sub-agent call

    halfway = run.resume_sync({second.call_id: second.deny("keep the old page")})

    assert halfway.stopped_by == "paused" and [p.tool for p in halfway.pending] == ["publish"]
    assert site.ran == [] and (len(parent.requests), len(child.requests)) == (1, 1)
    [still] = halfway.pending
    assert still.call_id == first.call_id

    done = run.resume_sync({still.call_id: still.approve()})

    assert done.answer == "All done." and site.ran == ["publish faq"]
    answers = {
        m.tool_call_id: m.text_content() for m in child.requests[-1].messages if m.role == "tool"
    }
    assert answers == {
        "c1": "faq is live",
        "c2": "Error: unpublish was not approved: keep the old page",
    }
    assert (len(parent.requests), len(child.requests)) == (2, 2)


def test_a_sub_agent_that_pauses_again_after_resuming_keeps_the_parent_paused() -> None:
    site = Site()
    child = ScriptedModel(
        [
            ScriptedModel.call("publish", page="faq"),
            ScriptedModel.call("unpublish", page="old"),
            "swapped",
        ]
    )
    parent = ScriptedModel([ScriptedModel.call("publisher", page="faq"), "Swapped the pages."])
    run = run_prompt(
        top(sub_agent("publisher", [site.publish, site.unpublish], child, "native")), model=parent
    )
    [first] = run.run_sync().pending

    again = run.resume_sync({first.call_id: first.approve()})

    assert again.stopped_by == "paused" and site.ran == ["publish faq"]
    [second] = again.pending
    assert (second.tool, second.via) == ("unpublish", ("publisher",))
    assert (len(parent.requests), len(child.requests)) == (1, 2)

    done = run.resume_sync({second.call_id: second.approve()})

    assert done.answer == "Swapped the pages." and site.ran == ["publish faq", "unpublish old"]
    assert (len(parent.requests), len(child.requests)) == (2, 3)


# -- decisions bound and sealed ----------------------------------------------------------------


def test_decisions_for_a_sub_agents_call_are_bound_to_it_and_to_the_parents_run() -> None:
    site = Site()
    seen: list[ApprovalRequest] = []

    def spy(ctx: ExecutionContext, request: ApprovalRequest) -> None:
        seen.append(request)  # decides nothing: the call is held

    child = ScriptedModel([ScriptedModel.call("publish", page="faq"), "published"])
    parent = ScriptedModel([ScriptedModel.call("publisher", page="faq"), "ok"])
    run = run_prompt(
        top(sub_agent("publisher", [site.publish], child, "native")), model=parent, approve=spy
    )
    paused = run.run_sync()
    [held] = paused.pending
    [asked] = seen  # the approver saw the call in the sub-agent's run
    assert asked.via == ("publisher",) and asked.run_id != held.run_id

    refused = {
        "the sub-agent's own request": {held.call_id: asked.approve()},
        "the inner call id": {asked.call_id: Approval.granted()},
        "edited arguments": {
            held.call_id: dataclasses.replace(held, args={"page": "home"}, digest="x").approve()
        },
    }
    reasons = {}
    for name, decisions in refused.items():
        with pytest.raises(ResumeError) as caught:
            run.resume_sync(decisions)
        reasons[name] = " ".join(caught.value.refused.values())
    assert reasons == {
        "the sub-agent's own request": f"was made for the call {asked.call_id}, not this one",
        "the inner call id": f"no call with this id is held (held: {held.call_id})",
        "edited arguments": "was made for other arguments than the ones held",
    }
    assert site.ran == [] and len(child.requests) == 1  # nothing ran, nobody was asked

    done = run.resume_sync({held.call_id: held.approve()})
    assert done.ok and site.ran == ["publish faq"]
    with pytest.raises(ResumeError, match="not paused"):
        run.resume_sync({held.call_id: held.approve()})  # once
    assert site.ran == ["publish faq"]


def test_an_approver_answering_in_the_run_decides_the_sub_agents_call_with_no_pause() -> None:
    site = Site()
    child = ScriptedModel([ScriptedModel.call("publish", page="faq"), "published"])
    parent = ScriptedModel([ScriptedModel.call("publisher", page="faq"), "ok"])

    def approve(ctx: ExecutionContext, request: ApprovalRequest) -> Approval:
        return request.approve() if request.via == ("publisher",) else request.deny()

    result = run_prompt(
        top(sub_agent("publisher", [site.publish], child, "native")), model=parent, approve=approve
    ).run_sync()
    assert result.ok and site.ran == ["publish faq"] and result.pending == ()


def test_usage_counts_a_resumed_sub_agents_tokens_once() -> None:
    def scripted() -> tuple[ScriptedModel, Any]:
        site = Site()
        child = ScriptedModel([ScriptedModel.call("publish", page="faq"), "published"])
        parent = ScriptedModel([ScriptedModel.call("publisher", page="faq"), "ok"])
        return parent, top(sub_agent("publisher", [site.publish], child, "native"))

    parent, build = scripted()
    paused_run = run_prompt(build, model=parent)
    [held] = paused_run.run_sync().pending
    paused_run.resume_sync({held.call_id: Approval.granted()})

    parent, build = scripted()
    at_once = run_prompt(build, model=parent, approve=lambda ctx, request: Approval.granted())
    assert at_once.run_sync().ok

    resumed_usage, at_once_usage = run_sync(paused_run.usage()), run_sync(at_once.usage())
    assert resumed_usage == at_once_usage and resumed_usage.input_tokens > 0


# -- a real server -------------------------------------------------------------------------------


def test_a_native_sub_agent_on_an_openai_compatible_server_resumes_without_a_repeat(
    loopback: LoopbackServer,
) -> None:
    site = Site()
    # One server for both models, in the order they ask: parent, child, (resume) child, parent.
    loopback.respond_with(
        chat_script(
            [
                calls(("publisher", {"page": "faq"})),
                calls(("publish", {"page": "faq"})),
                "faq published",
                "The FAQ is live.",
            ]
        )
    )
    model = OpenAIChatModel("gpt-test", api_key="k", base_url=loopback.openai_base_url)

    def publisher(args: Page, prompt: Prompt) -> None:
        prompt.def_tool(site.publish)
        prompt.user(f"Publish {args.page}")

    def build(prompt: Prompt) -> None:
        prompt.def_agent("publisher", "Publishes pages.", Page, publisher)
        prompt.user("Publish the FAQ")

    run = run_prompt(build, model=model)
    paused = run.run_sync()
    assert paused.stopped_by == "paused" and len(loopback.requests) == 2
    [held] = paused.pending

    done = run.resume_sync({held.call_id: held.approve()})

    assert done.answer == "The FAQ is live." and site.ran == ["publish faq"]
    assert len(loopback.requests) == 4
    assert last_tool_text(loopback.requests[2]) == "faq is live"  # the child went on
    assert last_tool_text(loopback.requests[3]) == "faq published"  # its answer, the result


# -- run_prompt itself ------------------------------------------------------------------------


def test_a_resumed_prompt_run_goes_on_calling_its_callbacks() -> None:
    site = Site()
    model = ScriptedModel(
        [
            ScriptedModel.call("publish", page="faq"),
            ScriptedModel.call("preview", page="faq"),
            "Published and previewed.",
        ]
    )
    steps: list[int] = []
    finished: list[str] = []

    def build(prompt: Prompt) -> None:
        prompt.def_tool(site.publish)
        prompt.def_tool(site.preview)
        prompt.user("Publish the FAQ, then preview it")

    run = run_prompt(
        build,
        model=model,
        on_step=lambda step: steps.append(step.index),
        on_finish=lambda result: finished.append(result.stopped_by),
    )
    paused = run.run_sync()
    assert (steps, finished) == ([1], ["paused"])
    [held] = paused.pending

    done = run.resume_sync({held.call_id: held.approve()})

    assert done.answer == "Published and previewed."
    assert site.ran == ["publish faq", "preview faq"] and len(model.requests) == 3
    assert (steps, finished) == ([1, 2, 3], ["paused", "answer"])
    assert run_sync(run.text()) == "Published and previewed."


def test_resuming_a_prompt_run_that_did_not_pause_says_so() -> None:
    run = run_prompt(lambda prompt: prompt.user("Hi"), model=ScriptedModel(["Hello"]))
    assert run.run_sync().answer == "Hello"
    with pytest.raises(ResumeError, match=r"not paused on held calls \(stopped_by='answer'\)"):
        run.resume_sync({"call_1": Approval.granted()})
