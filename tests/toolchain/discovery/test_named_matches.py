"""A tool a search names among its other matches is callable as it is.

A model calls what it sees named. A call to a named match whose arguments validate
runs; one whose arguments do not is answered with the tool's parameters (which the
model has not seen: the search named it only); either way the tool is active from
then on, for the rest of the run and of the conversation. A tool no search named is
still refused until found (``test_tool_search.py``).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel, field_validator

from agents import ReActAgent, ToolCallingAgent
from agents.models import ScriptedModel
from benchmarks._cms_tools import cms_info, cms_tools
from formats import XMLFormat
from tests.support.agent_kinds import KINDS, Kind, answer, call
from tests.toolchain.discovery.cms import build, ran, search_for, search_result, spec_names
from toolchain import ExecutionContext, JSONToolChain, tool
from toolchain.discovery import (
    Approval,
    ApprovalRequest,
    KeywordSearch,
    ToolIndex,
    ToolInfo,
    ToolSearch,
)

ATTACH = {"page_id": "p1", "image_id": "img-7"}
FMT = XMLFormat()


class Lookup(BaseModel):
    key: str

    @field_validator("key")
    @classmethod
    def _broken(cls, value: str) -> str:
        raise RuntimeError("the validator broke")


@tool
def fetch(input: Lookup) -> str:
    """Fetch a stored value by its key."""
    return input.key


@tool
def store(key: str) -> str:
    """Store a value under a key."""
    return key


@pytest.fixture(autouse=True)
def _clear() -> None:
    ran.clear()


def _errors(result: Any) -> list[tuple[str, str] | None]:
    return [
        None if error is None else (error.kind, error.message)
        for step in result.steps
        for chain_result in step.tool_results
        for error in chain_result.raw.errors
    ]


@KINDS
def test_a_named_match_runs_when_called_and_is_active_from_then_on(kind: Kind) -> None:
    model = ScriptedModel(
        [
            call(kind, "tool_search", query="find an image"),
            call(kind, "attach_image", **ATTACH),  # seen among other_matches only
            call(kind, "attach_image", **ATTACH),
            answer(kind, "attached twice"),
        ]
    )
    search, ctx = search_for(), ExecutionContext()
    result = build(kind, model, search).run_sync("Attach img-7 to p1", ctx=ctx)
    assert result.ok
    assert json.loads(search_result(kind, result))["other_matches"] == ["attach_image"]
    assert ran == [("attach_image", ATTACH), ("attach_image", ATTACH)]
    assert _errors(result) == [None, None, None]
    assert search.active(ctx) == ("search_images", "attach_image")
    saved = result.extension_state["tool_search"]
    assert isinstance(saved, dict) and saved["named"] == ["attach_image"]
    if kind == "native":  # its spec is sent from the request after its first call
        specs = spec_names(model)
        assert "attach_image" not in specs[1] and specs[2][-1] == "attach_image"
    else:  # text mode: the system prompt never changes
        assert len({r.messages[0].text_content() for r in model.requests}) == 1


@KINDS
def test_a_named_match_called_with_wrong_arguments_is_shown_its_parameters(kind: Kind) -> None:
    model = ScriptedModel(
        [
            call(kind, "tool_search", query="find an image"),
            call(kind, "attach_image", page_id="p1"),  # guessed from the name: one short
            call(kind, "attach_image", **ATTACH),
            call(kind, "tool_search", query="attach an image to a page"),
            answer(kind, "attached"),
        ]
    )
    search, ctx = search_for(), ExecutionContext()
    result = build(kind, model, search).run_sync("Attach img-7 to p1", ctx=ctx)
    assert result.ok and ran == [("attach_image", ATTACH)]
    parameters = (
        '{"additionalProperties":false,"properties":{"page_id":{"type":"string"},'
        '"image_id":{"type":"string"}},"required":["page_id","image_id"],"type":"object"}'
    )
    assert _errors(result)[1] == (
        "invalid_arguments",
        "invalid arguments for attach_image: image_id: required field is missing. "
        f"Its parameters: {parameters}",
    )
    assert _errors(result)[2:] == [None, None]
    assert search.active(ctx) == ("search_images", "attach_image")
    # The model has its parameters now: a later search names it and says no more.
    later = json.loads(result.steps[3].tool_results[0].observations[0].text)
    assert later["found"] == [] and later["found_before"][0] == "attach_image"


@KINDS
def test_a_named_match_stays_callable_in_the_next_run_of_the_conversation(kind: Kind) -> None:
    search = search_for()
    first_model = ScriptedModel(
        [call(kind, "tool_search", query="find an image"), answer(kind, "I can attach it")]
    )
    first = build(kind, first_model, search).run_sync("Can you attach images?")
    second_model = ScriptedModel([call(kind, "attach_image", **ATTACH), answer(kind, "done")])
    second = build(kind, second_model, search).run_sync(
        "Attach img-7 to p1", history=first.messages, extension_state=first.extension_state
    )
    assert second.ok and ran == [("attach_image", ATTACH)]
    assert _errors(second) == [None]


@KINDS
def test_a_named_match_that_needs_approval_still_waits_for_it(kind: Kind) -> None:
    asked: list[ApprovalRequest] = []

    def approve(ctx: ExecutionContext, request: ApprovalRequest) -> Approval:
        asked.append(request)
        return Approval.denied("the page is in review")

    model = ScriptedModel(
        [
            call(kind, "tool_search", query="add a new page"),  # names publish_page
            call(kind, "publish_page", page_id="p2"),
            answer(kind, "not published"),
        ]
    )
    result = build(kind, model, search_for(approve=approve)).run_sync("Publish p2")
    assert json.loads(search_result(kind, result))["other_matches"] == [
        "attach_image",
        "publish_page",
    ]
    assert ran == [] and [r.tool for r in asked] == ["publish_page"]
    assert _errors(result)[1] == (
        "refused",
        "publish_page was not approved: the page is in review",
    )


@KINDS
def test_a_plain_model_reaches_the_tool_a_search_named_on_the_60_tool_cms(kind: Kind) -> None:
    """The issue's case, on the benchmark's CMS and the default backend (BM25): the
    best match of the model's words is get_image, and search_images is only named."""
    tools = cms_tools()
    search = ToolSearch(ToolIndex(tools, cms_info(tools)), defer=True)
    model = ScriptedModel(
        [
            call(kind, "tool_search", query="an image of mountains"),
            call(kind, "search_images", query="mountains"),
            answer(kind, "img-42"),
        ]
    )
    agent_class = ReActAgent if kind == "react" else ToolCallingAgent
    agent = agent_class(model, tool_chain=JSONToolChain(), extensions=[search])
    result = agent.run_sync("Find an image of mountains in the media library")
    found = json.loads(search_result(kind, result))
    assert [entry["name"] for entry in found["found"]] == ["get_image"]
    assert "search_images" in found["other_matches"]
    searched = result.steps[1].tool_results[0]
    assert searched.raw.errors == (None,)
    assert searched.raw.output(0, dict) == {
        "results": [{"id": "img-42", "alt": "Mountains", "score": 0.93}]
    }
    by_name = {tool.name: tool for tool in tools}
    assert by_name["search_images"].calls == [{"query": "mountains"}]


def test_a_named_match_whose_validator_breaks_is_reported_as_any_call_is() -> None:
    """A validator that raises something other than a validation error is the chain's
    to report (as for a tool that was never deferred); the tool is active all the same."""

    search = ToolSearch(
        ToolIndex([store, fetch], [ToolInfo("store", phrases=("keep a value",))]),
        backend=KeywordSearch(),
        defer=True,
    )
    chain, ctx = JSONToolChain(extensions=[search]), ExecutionContext()
    found = chain.execute_sync(ctx, '{"tool": "tool_search", "args": {"query": "value"}}', FMT)
    assert "fetch" in found.raw.output(0, dict)["other_matches"]
    called = chain.execute_sync(ctx, '{"tool": "fetch", "args": {"key": "k"}}', FMT)
    error = called.raw.errors[0]
    assert error is not None and error.kind == "invalid_arguments"
    assert error.message == "invalid arguments for fetch: RuntimeError: the validator broke"
    assert "fetch" in search.active(ctx)
