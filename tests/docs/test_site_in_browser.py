"""The documentation site, looked at in a real browser: Debian's headless Chromium, driven by
Playwright, loads the built site from a server on loopback that this test starts and stops.

It checks what a reader sees: the home page with its first agent, a topic page, the API
page of `Tool`, and a search for "approval" answered in the page (the search index is
built with the site, so it works offline); that no request left loopback; and saves a
screenshot of each under the test's ``tmp_path`` and ``.artifacts/screenshots/``
(git-ignored). Skipped, saying why, where Chromium is missing or cannot start: `make test`
installs it where it can (``apt-get install chromium``, as root).
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.docs.conftest import ROOT

CHROMIUM = Path("/usr/bin/chromium")
SCREENSHOTS = ROOT / ".artifacts" / "screenshots"


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """The test reads what the browser asked for, not the server's log lines."""


@pytest.fixture
def site_url(built_site: Path) -> Iterator[str]:
    """The built site served on an ephemeral loopback port, until the test ends."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_QuietHandler, directory=built_site))
    thread = threading.Thread(target=server.serve_forever, name="docs-site", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _shoot(page: Any, name: str, tmp_path: Path) -> None:
    """A full-page screenshot, kept with the test and in the stable artifacts folder."""
    shot = tmp_path / f"{name}.png"
    page.screenshot(path=str(shot), full_page=False)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(shot, SCREENSHOTS / shot.name)


def test_the_site_reads_well_in_chromium(site_url: str, tmp_path: Path) -> None:
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing: `make test` installs Debian's chromium as root")
    from playwright.sync_api import Error, sync_playwright

    requested: list[str] = []
    with sync_playwright() as playwright:
        try:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True)
        except Error as error:
            pytest.skip(f"Chromium cannot start here: {error.message.splitlines()[0]}")
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            # No wall-clock limit (the suite runs on busy machines, where the search index
            # took more than 15 s to build): each wait is for something the page must do.
            page.set_default_timeout(0)

            def only_loopback(route: Any) -> None:
                # Every request is recorded; one that would leave the machine is not sent.
                requested.append(route.request.url)
                host = urlsplit(route.request.url).hostname
                if host == "127.0.0.1":
                    route.continue_()
                else:
                    route.abort()

            page.route("**/*", only_loopback)

            page.goto(f"{site_url}/")
            assert page.title() == "gent-py"
            heading = page.locator("article h2#a-typed-tool-and-an-agent")
            assert heading.inner_text().startswith("A typed tool and an agent")
            first_block = page.locator("article pre").first.inner_text()
            assert "agent = ReActAgent(model, tools=[Weather()])" in first_block
            _shoot(page, "home", tmp_path)

            page.goto(f"{site_url}/relay/")
            assert page.locator("article h1").inner_text().startswith("Context relay")
            assert "internal://" in page.locator("article").inner_text()
            _shoot(page, "relay", tmp_path)

            page.goto(f"{site_url}/reference/toolchain/#toolchain.Tool")
            tool = page.locator('[id="toolchain.Tool"]')
            assert tool.is_visible()
            assert "Tool" in tool.inner_text()
            body = page.locator("article").inner_text()
            assert "A typed tool: validated input InputT in" in body
            _shoot(page, "api-tool", tmp_path)

            page.goto(f"{site_url}/")
            search = page.locator("input.md-search__input")
            search.click()  # at this width the search box is in the header
            search.fill("approval")
            results = page.locator(".md-search-result__item")
            results.first.wait_for()
            found = page.locator(".md-search-result").inner_text()
            assert "Approvals" in found
            _shoot(page, "search-approval", tmp_path)
        finally:
            browser.close()

    assert requested, "the browser asked for nothing"
    assert [url for url in requested if urlsplit(url).hostname != "127.0.0.1"] == []
