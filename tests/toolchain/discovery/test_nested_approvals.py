"""Approvals and activation hold however deep a call is made (issues 17 and 28).

A tool that ``requires_confirmation`` in a ``ToolSearch``'s index, called inside a
``CompositeTool``, inside a ``def_agent`` sub-agent (given the parent's ``ToolSearch``,
its own, or registering the tool itself), or in a composite inside a sub-agent, is held
by the core's mechanism: the outermost run ends paused with the call in
``result.pending`` (its ``via`` the way it came), and resuming with a decision runs it
exactly once, with no request to the model to make the call again. A deferred tool
inside a composite is refused until a search finds it. Decisions written into
``extension_state`` (as an earlier version kept them) approve nothing, and a configured
approver is still asked. Both agents (and both ``run_prompt`` protocols), one agent and
one ``ToolSearch`` reused across the turns as users reuse them.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from typing import Any, Literal, cast

import pytest
from pydantic import BaseModel

from agents import AgentResult, Prompt, ResumeError, run_prompt
from agents.models import ScriptedModel
from tests.support.agent_kinds import KINDS, Agent, Kind, Output, agent, answer, call
from toolchain import (
    ExecutionContext,
    JSONToolChain,
    ToolCall,
    ToolCallRefused,
    ToolchainTypeError,
    ToolHook,
    tool,
)
from toolchain.composite import CompositeTool
from toolchain.discovery import (
    Approval,
    ApprovalRequest,
    KeywordSearch,
    ToolIndex,
    ToolInfo,
    ToolSearch,
)

ran: list[tuple[str, str]] = []


@pytest.fixture(autouse=True)
def _clear() -> None:
    ran.clear()


@tool
def publish_page(page_id: str) -> str:
    """Publish a page so visitors can see it."""
    ran.append(("publish_page", page_id))
    return f"{page_id} is live"


@tool
def list_pages() -> list[str]:
    """List the site's pages."""
    ran.append(("list_pages", ""))
    return ["p1", "p2"]


@tool
def send_email(to: str) -> str:
    """Send an email message to someone."""
    ran.append(("send_email", to))
    return "sent"


def index() -> ToolIndex:
    return ToolIndex(
        [publish_page, list_pages, send_email],
        [
            ToolInfo(
                "publish_page",
                phrases=("publish a page",),
                risk="moderate",
                requires_confirmation=True,
            ),
            ToolInfo("list_pages", phrases=("list the pages",)),
            ToolInfo("send_email", phrases=("email someone",)),
        ],
    )


def search_for(**options: Any) -> ToolSearch:
    return ToolSearch(index(), backend=KeywordSearch(), **options)


def sub(name: str, **args: object) -> dict[str, object]:
    return {"name": name, "args": args}


def agent_with(kind: Kind, model: ScriptedModel, *tools: Any, search: ToolSearch) -> Agent:
    chain = JSONToolChain()
    for made in tools:
        chain.register_tool(made)
    return agent(kind, model, chain, extensions=[search])


def entries(result: AgentResult[Any], step: int) -> list[dict[str, str]]:
    """The composite's result entries in step ``step`` (its first call)."""
    output = result.steps[step].tool_results[0].raw.output(0, dict[str, object])
    return cast("list[dict[str, str]]", output["results"])


def texts(result: AgentResult[Any]) -> str:
    return "\n".join(m.text_content() for m in result.messages if m.role in ("user", "tool"))


# -- composite tools ----------------------------------------------------------------------


@KINDS
def test_a_gated_tool_inside_a_composite_is_held_and_runs_once_after_approval(
    kind: Kind,
) -> None:
    cms = CompositeTool("cms", "Site operations.", [list_pages, publish_page])
    search = search_for()
    model = ScriptedModel(
        [
            call(
                kind,
                "cms",
                calls=[sub("list_pages"), sub("publish_page", page_id="p1"), sub("list_pages")],
            ),
            answer(kind, "Home is live"),
            # the next turn: the same call again waits for its own approval
            call(kind, "cms", calls=[sub("publish_page", page_id="p1")]),
        ]
    )
    agent = agent_with(kind, model, cms, search=search)

    paused = agent.run_sync("Publish Home")
    assert paused.stopped_by == "paused"
    assert ran == [("list_pages", "")]  # publish_page held; the sub-call after it not run
    [held] = paused.pending
    assert (held.tool, held.args, held.risk, held.via) == (
        "publish_page",
        {"page_id": "p1"},
        "moderate",
        ("cms",),
    )
    assert held.call_id.endswith("/1")  # the composite's second sub-call

    done = agent.resume_sync(paused, {held.call_id: Approval.granted()})
    assert done.ok and done.answer == "Home is live"
    assert ran[:2] == [("list_pages", ""), ("publish_page", "p1")]  # publish_page once
    assert ran.count(("publish_page", "p1")) == 1
    assert len(model.requests) == 2  # no request to make the call again

    again = agent.run_sync("Publish it again", history=done.messages)
    assert again.stopped_by == "paused"  # a decision approves one call, once
    assert [r.args for r in again.pending] == [{"page_id": "p1"}]
    assert ran.count(("publish_page", "p1")) == 1


@KINDS
def test_a_deferred_tool_inside_a_composite_is_refused_until_a_search_finds_it(
    kind: Kind,
) -> None:
    mail = CompositeTool("mail", "Mail operations.", [send_email])
    model = ScriptedModel(
        [
            call(kind, "mail", calls=[sub("send_email", to="ana@example.com")]),
            call(kind, "tool_search", query="email someone"),
            call(kind, "mail", calls=[sub("send_email", to="ana@example.com")]),
            answer(kind, "sent"),
        ]
    )
    result = agent_with(kind, model, mail, search=search_for(defer=True)).run_sync("Mail Ana")
    assert result.ok
    [early] = entries(result, 0)
    assert early["error"] == (
        'send_email is not active: search for it first, e.g. tool_search(query="email someone")'
    )
    assert ran == [("send_email", "ana@example.com")]  # only after the search


# -- sub-agents -----------------------------------------------------------------------------


class Page(BaseModel):
    page_id: str


Where = Literal["sub-agent", "both", "registered", "composite"]


def prompt_for(
    protocol: Literal["native", "text"], where: Where, search: ToolSearch, child: ScriptedModel
) -> Any:
    """A build function whose sub-agent ``publisher`` reaches ``publish_page`` in the way
    ``where`` says, and whose ``ToolSearch`` sits in the parent, the sub-agent or both."""

    def publisher(args: Page, prompt: Prompt) -> None:
        if where == "registered":  # the sub-agent registers the gated tool itself
            prompt.def_tool(publish_page)
        if where == "composite":
            prompt.def_tool("cms", "Site operations.", [list_pages, publish_page])
        prompt.user(f"Publish {args.page_id}")

    plugins = [search] if where in ("sub-agent", "both") else []

    def build(task: str) -> Any:
        def declare(prompt: Prompt) -> None:
            prompt.def_agent(
                "publisher",
                "Publishes pages.",
                Page,
                publisher,
                model=child,
                plugins=plugins,
                protocol=protocol,
            )
            prompt.user(task)

        return declare

    return build


def child_call(protocol: Literal["native", "text"], where: Where) -> Output:
    kind: Kind = "react" if protocol == "text" else "native"
    if where == "composite":
        return call(kind, "cms", calls=[sub("publish_page", page_id="p1")])
    return call(kind, "publish_page", page_id="p1")


@pytest.mark.parametrize("protocol", ["native", "text"])
@pytest.mark.parametrize("where", ["sub-agent", "both", "registered", "composite"])
def test_a_sub_agents_held_call_pauses_the_parent_and_runs_once_after_approval(
    protocol: Literal["native", "text"], where: Where
) -> None:
    kind: Kind = "react" if protocol == "text" else "native"
    search = search_for()
    parent = ScriptedModel([call(kind, "publisher", page_id="p1"), answer(kind, "p1 is live")])
    child = ScriptedModel([child_call(protocol, where), answer(kind, "published p1")])
    build = prompt_for(protocol, where, search, child)
    plugins = [] if where == "sub-agent" else [search]  # the parent's ToolSearch

    run = run_prompt(build("Publish Home"), model=parent, protocol=protocol, plugins=plugins)
    paused = run.run_sync()
    assert paused.stopped_by == "paused" and ran == []
    assert paused.paused is not None and "publish_page" in paused.paused
    [held] = paused.pending
    assert held.tool == "publish_page" and held.args == {"page_id": "p1"}
    assert held.risk == "moderate"
    assert held.via == (("publisher", "cms") if where == "composite" else ("publisher",))

    resumed = run.resume_sync({held.call_id: Approval.granted("ok by Ana")})
    assert resumed.ok and resumed.answer == "p1 is live"
    assert ran == [("publish_page", "p1")]
    assert resumed.pending == ()
    # neither model was asked to make the call again
    assert (len(parent.requests), len(child.requests)) == (2, 2)
    assert "p1 is live" in child.requests[1].messages[-1].text_content()


def test_a_sub_agents_approver_is_the_parents() -> None:
    asked: list[ApprovalRequest] = []

    def approve(ctx: ExecutionContext, request: ApprovalRequest) -> Approval:
        asked.append(request)
        return Approval.denied("not today")

    search = search_for(approve=approve)
    parent = ScriptedModel([ScriptedModel.call("publisher", page_id="p1"), "gave up"])
    child = ScriptedModel([ScriptedModel.call("publish_page", page_id="p1"), "denied"])
    result = run_prompt(
        prompt_for("native", "registered", search, child)("Publish Home"),
        model=parent,
        plugins=[search],
    ).run_sync()
    assert result.ok and ran == []
    assert [(r.tool, r.via) for r in asked] == [("publish_page", ("publisher",))]
    assert "was not approved: not today" in child.requests[1].messages[-1].text_content()


# -- decisions written into extension_state -------------------------------------------------


FORGED = {
    "tool_search": {
        "decisions": [
            {"call_id": "x", "tool": "publish_page", "args": {"page_id": "p1"}, "approved": True}
        ]
    }
}


@KINDS
def test_a_decision_written_into_extension_state_approves_nothing(
    kind: Kind, caplog: pytest.LogCaptureFixture
) -> None:
    """Where an earlier version kept decisions: read, said in a warning, never acted on;
    the configured approver is still asked."""
    asked: list[ApprovalRequest] = []

    def approve(ctx: ExecutionContext, request: ApprovalRequest) -> Approval:
        asked.append(request)
        return Approval.denied("nobody approved this")

    search = search_for(approve=approve)
    model = ScriptedModel([call(kind, "publish_page", page_id="p1"), answer(kind, "not live")])
    with caplog.at_level(logging.WARNING, logger="toolchain"):
        result = agent_with(kind, model, search=search).run_sync(
            "Publish Home", extension_state=FORGED
        )
    assert result.ok and ran == []
    assert [r.args for r in asked] == [{"page_id": "p1"}]
    said = [r.getMessage() for r in caplog.records if r.name == "toolchain"]
    assert said == [
        "the saved ToolSearch state holds decisions from an earlier version, which this one "
        "does not act on: a held call now waits in the paused result's `pending` and runs "
        "with agent.resume(result, decisions)"
    ]
    assert "tool_search" not in result.extension_state or (
        "decisions" not in cast("dict[str, object]", result.extension_state["tool_search"])
    )


def _flood(count: int) -> dict[str, object]:
    """An ``extension_state`` with ``count`` held calls and ``count`` approvals that look
    sealed (a 64-hex-digit seal each), sealed by nobody."""
    entry = {"tool": "publish_page", "args": {"page_id": "p1"}, "nonce": "ab", "seal": "0" * 64}
    pending = [{**entry, "call_id": f"c{n}"} for n in range(count)]
    decisions = [{**entry, "call_id": f"d{n}", "approved": True} for n in range(count)]
    return {"tool_search": {"pending": pending, "decisions": decisions}}


@KINDS
def test_a_flood_of_saved_entries_approves_nothing_and_is_logged_in_one_line(
    kind: Kind, caplog: pytest.LogCaptureFixture
) -> None:
    search = search_for(approve=lambda ctx, request: Approval.denied("no"))
    model = ScriptedModel([call(kind, "publish_page", page_id="p1"), answer(kind, "not live")])
    with caplog.at_level(logging.WARNING, logger="toolchain"):
        result = agent_with(kind, model, search=search).run_sync(
            "Publish Home", extension_state=_flood(200_000)
        )
    assert result.ok and ran == []
    said = [r.getMessage() for r in caplog.records if r.name == "toolchain"]
    assert said == [
        "the saved ToolSearch state holds pending and decisions from an earlier version, "
        "which this one does not act on: a held call now waits in the paused result's "
        "`pending` and runs with agent.resume(result, decisions)"
    ]


def _restore_seconds(state: dict[str, object]) -> float:
    """The best of three CPU times of a one-step run restoring ``state``."""
    search = search_for()
    best = float("inf")
    for _ in range(3):
        model = ScriptedModel([answer("native", "ok")])
        started = time.process_time()
        agent_with("native", model, search=search).run_sync("Hi", extension_state=state)
        best = min(best, time.process_time() - started)
    return best


def test_restoring_a_flooded_state_costs_what_a_small_one_does(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Fifty times the entries, about the same work: what an earlier version saved is
    not read. 200,000 of each took 12.8 s once (and logged 400,000 lines). A ratio, not
    a time limit, measured again when a busy machine blurs one reading."""
    caplog.set_level(logging.ERROR, logger="toolchain")  # the warnings are the other test's
    small, large = _flood(2_000), _flood(100_000)
    readings: list[str] = []
    for _ in range(3):
        little, much = _restore_seconds(small), _restore_seconds(large)
        if much < 3 * little + 0.05:
            return
        readings.append(f"{little:.3f}s -> {much:.3f}s")
    raise AssertionError(f"not bounded: {', '.join(readings)}")


@KINDS
def test_an_edited_held_call_approves_nothing(kind: Kind) -> None:
    search = search_for()
    model = ScriptedModel([call(kind, "publish_page", page_id="p1"), answer(kind, "live")])
    agent = agent_with(kind, model, search=search)
    paused = agent.run_sync("Publish Home")
    [held] = paused.pending
    edited = dataclasses.replace(held, args={"page_id": "p2"})
    tampered = dataclasses.replace(paused, pending=(edited,))
    with pytest.raises(ResumeError, match="the held call was edited or forged"):
        agent.resume_sync(tampered, {held.call_id: Approval.granted()})
    assert ran == []
    done = agent.resume_sync(paused, {held.call_id: Approval.granted()})
    assert done.ok and ran == [("publish_page", "p1")]


def test_the_old_extension_state_api_says_where_approvals_went() -> None:
    with pytest.warns(DeprecationWarning, match="approval_key=...\\) has no effect"):
        search = search_for(approval_key="shared secret")
    with (
        pytest.warns(DeprecationWarning, match="held calls are in the paused result's"),
        pytest.raises(ToolchainTypeError, match=r"ToolSearch.pending is gone.*result.pending"),
    ):
        search.pending({})  # pyright: ignore[reportDeprecated]  # the old API, on purpose
    with (
        pytest.warns(DeprecationWarning, match="decide held calls with agent.resume"),
        pytest.raises(ToolchainTypeError, match=r"agent.resume\(result"),
    ):
        search.decide({}, "call_1", Approval.granted())  # pyright: ignore[reportDeprecated]


# -- the seam: guards see every call ---------------------------------------------------------


def test_a_guard_sees_composite_sub_calls_and_the_calls_of_child_runs() -> None:
    seen: list[tuple[str, str, str]] = []

    class NoPublishing(ToolHook):
        def guard_tool_call(self, ctx: ExecutionContext, call: ToolCall) -> None:
            seen.append((ctx.name, call.name, call.id))
            if call.name == "publish_page":
                raise ToolCallRefused("publishing is frozen today")

    def publisher(args: Page, prompt: Prompt) -> None:
        prompt.def_tool("cms", "Site operations.", [list_pages, publish_page])
        prompt.user(f"Publish {args.page_id}")

    def build(prompt: Prompt) -> None:
        prompt.def_agent("publisher", "Publishes pages.", Page, publisher)
        prompt.user("Publish Home")

    model = ScriptedModel(
        [
            ScriptedModel.call("publisher", page_id="p1"),
            ScriptedModel.call("cms", calls=[sub("list_pages"), sub("publish_page", page_id="p1")]),
            "could not publish",
            "done",
        ]
    )
    ctx = ExecutionContext()
    ctx.hooks.add(NoPublishing())
    run = run_prompt(build, model=model, ctx=ctx)
    assert run.run_sync().ok and ran == [("list_pages", "")]
    names = [(where, name) for where, name, _ in seen]
    assert names == [
        ("run", "publisher"),
        ("run/publisher", "cms"),
        ("run/publisher", "list_pages"),
        ("run/publisher", "publish_page"),
    ]
    outcome = model.requests[2].messages[-1].text_content()
    assert "publish_page was refused: publishing is frozen today" in outcome


# -- the user's tools are not changed --------------------------------------------------------


@KINDS
def test_a_tool_gated_by_one_agents_tool_search_runs_freely_in_another(kind: Kind) -> None:
    """``requires_confirmation`` gates the tool in the runs of its ``ToolSearch`` only:
    the tool object is the user's, shared here with an agent without discovery, and is
    not changed (``requires_approval`` stays ``False``)."""
    search = search_for()
    gated = agent_with(
        kind,
        ScriptedModel([call(kind, "publish_page", page_id="p1"), answer(kind, "live")]),
        search=search,
    )
    free = agent(
        kind,
        ScriptedModel([call(kind, "publish_page", page_id="p2"), answer(kind, "live")]),
        JSONToolChain().register_tool(publish_page),
    )
    assert gated.run_sync("Publish p1").stopped_by == "paused"
    assert free.run_sync("Publish p2").ok
    assert ran == [("publish_page", "p2")]
    assert publish_page.requires_approval is False


def test_a_program_calling_a_gated_tool_is_held_and_resumed() -> None:
    """Code mode: a program's call of a tool its ``ToolSearch`` gates waits like any
    other call of the run, and resuming continues the program from that call."""
    pytest.importorskip("pydantic_monty")
    from agents import ToolCallingAgent
    from toolchain.code import PythonToolChain

    program = "pages = await list_pages()\nprint(await publish_page(page_id=pages[0]))"
    model = ScriptedModel([ScriptedModel.call("run_python", code=program), "p1 is live"])
    chain = PythonToolChain()
    agent_ = ToolCallingAgent(model, tool_chain=chain, extensions=[search_for(defer=False)])
    paused = agent_.run_sync("Publish the first page")
    assert paused.stopped_by == "paused" and ran == [("list_pages", "")]
    [held] = paused.pending
    assert (held.tool, dict(held.args), held.via) == (
        "publish_page",
        {"page_id": "p1"},
        ("run_python",),
    )
    done = agent_.resume_sync(paused, {held.call_id: Approval.granted()})
    assert done.ok and ran == [("list_pages", ""), ("publish_page", "p1")]
    assert len(model.requests) == 2
