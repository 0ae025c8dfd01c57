"""Debian's Chromium, headless, on loopback only: what the browser tests (the docs site,
the playground) open their pages in."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.support.guards import HANG_GUARD_SECONDS

CHROMIUM = Path("/usr/bin/chromium")
SCREENSHOTS = Path(__file__).resolve().parents[2] / ".artifacts" / "screenshots"


@contextmanager
def loopback_page(width: int, requested: list[str]) -> Iterator[Any]:
    """A new page of headless Chromium, closed after. Every request it makes is recorded
    in ``requested``, and one that would leave the machine is not sent. Each wait is for
    something the page must do, and no test asserts how long it took (the suite runs on
    busy machines, where the docs' search index took more than 15 s to build); a wait
    past the suite's hang guard (``HANG_GUARD_SECONDS``, 300 s) is a page that will not
    do it: the test fails there, saying which wait, with a screenshot of the page as it
    was (``hung-<width>.png``), where it once hung a random-order run for good. Skips
    the test, saying why, where Chromium is missing or cannot start."""
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing: `make test` installs Debian's chromium as root")
    from playwright.sync_api import Error, sync_playwright
    from playwright.sync_api import TimeoutError as WaitedTooLong

    with sync_playwright() as playwright:
        try:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True)
        except Error as error:
            pytest.skip(f"Chromium cannot start here: {error.message.splitlines()[0]}")
        try:
            page = browser.new_page(viewport={"width": width, "height": 900})
            page.set_default_timeout(HANG_GUARD_SECONDS * 1000)

            def only_loopback(route: Any) -> None:
                requested.append(route.request.url)
                if urlsplit(route.request.url).hostname == "127.0.0.1":
                    route.continue_()
                else:
                    route.abort()

            page.route("**/*", only_loopback)
            try:
                yield page
            except WaitedTooLong:
                _keep(page, f"hung-{width}")
                raise
        finally:
            browser.close()


def _keep(page: Any, name: str) -> None:
    """A screenshot of a page that stopped doing what it must, in the artifacts folder."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(Exception):  # the page is gone too: the error says enough
        page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), timeout=30_000)


def assert_stayed_on_loopback(requested: list[str]) -> None:
    """The page asked for something, and for nothing outside this machine."""
    assert requested, "the browser asked for nothing"
    assert [url for url in requested if urlsplit(url).hostname != "127.0.0.1"] == []


def shoot(page: Any, name: str, tmp_path: Path) -> None:
    """A screenshot, kept with the test and in the stable artifacts folder."""
    shot = tmp_path / f"{name}.png"
    page.screenshot(path=str(shot), full_page=False)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(shot, SCREENSHOTS / shot.name)
