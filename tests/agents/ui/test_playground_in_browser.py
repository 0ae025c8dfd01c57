"""The playground, used as a person uses it: Debian's headless Chromium, driven by
Playwright, opens the page served by uvicorn on loopback (the demo agent, offline),
types the demo task, sees the tool calls appear with their arguments and results,
approves the booking change it holds, and sees the answer. Screenshots are saved under
the test's ``tmp_path`` and ``.artifacts/screenshots/`` (as the docs' browser test does).
Skipped, saying why, where Chromium is missing or cannot start."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn

from agents.demo import DEMO_TASK
from agents.ui import playground_app
from agents.ui._playground import demo_agent
from tests.agents.ui.conftest import DEMO_CALLS
from tests.support.browser import assert_stayed_on_loopback, loopback_page, shoot


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
