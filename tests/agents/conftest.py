"""Fixtures for the agent tests."""

from __future__ import annotations

import pytest

from tests.support.loopback import LoopbackServer


@pytest.fixture
def server(loopback: LoopbackServer) -> LoopbackServer:
    """The running ``loopback`` server, by the name the agent tests give it."""
    return loopback
