"""What a search answers: the best match of each query described and callable, the
other matches named (callable too; a search for a name finds that tool), a tool
described once a run, workflow guidance once a category, lists of queries, and what
observers are told."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from pydantic import BaseModel

from formats import XMLFormat
from tests.support.agent_kinds import KINDS, Kind, answer, call
from tests.toolchain.discovery.cms import (
    INFO,
    TOOLS,
    WORKFLOWS,
    build,
    ran,
    search_for,
    tool_texts,
)
from toolchain import ExecutionContext, JSONToolChain, Tool, ToolResult, tool
from toolchain.discovery import KeywordSearch, ToolIndex, ToolInfo, ToolSearch, ToolsFound
from toolchain.discovery._search_tool import MAX_QUERIES


@pytest.fixture(autouse=True)
def _clear() -> None:
    ran.clear()


def _search(chain: JSONToolChain, ctx: ExecutionContext, query: object) -> dict[str, Any]:
    """What the model reads from one tool_search call, decoded."""
    content = json.dumps({"tool": "tool_search", "args": {"query": query}})
    text = chain.execute_sync(ctx, content, XMLFormat()).text
    body = text.split("<tool_search>", 1)[1].split("</tool_search>", 1)[0]
    decoded: dict[str, Any] = json.loads(body)
    return decoded


def _run(kind: Kind, *outputs: Any) -> Any:
    from agents.models import ScriptedModel

    model = ScriptedModel(list(outputs))
    search = search_for()
    ctx = ExecutionContext()
    result = build(kind, model, search).run_sync("Illustrate and publish the Home page", ctx=ctx)
    return result, search, ctx, model


@KINDS
def test_a_list_of_queries_finds_a_tool_for_each_in_one_search(kind: Kind) -> None:
    result, search, ctx, model = _run(
        kind,
        call(kind, "tool_search", query=["find an image", "email someone"]),
        call(kind, "search_images", query="hills"),
        call(kind, "send_email", to="ana@example.com", body="img-7"),
        answer(kind, "sent"),
    )
    assert result.ok and [name for name, _ in ran] == ["search_images", "send_email"]
    assert search.active(ctx) == ("search_images", "send_email")
    if kind == "native":  # both specs from the request after the search on
        assert [s.name for s in model.requests[1].options.tools] == [
            "tool_search",
            "search_images",
            "send_email",
        ]


@KINDS
def test_another_match_is_named_and_found_by_a_search_for_its_name(kind: Kind) -> None:
    # A named match is callable as it is (tests/toolchain/discovery/test_named_matches.py);
    # searching its name still finds it alone, described. This test used to call it
    # first and assert the old "not active: search for it first" refusal.
    result, search, ctx, _ = _run(
        kind,
        call(kind, "tool_search", query="find an image"),
        call(kind, "tool_search", query="attach_image"),
        call(kind, "attach_image", page_id="p1", image_id="img-7"),
        answer(kind, "attached"),
    )
    assert result.ok and ran == [("attach_image", {"page_id": "p1", "image_id": "img-7"})]
    first = json.loads(_tool_output(result, kind, "tool_search", 0))
    assert first["other_matches"] == ["attach_image"]
    by_name = json.loads(_tool_output(result, kind, "tool_search", 1))
    assert [entry["name"] for entry in by_name["found"]] == ["attach_image"]
    assert "other_matches" not in by_name  # a name finds that tool alone
    assert search.active(ctx) == ("search_images", "attach_image")


def test_a_tool_is_described_once_a_run_and_its_workflow_given_once() -> None:
    chain, ctx = JSONToolChain(extensions=[search_for()]), ExecutionContext()
    first = _search(chain, ctx, "find an image")
    again = _search(chain, ctx, "look for a photo")
    assert first["found"][0]["name"] == "search_images" and "parameters" in first["found"][0]
    assert first["workflow"] == WORKFLOWS["images"]
    assert again["found"] == [] and again["found_before"] == ["search_images"]
    assert "workflow" not in again
    # Asked for by name, it is described again: the model may have lost the first answer.
    named = _search(chain, ctx, "search_images")
    assert named["found"][0]["parameters"] == first["found"][0]["parameters"]
    # A new run (a new context) is told everything again.
    fresh = _search(chain, ExecutionContext(), "find an image")
    assert fresh == first


def test_a_best_match_named_by_an_earlier_query_of_the_list_is_described() -> None:
    chain, ctx = JSONToolChain(extensions=[search_for()]), ExecutionContext()
    both = _search(chain, ctx, ["find an image", "attach an image to a page"])
    assert [entry["name"] for entry in both["found"]] == ["search_images", "attach_image"]
    assert "attach_image" not in both.get("other_matches", [])


def test_observers_hear_of_one_search_per_call_with_each_query() -> None:
    chain, ctx = JSONToolChain(extensions=[search_for()]), ExecutionContext()
    heard: list[ToolsFound] = []
    ctx.events.subscribe(ToolsFound, heard.append)
    _search(chain, ctx, ["find an image", "publish a page", "zzzz"])
    [event] = heard
    assert event.queries == ("find an image", "publish a page", "zzzz")
    assert event.query == "find an image; publish a page; zzzz"
    assert event.activated == ("search_images", "publish_page")
    assert set(event.named) <= set(event.found) and "attach_image" in event.named
    assert not set(event.named) & set(event.activated)


def test_queries_that_match_nothing_or_too_many_are_said() -> None:
    chain, ctx = JSONToolChain(extensions=[search_for()]), ExecutionContext()
    some = _search(chain, ctx, ["find an image", "zzzz"])
    assert [entry["name"] for entry in some["found"]] == ["search_images"]
    assert some["note"].startswith("No tool matches 'zzzz'.")
    many = [f"query {n}" for n in range(MAX_QUERIES + 2)]
    told = _search(chain, ctx, many)
    assert f"Only the first {MAX_QUERIES} queries were searched" in told["note"]
    assert _search(chain, ctx, [])["found"] == []


def test_a_backend_that_fails_on_one_query_leaves_the_others_answered(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class Flaky(KeywordSearch):
        async def search(self, query: str, limit: int) -> Any:
            if "email" in query:
                raise TimeoutError("slow index")
            return await super().search(query, limit)

    search = search_for()
    search.backend = Flaky()
    search.backend.index(search.index.documents())
    chain, ctx = JSONToolChain(extensions=[search]), ExecutionContext()
    told = _search(chain, ctx, ["find an image", "email someone"])
    assert [entry["name"] for entry in told["found"]] == ["search_images"]
    assert told["note"] == "the search failed (TimeoutError); retry"
    assert "tool search failed for 'email someone'" in caplog.text


class _CountingInput(BaseModel):
    city: str


class _Counting(Tool[_CountingInput, str]):
    """A tool that counts how often its schema is compacted for the model."""

    name = "get_weather"
    description = "Current weather of a city."

    def __init__(self) -> None:
        self.compacted = 0

    def prompt_schema(self) -> dict[str, object]:
        self.compacted += 1
        return super().prompt_schema()

    async def call(self, ctx: ExecutionContext, input: _CountingInput) -> ToolResult[str]:
        return ToolResult("sunny")


def test_a_schema_is_compacted_once_however_often_it_is_found() -> None:
    weather = _Counting()
    search = ToolSearch(ToolIndex([*TOOLS, weather], INFO), backend=KeywordSearch(), defer=True)
    chain = JSONToolChain(extensions=[search])
    for _ in range(3):  # three runs, each told the schema
        told = _search(chain, ExecutionContext(), "weather of a city")
        assert told["found"][0]["parameters"]["properties"] == {"city": {"type": "string"}}
    assert weather.compacted == 1


def _tool_output(result: Any, kind: Kind, name: str, nth: int) -> str:
    """The ``nth`` (from 0) output of ``name`` the model read."""
    outputs: list[str] = []
    for message in result.messages:
        text = message.text_content()
        if kind == "native" and message.role == "tool" and message.name == name:
            outputs.append(text)
        if kind == "react" and message.role == "user" and f"<{name}>" in text:
            outputs.append(text.split(f"<{name}>", 1)[1].split(f"</{name}>", 1)[0].strip())
    assert len(outputs) > nth, tool_texts(result)
    return outputs[nth]


def test_the_query_an_inactive_call_suggests_makes_that_tool_callable() -> None:
    @tool
    def find_photo(words: str) -> str:
        """Find a photo in the library by the words that describe it."""
        return "p1"

    @tool
    def photo_details(photo_id: str) -> str:
        """Details of one photo."""
        return "a hill"

    # "find a photo" is photo_details' phrase, but find_photo is its best match.
    info = [ToolInfo("photo_details", phrases=("find a photo",))]
    index = ToolIndex([find_photo, photo_details], info)
    search = ToolSearch(index, backend=KeywordSearch(), defer=True)
    chain = JSONToolChain(extensions=[search])
    for name in index.tools:
        ctx = ExecutionContext()
        _search(chain, ctx, asyncio.run(search.suggestion(name)))
        assert name in search.active(ctx), name
