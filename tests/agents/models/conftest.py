"""Fixtures for the model adapter tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.loopback import LoopbackServer


@pytest.fixture
def loopback() -> Iterator[LoopbackServer]:
    """A running `LoopbackServer`, closed after the test."""
    with LoopbackServer() as server:
        yield server
