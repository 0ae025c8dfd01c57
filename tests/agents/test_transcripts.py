"""Snapshots of what the model reads: the system prompt and a whole scripted demo run.

Stored as readable files (.xml / .md) so a reviewer sees prompts and observations as
the model does; any change to prompt wording or observation formatting shows in review.
"""

from __future__ import annotations

from typing import Literal

import pytest
from syrupy.assertion import SnapshotAssertion

from agents.demo import build_demo

FormatKind = Literal["markdown", "xml"]
CallKind = Literal["json", "yaml"]


@pytest.mark.parametrize("calls", ["yaml", "json"])
@pytest.mark.parametrize("text_format", ["xml", "markdown"])
def test_system_prompt(
    text_format: FormatKind,
    calls: CallKind,
    snapshot_md: SnapshotAssertion,
    snapshot_xml: SnapshotAssertion,
) -> None:
    prompt = build_demo(text_format=text_format, calls=calls).agent.system_prompt()
    assert prompt == (snapshot_xml if text_format == "xml" else snapshot_md)


@pytest.mark.parametrize("calls", ["yaml", "json"])
@pytest.mark.parametrize("text_format", ["xml", "markdown"])
async def test_scripted_demo_transcript(
    text_format: FormatKind, calls: CallKind, snapshot_md: SnapshotAssertion
) -> None:
    demo = build_demo(text_format=text_format, calls=calls)
    result = await demo.agent.run(demo.task)
    assert result.ok
    assert demo.data.bookings["BK001"].flight_number == "AA102"
    assert demo.data.bookings["BK001"].seat_number == "14A"
    assert result.transcript() == snapshot_md
