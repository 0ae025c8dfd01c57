from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.agents.otel.tracing import Traced, traced


@pytest.fixture
def spans() -> Iterator[Traced]:
    """Every run of the test traced into memory, contents not captured (the default)."""
    yield from traced()


@pytest.fixture
def spans_with_content() -> Iterator[Traced]:
    """Every run of the test traced into memory, with ``capture_content=True``."""
    yield from traced(capture_content=True)
