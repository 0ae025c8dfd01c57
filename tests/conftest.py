from __future__ import annotations

import pytest
from syrupy.assertion import SnapshotAssertion

from tests.snapshots import MarkdownSnapshot, XMLSnapshot


@pytest.fixture
def snapshot_md(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    return snapshot.use_extension(MarkdownSnapshot)


@pytest.fixture
def snapshot_xml(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    return snapshot.use_extension(XMLSnapshot)
