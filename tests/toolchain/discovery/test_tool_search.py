"""Tool discovery with both agents: search then call, inactive tools, a second search,
approvals (granted, denied, paused and resumed), working memory, and what each
request sends (the text-mode prompt stays byte-identical; native specs are appended).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence

import pytest

from agents import ReActAgent, ResumeError
from agents.models import Message, ScriptedModel
from tests.support.agent_kinds import KINDS, Kind, Output, answer, call
from tests.support.agent_kinds import agent as agent_of
from tests.toolchain.discovery.cms import (
    WORKFLOWS,
    build,
    create_page,
    index,
    list_pages,
    ran,
    search_for,
    search_result,
    spec_names,
    tool_texts,
)
from toolchain import ExecutionContext, JSONToolChain
from toolchain.discovery import (
    Approval,
    ApprovalRequest,
    KeywordSearch,
    ToolIndex,
    ToolIndexError,
    ToolInfo,
    ToolSearch,
    WorkingMemory,
)


@pytest.fixture(autouse=True)
def _clear() -> None:
    ran.clear()


# -- the index ------------------------------------------------------------------------


def test_startup_validation_reports_every_problem_at_once() -> None:
    bad = ToolIndex(
        [list_pages, create_page],
        [ToolInfo("list_pages", related=("move_page",)), ToolInfo("rename_page")],
        extractors={"export_site": lambda result: []},
        require_info=True,
    )
    with pytest.raises(ToolIndexError) as raised:
        ToolSearch(bad, backend=KeywordSearch(), always_active=["archive"])
    assert raised.value.problems == (
        "the tool 'create_page' has no metadata (ToolInfo)",
        "'list_pages' lists the related tool 'move_page', which is not registered",
        "metadata names 'rename_page', which is not a registered tool",
        "a custom extractor is given for 'export_site', which is not a registered tool",
        "always_active names 'archive', which is not in the index",
    )


def test_deferral_switches_on_when_definitions_exceed_the_budget() -> None:
    small = ToolSearch(index(), backend=KeywordSearch(), budget_tokens=10_000)
    large = ToolSearch(index(), backend=KeywordSearch(), budget_tokens=50)
    assert not small.defers and "tool_search" not in [t.name for t in small.tools()]
    assert large.defers and large.tools()[0].name == "tool_search"
    assert 50 < large.definition_tokens < 10_000


# -- search then call ---------------------------------------------------------------------


@KINDS
def test_search_then_call(kind: Kind) -> None:
    model = ScriptedModel(
        [
            call(kind, "tool_search", query="find an image"),
            call(kind, "search_images", query="mountain"),
            answer(kind, "Found mountain.jpg"),
        ]
    )
    search = search_for()
    result = build(kind, model, search).run_sync("Find a mountain image")
    assert result.ok and result.answer == "Found mountain.jpg"
    assert ran == [("search_images", {"query": "mountain"})]
    first = model.requests[0]
    system = first.messages[0].text_content()
    assert "tool_search" in system and "Only some tools are listed" in system
    found = json.loads(search_result(kind, result))
    # The best match described and callable; the other match named, to search by name.
    assert [entry["name"] for entry in found["found"]] == ["search_images"]
    assert found["other_matches"] == ["attach_image"]
    assert found["workflow"] == WORKFLOWS["images"]
    assert "note" not in found  # tool_search's description says how to use the answer
    entry = found["found"][0]
    assert entry["hint"] == "Scores near 1 are the best matches."
    assert entry["related"] == ["attach_image"]
    if kind == "react":  # text mode: the schema comes in the result, the prompt stays
        assert entry["description"] == "Search the image library by description."
        assert entry["parameters"]["properties"]["query"]["type"] == "string"
        assert "- search_images:" not in system and "- send_email:" not in system
        systems = {request.messages[0].text_content() for request in model.requests}
        assert systems == {system}
    else:  # native: the spec, sent from the next request, has the description and schema
        assert "parameters" not in entry and "description" not in entry
        specs = spec_names(model)
        assert specs[0] == ["tool_search"]
        assert specs[1][0] == "tool_search" and "search_images" in specs[1]
        assert specs[2][: len(specs[1])] == specs[1]  # appended, never reordered
    assert search.active(ExecutionContext()) == ()  # state belongs to a run


@KINDS
def test_calling_an_inactive_tool_says_how_to_find_it(kind: Kind) -> None:
    model = ScriptedModel(
        [
            call(kind, "create_page", title="Team"),
            call(kind, "tool_search", query="add a new page"),
            call(kind, "create_page", title="Team"),
            answer(kind, "done"),
        ]
    )
    result = build(kind, model, search_for()).run_sync("Add a Team page")
    assert result.ok
    assert ran == [("create_page", {"title": "Team"})]  # only after the search
    error = result.steps[0].tool_results[0].raw.errors[0]
    assert error is not None and error.kind == "unknown_tool"
    assert error.message == (
        'create_page is not active: search for it first, e.g. tool_search(query="add a new page")'
    )
    assert error.message in tool_texts(result)


@KINDS
def test_a_second_search_adds_tools(kind: Kind) -> None:
    model = ScriptedModel(
        [
            call(kind, "tool_search", query="find an image"),
            call(kind, "search_images", query="hills"),
            call(kind, "tool_search", query="email someone"),
            call(kind, "send_email", to="ana@example.com", body="img-7"),
            answer(kind, "sent"),
        ]
    )
    search = search_for(limit=2)
    ctx = ExecutionContext()
    result = build(kind, model, search).run_sync("Mail Ana a hills image", ctx=ctx)
    assert result.ok
    assert [name for name, _ in ran] == ["search_images", "send_email"]
    assert search.active(ctx)[-1] == "send_email"
    saved = result.extension_state["tool_search"]
    assert isinstance(saved, dict) and saved["active"] == list(search.active(ctx))
    if kind == "native":
        specs = spec_names(model)
        assert specs[3][: len(specs[2])] == specs[2] and specs[3][-1] == "send_email"


@KINDS
def test_activation_lasts_for_the_conversation(kind: Kind) -> None:
    first_model = ScriptedModel(
        [call(kind, "tool_search", query="find an image"), answer(kind, "ready")]
    )
    search = search_for()
    first = build(kind, first_model, search).run_sync("Get ready to find images")
    second_model = ScriptedModel([call(kind, "search_images", query="sea"), answer(kind, "ok")])
    second = build(kind, second_model, search).run_sync(
        "Find a sea image",
        history=first.messages,
        extension_state=first.extension_state,
    )
    assert second.ok and ran == [("search_images", {"query": "sea"})]


# -- approvals ------------------------------------------------------------------------------


@KINDS
def test_approval_granted_and_denied(kind: Kind) -> None:
    asked: list[ApprovalRequest] = []

    def approve(ctx: ExecutionContext, request: ApprovalRequest) -> Approval:
        asked.append(request)
        if request.args["page_id"] == "p1":
            return Approval.granted()
        return Approval.denied("the About page is still in review")

    model = ScriptedModel(
        [
            call(kind, "tool_search", query="publish a page"),
            call(kind, "publish_page", page_id="p1"),
            call(kind, "publish_page", page_id="p2"),
            answer(kind, "Home is live"),
        ]
    )
    result = build(kind, model, search_for(approve=approve)).run_sync("Publish Home and About")
    assert result.ok
    assert ran == [("publish_page", {"page_id": "p1"})]
    assert [r.args for r in asked] == [{"page_id": "p1"}, {"page_id": "p2"}]
    assert asked[0].risk == "moderate"
    error = result.steps[2].tool_results[0].raw.errors[0]
    assert error is not None and error.kind == "refused"
    assert "was not approved: the About page is still in review" in error.message


@KINDS
def test_a_run_pauses_for_approval_and_resumes_with_the_decision(kind: Kind) -> None:
    """No approver: the call is held in the core (``result.pending``), and resuming runs
    it with the arguments that were reviewed; the model is not asked to call it again."""
    model = ScriptedModel(
        [
            call(kind, "tool_search", query="publish a page"),
            call(kind, "publish_page", page_id="p1"),
            answer(kind, "Home is live"),
        ]
    )
    search = search_for()
    agent = build(kind, model, search)
    paused = agent.run_sync("Publish Home")
    assert paused.stopped_by == "paused" and ran == []
    assert paused.paused is not None and "publish_page" in paused.paused
    [held] = paused.pending
    assert (held.tool, held.args, held.risk) == ("publish_page", {"page_id": "p1"}, "moderate")
    with pytest.raises(ResumeError, match="no call with this id is held"):
        agent.resume_sync(paused, {"no-such-call": Approval.denied()})

    resumed = agent.resume_sync(paused, {held.call_id: Approval.granted("ok by Ana")})
    assert resumed.ok and resumed.answer == "Home is live"
    assert ran == [("publish_page", {"page_id": "p1"})]
    assert len(model.requests) == 3  # the search, the call, the answer: none repeated
    assert resumed.steps[1].tool_results[0].raw.output(0, str) == "published"


# -- working memory ---------------------------------------------------------------------------


@KINDS
def test_entities_are_listed_after_a_lookup(kind: Kind) -> None:
    seen: list[str] = []

    def player(messages: Sequence[Message]) -> Output:
        seen.append(messages[-1].text_content())
        step = len(seen)
        if step == 1:
            return call(kind, "tool_search", query="find an image")
        if step == 2:
            return call(kind, "search_images", query="mountain")
        return answer(kind, "img-7")

    search = search_for()
    memory = WorkingMemory(search.index)
    result = build(kind, ScriptedModel(player), search, memory).run_sync("Find a mountain")
    assert result.ok
    assert "Known entities" not in seen[1]
    assert "- image: mountain.jpg (img-7)" in seen[2]
    assert "Tools found: search_images" in seen[2]
    saved = result.extension_state["working_memory"]
    assert saved == {
        "entities": [["image", "img-7", "mountain.jpg"]],
        "used": ["tool_search", "search_images"],
    }


def test_memory_deduplicates_keeps_the_latest_and_survives_bad_extractors() -> None:
    def broken(result: object) -> list[object]:
        raise RuntimeError("bad extractor")

    memory = WorkingMemory(index(), extractors={"send_email": broken}, shown=2, kept=3)  # type: ignore[dict-item]
    ctx = ExecutionContext()
    memory.remember(ctx, "list_pages", [{"id": "p1", "name": "Home"}, {"id": "p2", "name": "A"}])
    memory.remember(ctx, "create_page", {"id": "p1", "name": "Home v2"})
    memory.remember(ctx, "create_page", {"id": "p3", "name": "C"})
    memory.remember(ctx, "create_page", {"id": "p4", "name": "D"})
    assert memory.remember(ctx, "send_email", "sent") == []
    assert [e.id for e in memory.entities(ctx)] == ["p1", "p3", "p4"]  # p2, oldest, dropped
    assert memory.entities(ctx)[0].name == "Home v2"
    assert memory.prompt_section(ctx).splitlines()[1:] == ["- page: C (p3)", "- page: D (p4)"]


# -- hostile input ------------------------------------------------------------------------


class _Broken:
    name = "broken"

    def index(self, documents: Sequence[object]) -> None:
        return None

    async def search(self, query: str, limit: int) -> object:
        raise RuntimeError("index server down")


def _execute(chain: JSONToolChain, ctx: ExecutionContext, name: str, **args: object) -> str:
    from formats import XMLFormat

    content = json.dumps({"tool": name, "args": args})
    return chain.execute_sync(ctx, content, XMLFormat()).text


def test_a_broken_backend_or_approver_fails_only_that_call(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def approve(ctx: ExecutionContext, request: ApprovalRequest) -> Approval:
        raise ConnectionError("approval service down")

    search = ToolSearch(index(), backend=_Broken(), defer=True, approve=approve)  # type: ignore[arg-type]
    chain, ctx = JSONToolChain(extensions=[search]), ExecutionContext()
    assert "the search failed (RuntimeError); retry" in _execute(
        chain, ctx, "tool_search", query="x"
    )
    # the inactive-tool message falls back to the tool's name as the query
    assert 'tool_search(query="publish_page")' in _execute(chain, ctx, "publish_page", page_id="p")
    search.index.info["list_pages"] = ToolInfo("list_pages", requires_confirmation=True)
    _search_state_activate(search, ctx, "list_pages")
    text = _execute(chain, ctx, "list_pages")
    assert "needs approval, and asking for it failed (ConnectionError: approval service " in text
    assert ran == []
    assert "tool search failed" in caplog.text and "approval callback failed" in caplog.text


def test_huge_and_empty_queries_are_answered() -> None:
    search = search_for()
    chain, ctx = JSONToolChain(extensions=[search]), ExecutionContext()
    assert "No tool matches ''" in _execute(chain, ctx, "tool_search", query="")
    huge = "image " * 100_000  # 600 KB, under the chain's 1 MB cap on call content
    assert "search_images" in _execute(chain, ctx, "tool_search", query=huge)
    assert "invalid arguments" in _execute(chain, ctx, "tool_search", query="x", limit=500)


def _search_state_activate(search: ToolSearch, ctx: ExecutionContext, name: str) -> None:
    search.load_state(ctx, {"active": [name]})


# -- review fixes ---------------------------------------------------------------------------


@KINDS
def test_used_lists_the_index_tools_called_successfully(kind: Kind) -> None:
    model = ScriptedModel(
        [
            call(kind, "send_email", to="ana@example.com", body="hi"),  # inactive: refused
            call(kind, "tool_search", query="find an image"),
            call(kind, "search_images", query="hills"),
            answer(kind, "done"),
        ]
    )
    search = search_for()
    ctx = ExecutionContext()
    result = build(kind, model, search).run_sync("Find hills", ctx=ctx)
    assert result.ok
    assert search.used(ctx) == ("search_images",)
    saved = result.extension_state["tool_search"]
    assert isinstance(saved, dict) and saved["used"] == ["search_images"]


def test_a_query_that_finds_nothing_is_not_echoed_whole() -> None:
    search = search_for()
    chain, ctx = JSONToolChain(extensions=[search]), ExecutionContext()
    huge = "zzzz " * 100_000
    text = _execute(chain, ctx, "tool_search", query=huge)
    assert "No tool matches" in text and len(text) < 1_000


@KINDS
def test_a_broken_saved_state_is_logged_and_the_run_goes_on(
    kind: Kind, caplog: pytest.LogCaptureFixture
) -> None:
    model = ScriptedModel([answer(kind, "hello")])
    broken = {"tool_search": {"active": "not a list"}, "working_memory": 42}
    search = search_for()
    result = build(kind, model, search, WorkingMemory(search.index)).run_sync(
        "Hi", extension_state=broken
    )
    assert result.ok and result.answer == "hello"
    assert "tool_search failed to load its state" in caplog.text
    assert "working_memory failed to load its state" in caplog.text


def test_a_hook_that_changes_the_prompt_does_not_bring_back_the_hidden_tools() -> None:
    import dataclasses

    from agents.steps import StepRequest

    def rules(ctx: ExecutionContext, step: StepRequest) -> StepRequest:
        return dataclasses.replace(step, system_prompt=step.system_prompt + "\n\nBe brief.")

    model = ScriptedModel([answer("react", "hi")])
    agent = ReActAgent(
        model, tool_chain=JSONToolChain(), extensions=[search_for()], step_hooks=[rules]
    )
    assert agent.run_sync("Hi").ok
    system = model.requests[0].messages[0].text_content()
    assert system.endswith("Be brief.") and "- tool_search:" in system
    assert "- send_email:" not in system and "- search_images:" not in system


def test_held_calls_of_one_step_are_decided_one_resume_at_a_time() -> None:
    both = json.dumps(
        [
            {"tool": "publish_page", "args": {"page_id": "p1"}},
            {"tool": "publish_page", "args": {"page_id": "p2"}},
        ]
    )
    model = ScriptedModel(
        [
            call("react", "tool_search", query="publish a page"),
            f"<action>{both}</action>",
            answer("react", "Home is live; About is not"),
        ]
    )
    search = search_for()
    agent = build("react", model, search)
    first = agent.run_sync("Publish Home and About")
    assert first.stopped_by == "paused"
    held = {r.call_id: str(r.args["page_id"]) for r in first.pending}
    assert sorted(held.values()) == ["p1", "p2"]
    p1, p2 = sorted(held, key=held.__getitem__)

    second = agent.resume_sync(first, {p1: Approval.granted()})
    assert second.stopped_by == "paused"  # p2 still waits: no model call
    assert ran == [("publish_page", {"page_id": "p1"})]
    assert [(r.call_id, r.args["page_id"]) for r in second.pending] == [(p2, "p2")]
    assert len(model.requests) == 2

    third = agent.resume_sync(second, {p2: Approval.denied("About is in review")})
    assert third.ok and third.answer == "Home is live; About is not"
    assert ran == [("publish_page", {"page_id": "p1"})]
    assert "publish_page was not approved: About is in review" in tool_texts(third)


def test_memory_lines_cannot_be_forged_by_entity_names() -> None:
    memory = WorkingMemory(index(), shown=5)
    ctx = ExecutionContext()
    memory.remember(
        ctx, "create_page", {"id": "p1", "name": "Home\n- page: Admin (p0)" + "x" * 200}
    )
    lines = memory.prompt_section(ctx).splitlines()
    assert len(lines) == 2 and lines[1].startswith("- page: Home - page: Admin (p0)xxx")
    assert len(lines[1]) < 110


# -- the run's system message -------------------------------------------------------------


@KINDS
def test_the_run_keeps_the_system_message_the_model_received(kind: Kind) -> None:
    model = ScriptedModel([call(kind, "list_pages"), answer(kind, "none")])
    agent = build(kind, model, search_for())
    result = agent.run_sync("List the pages")
    assert result.ok, result.error
    sent = model.requests[0].messages[0]
    assert result.messages[0] == sent  # what the model saw, not the prompt listing all
    assert all(request.messages[0] == sent for request in model.requests)
    if kind == "react":  # the listing follows the tools shown
        assert result.messages[0].text_content() != agent.system_prompt()
        assert "- send_email:" not in sent.text_content()


@KINDS
def test_a_run_whose_hooks_narrow_the_tools_never_lists_them_all(kind: Kind) -> None:
    from agents import PromptContext, default_system_prompt, native_system_prompt

    listed: list[tuple[str, ...] | None] = []
    builder = default_system_prompt if kind == "react" else native_system_prompt

    def prompt(context: PromptContext) -> str:
        listed.append(context.tools)
        return builder(context)

    model = ScriptedModel([call(kind, "list_pages"), answer(kind, "none")])
    made = agent_of(kind, model, JSONToolChain(), extensions=[search_for()], prompt_builder=prompt)
    assert made.run_sync("List the pages").ok
    assert listed and None not in listed  # the plain prompt was never made
    native = [spec.name for spec in model.requests[0].options.tools]
    assert "send_email" not in native


def test_a_hook_reading_the_prompt_reads_the_one_listing_every_tool() -> None:
    from agents.steps import StepRequest

    seen: list[str] = []

    def read(ctx: ExecutionContext, step: StepRequest) -> None:
        seen.append(step.system_prompt)

    model = ScriptedModel([answer("react", "hi")])
    agent = ReActAgent(
        model, tool_chain=JSONToolChain(), extensions=[search_for()], step_hooks=[read]
    )
    result = agent.run_sync("Hi")
    assert result.ok
    # The hook runs after ToolSearch's before_step (which narrowed only the tools): the
    # prompt it reads is the agent's own, listing every tool, as before.
    assert seen == [agent.system_prompt()] and "- send_email:" in seen[0]
    sent = model.requests[0].messages[0]
    assert "- send_email:" not in sent.text_content()
    assert result.messages[0] == sent


def test_a_hook_that_writes_the_agents_own_prompt_leaves_it_the_agents() -> None:
    """A prompt a hook set to the agent's own text (without reading the request's) is
    compared with it, so the listing still follows the tools shown."""
    from agents.steps import StepRequest

    def same(ctx: ExecutionContext, step: StepRequest) -> StepRequest:
        return dataclasses.replace(step, system_prompt=agent.system_prompt())

    model = ScriptedModel([answer("react", "hi")])
    agent = ReActAgent(
        model, tool_chain=JSONToolChain(), extensions=[search_for()], step_hooks=[same]
    )
    result = agent.run_sync("Hi")
    assert result.ok
    sent = model.requests[0].messages[0].text_content()
    assert "- tool_search:" in sent and "- send_email:" not in sent
    assert result.messages[0].text_content() == sent


@KINDS
def test_a_run_that_made_no_call_keeps_the_agents_prompt(kind: Kind) -> None:
    model = ScriptedModel([answer(kind, "never asked")])
    made = build(kind, model, search_for())
    ctx = ExecutionContext()
    ctx.cancel("before it starts")
    result = made.run_sync("Hi", ctx=ctx)
    assert result.stopped_by == "cancelled" and not model.requests
    assert result.messages[0] == Message.text("system", made.system_prompt())
