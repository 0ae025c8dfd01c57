"""The playground, used as a person uses it: Debian's headless Chromium, driven by
Playwright, opens the page served by uvicorn on loopback (the demo agent, offline),
types the demo task, sees the tool calls appear with their arguments and results,
approves the booking change it holds, and sees the answer; and answers an MCP server's
question in the form the page builds from its schema. Screenshots are saved under
the test's ``tmp_path`` and ``.artifacts/screenshots/`` (as the docs' browser test does).
Skipped, saying why, where Chromium is missing or cannot start."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn

from agents import ToolCallingAgent
from agents.demo import DEMO_TASK
from agents.models import ScriptedModel
from agents.ui import playground_app
from agents.ui._playground import demo_agent
from tests.agents.ui.conftest import DEMO_CALLS
from tests.support.browser import assert_stayed_on_loopback, loopback_page, shoot
from toolchain import JSONToolChain
from toolchain.mcp import MCPServer


@pytest.fixture(params=[False, True], ids=["react", "native"])
def playground_url(request: pytest.FixtureRequest) -> Iterator[str]:
    """The playground of the demo agent under uvicorn on an ephemeral loopback port."""
    listening = socket.socket()
    listening.bind(("127.0.0.1", 0))
    listening.listen()
    app = playground_app(demo_agent(native=request.param))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [listening]}, name="playground", daemon=True
    )
    thread.start()
    try:
        yield f"http://127.0.0.1:{listening.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join()
        listening.close()


def test_a_person_runs_the_demo_and_approves_the_change(
    playground_url: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    kind = request.node.callspec.id
    requested: list[str] = []
    with loopback_page(1100, requested) as page:
        page.goto(f"{playground_url}/")
        assert page.title() == "skywings · scripted-demo"

        page.fill("#task", DEMO_TASK)
        page.click("#send")
        held = page.locator(".tool-call.held[data-call-id] button.approve")
        held.wait_for()
        cards = page.locator(".tool-call")
        names = cards.locator(".name").all_inner_texts()
        assert names == DEMO_CALLS
        first = cards.first
        assert '"email": "john.smith@email.com"' in first.locator(".args").inner_text()
        assert "C001" in first.locator(".result").inner_text()
        call_id = page.locator(".tool-call.held").get_attribute("data-call-id")
        change = page.locator(f'.tool-call[data-call-id="{call_id}"]')  # held, then not
        assert '"new_flight_number": "AA102"' in change.locator(".args").inner_text()
        assert change.locator(".result").is_hidden()  # not run: it waits for a person
        assert "tokens:" in page.locator("#figures").inner_text()
        shoot(page, f"playground-{kind}-held", tmp_path)

        held.click()
        result = change.locator(".result")
        result.wait_for()
        assert "AA102" in result.inner_text() and "14A" in result.inner_text()
        answer = page.locator(".bubble.answer", has_text="All done, Mr. Smith")
        answer.wait_for()
        assert "AA102" in answer.inner_text()
        assert page.locator(".bubble.error").count() == 0
        shoot(page, f"playground-{kind}-answered", tmp_path)

    assert_stayed_on_loopback(requested)


async def test_a_person_answers_a_servers_question_in_the_playground(
    shop: MCPServer, tmp_path: Path
) -> None:
    """A real MCP server asks where to ship during the call: the page shows the question
    as a form built from its schema, the person fills it in and sends it, and the call
    completes with that address. The server runs in this test's event loop (the MCP
    connection is bound to it), the browser in a worker thread."""
    model = ScriptedModel([ScriptedModel.call("ship", order="A7"), "A7 ships to Lyon."])
    agent = ToolCallingAgent(model, tool_chain=shop.attach(JSONToolChain()), name="shop")
    listening = socket.socket()
    listening.bind(("127.0.0.1", 0))
    listening.listen()
    server = uvicorn.Server(
        uvicorn.Config(playground_app(agent), log_level="warning", lifespan="off")
    )
    serving = asyncio.create_task(server.serve(sockets=[listening]))
    url = f"http://127.0.0.1:{listening.getsockname()[1]}"
    try:
        requested = await asyncio.to_thread(_answer_the_question, url, tmp_path)
    finally:
        server.should_exit = True
        await serving
        listening.close()
    assert_stayed_on_loopback(requested)
    assert len(model.requests) == 2


def _answer_the_question(url: str, tmp_path: Path) -> list[str]:
    requested: list[str] = []
    with loopback_page(1100, requested) as page:
        page.goto(f"{url}/")
        page.fill("#task", "Ship A7")
        page.click("#send")
        question = page.locator(".tool-call .question")
        question.locator("button.approve").wait_for()
        assert question.locator(".message").inner_text() == "Where should order A7 go?"
        assert question.locator("label").all_inner_texts() == ["Street", "City"]
        call_id = page.locator(".tool-call.held").get_attribute("data-call-id")
        call = page.locator(f'.tool-call[data-call-id="{call_id}"]')  # held, then not
        assert call.locator(".name").inner_text() == "ship"
        question.locator("input[name=street]").fill("Main St 1")
        question.locator("input[name=city]").fill("Lyon")
        shoot(page, "playground-question", tmp_path)

        question.locator("button.approve").click()
        result = call.locator(".result")
        result.wait_for()
        assert "shipped A7 to Main St 1, Lyon" in result.inner_text()
        assert call.locator(".args").inner_text() == '{"order": "A7"}'  # told once
        page.locator(".bubble.answer", has_text="A7 ships to Lyon.").wait_for()
        assert page.locator(".bubble.error").count() == 0
        assert page.locator(".question").count() == 0
        shoot(page, "playground-question-answered", tmp_path)
    return requested
