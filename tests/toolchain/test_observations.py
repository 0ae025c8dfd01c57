"""Observation text as the model sees it: snapshots for both formats and both chains.

Each snapshot is one readable .md or .xml file under __snapshots__/.
"""

from __future__ import annotations

from typing import Literal

import pytest
from syrupy.assertion import SnapshotAssertion

from formats import MarkdownFormat, TextFormat, XMLFormat
from tests.support.tools import all_tools
from toolchain import (
    ExecutionContext,
    ImageContent,
    JSONToolChain,
    TextContent,
    ToolChain,
    YAMLToolChain,
)

ChainKind = Literal["json", "yaml"]
FormatKind = Literal["markdown", "xml"]

# scenario -> (JSON action, YAML action)
SCENARIOS: dict[str, tuple[str, str]] = {
    "one_call": (
        '{"tool": "get_weather", "args": {"city": "Paris"}}',
        "- tool: get_weather\n  args:\n    city: Paris",
    ),
    "parallel_calls": (
        '[{"tool": "get_weather", "args": {"city": "Paris"}},'
        ' {"tool": "add", "args": {"a": 2, "b": 3}},'
        ' {"tool": "get_weather", "args": {"city": "Oslo", "days": 3}}]',
        "- tool: get_weather\n  args: {city: Paris}\n"
        "- tool: add\n  args: {a: 2, b: 3}\n"
        "- tool: get_weather\n  args: {city: Oslo, days: 3}",
    ),
    "error_beside_success": (
        '[{"tool": "get_flight", "args": {"flight_number": "AA100"}},'
        ' {"tool": "get_flight", "args": {"flight_number": "XX0"}},'
        ' {"tool": "get_wether", "args": {"city": "Rome"}},'
        ' {"tool": "add", "args": {"a": "two"}},'
        ' {"tool": "explode", "args": {"reason": "disk full"}}]',
        "- tool: get_flight\n  args: {flight_number: AA100}\n"
        "- tool: get_flight\n  args: {flight_number: XX0}\n"
        "- tool: get_wether\n  args: {city: Rome}\n"
        "- tool: add\n  args: {a: two}\n"
        "- tool: explode\n  args: {reason: disk full}",
    ),
    "instructions": (
        '{"tool": "search_policy", "args": {"keyword": "change"}}',
        "- tool: search_policy\n  args:\n    keyword: change",
    ),
    "media": (
        '{"tool": "seat_map", "args": {"flight_number": "AA100", "row": 12}}',
        "- tool: seat_map\n  args:\n    flight_number: AA100\n    row: 12",
    ),
    "nested_output": (
        '{"tool": "get_flight", "args": {"flight_number": "AA100"}}',
        "- tool: get_flight\n  args:\n    flight_number: AA100",
    ),
}


def make_chain(kind: ChainKind) -> ToolChain:
    chain: ToolChain = JSONToolChain() if kind == "json" else YAMLToolChain()
    for t in all_tools():
        chain.register_tool(t)
    return chain


def make_format(kind: FormatKind) -> TextFormat:
    return MarkdownFormat() if kind == "markdown" else XMLFormat()


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
@pytest.mark.parametrize("chain_kind", ["json", "yaml"])
@pytest.mark.parametrize("format_kind", ["markdown", "xml"])
async def test_observation_text(
    scenario: str,
    chain_kind: ChainKind,
    format_kind: FormatKind,
    snapshot_md: SnapshotAssertion,
    snapshot_xml: SnapshotAssertion,
) -> None:
    json_action, yaml_action = SCENARIOS[scenario]
    content = json_action if chain_kind == "json" else yaml_action
    result = await make_chain(chain_kind).execute(
        ExecutionContext(), content, make_format(format_kind)
    )
    expected = snapshot_md if format_kind == "markdown" else snapshot_xml
    assert result.text == expected


@pytest.mark.parametrize("chain_kind", ["json", "yaml"])
async def test_media_is_returned_beside_the_text(chain_kind: ChainKind) -> None:
    json_action, yaml_action = SCENARIOS["media"]
    content = json_action if chain_kind == "json" else yaml_action
    result = await make_chain(chain_kind).execute(ExecutionContext(), content, XMLFormat())
    [image] = result.media
    assert isinstance(image, ImageContent)
    assert image.media_type == "image/png"
    assert result.as_content_parts() == (TextContent(result.text), image)
    assert "[1] image (image/png, 14 bytes)" in result.text


@pytest.mark.parametrize("chain_kind", ["json", "yaml"])
@pytest.mark.parametrize("format_kind", ["markdown", "xml"])
async def test_zero_calls_give_empty_text(chain_kind: ChainKind, format_kind: FormatKind) -> None:
    content = "[]" if chain_kind == "json" else ""
    result = await make_chain(chain_kind).execute(
        ExecutionContext(), content, make_format(format_kind)
    )
    assert result.text == ""
    assert result.raw.calls == ()
    assert result.as_content_parts() == ()
