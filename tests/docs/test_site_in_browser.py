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

import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.support.browser import assert_stayed_on_loopback, loopback_page, shoot


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


def test_the_site_reads_well_in_chromium(site_url: str, tmp_path: Path) -> None:
    requested: list[str] = []
    with loopback_page(1280, requested) as page:
        page.goto(f"{site_url}/")
        assert page.title() == "gent-py"
        heading = page.locator("article h2#a-typed-tool-and-an-agent")
        assert heading.inner_text().startswith("A typed tool and an agent")
        first_block = page.locator("article pre").first.inner_text()
        assert "agent = ReActAgent(model, tools=[Weather()])" in first_block
        shoot(page, "home", tmp_path)

        page.goto(f"{site_url}/relay/")
        assert page.locator("article h1").inner_text().startswith("Context relay")
        assert "internal://" in page.locator("article").inner_text()
        shoot(page, "relay", tmp_path)

        page.goto(f"{site_url}/reference/toolchain/#toolchain.Tool")
        tool = page.locator('[id="toolchain.Tool"]')
        assert tool.is_visible()
        assert "Tool" in tool.inner_text()
        body = page.locator("article").inner_text()
        assert "A typed tool: validated input InputT in" in body
        shoot(page, "api-tool", tmp_path)

        page.goto(f"{site_url}/")
        search = page.locator("input.md-search__input")
        search.click()  # at this width the search box is in the header
        # Typed key by key once the search index is loaded (its placeholder replaces
        # "Initializing search"): the search runs on the keys typed, or on the text there
        # when the index is ready. A text set at once (fill) after that was never searched:
        # on a busy host the index was sometimes ready first (a 300 s timeout, once).
        meta = page.locator(".md-search-result__meta")
        meta.filter(has_text="Type to start searching").wait_for()
        search.press_sequentially("approval")
        results = page.locator(".md-search-result__item")
        results.first.wait_for()
        found = page.locator(".md-search-result").inner_text()
        assert "Approvals" in found
        shoot(page, "search-approval", tmp_path)

    assert_stayed_on_loopback(requested)
