"""``SchemaCodec`` on its own: a server's JSON Schema checked in time linear in the
arguments (patterns on RE2), patterns RE2 cannot run left to the server, clearly."""

from __future__ import annotations

import logging
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolchain import ArgumentsError
from toolchain.mcp import SchemaCodec

EVIL = "^(a+)+$"  # exponential in Python's re on "aaa…a!"


def problems(codec: SchemaCodec, args: dict[str, object]) -> list[str]:
    try:
        codec.validate(args)
    except ArgumentsError as error:
        return list(error.problems)
    return []


def best_time(codec: SchemaCodec, args: dict[str, object]) -> float:
    best = float("inf")
    for _ in range(3):
        started = time.process_time()
        problems(codec, args)
        best = min(best, time.process_time() - started)
    return best


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"code": {"type": "string", "pattern": EVIL}}},
        {"type": "object", "patternProperties": {EVIL: {}}, "additionalProperties": False},
        {"type": "object", "propertyNames": {"pattern": EVIL}},
    ],
    ids=["pattern", "patternProperties", "propertyNames"],
)
def test_a_backtracking_pattern_takes_linear_time(schema: dict[str, object]) -> None:
    codec = SchemaCodec(schema, "lookup")
    in_value = "properties" in schema

    def args(length: int) -> dict[str, object]:
        evil = "a" * length + "!"
        return {"code": evil} if in_value else {evil: 1}

    assert problems(codec, args(20))  # refused, whichever way the schema says it
    small, large = best_time(codec, args(18)), best_time(codec, args(24))
    # Python's re doubles its time with each "a" (64 times for 6 more); RE2 does not.
    assert large < 8 * max(small, 1e-4), (small, large)


def test_patterns_are_checked_as_json_schema_means_them() -> None:
    codec = SchemaCodec(
        {
            "type": "object",
            "properties": {
                "word": {"type": "string", "pattern": "^\\p{L}+$"},  # RE2, not re
                "accent": {"type": "string", "pattern": "^caf\\u00e9$"},  # ECMA escape
                "zip": {"type": "string", "pattern": "^\\d{5}$"},
            },
            "patternProperties": {"^x_": {"type": "integer"}},
            "additionalProperties": False,
        },
        "form",
    )
    assert problems(codec, {"word": "Kraków", "accent": "café", "zip": "12345", "x_a": 1}) == []
    assert problems(codec, {"word": "a1", "accent": "cafe", "zip": "1234\n", "x_b": "no"}) == [
        "accent: 'cafe' does not match the pattern '^caf\\\\u00e9$'",
        "word: 'a1' does not match the pattern '^\\\\p{L}+$'",
        "x_b: 'no' is not of type 'integer'",
        "zip: '1234\\n' does not match the pattern '^\\\\d{5}$'",
    ]
    assert problems(codec, {"other": 1}) == ["(arguments): unexpected properties: 'other'"]
    assert problems(codec, {"word": "\ud800"}) == [  # a lone surrogate is one character
        "word: '\\ud800' does not match the pattern '^\\\\p{L}+$'"
    ]


def test_a_pattern_re2_cannot_run_is_left_to_the_server_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="toolchain.mcp")
    codec = SchemaCodec(
        {
            "type": "object",
            "properties": {
                "a": {"type": "string", "pattern": "(x)\\1"},  # a backreference
                "b": {"type": "integer", "maximum": 3},
            },
            "patternProperties": {"^(?!b$)": {"type": "string"}},  # a lookahead
            "additionalProperties": False,
        },
        "pairs",
    )
    assert problems(codec, {"a": "anything", "b": 9, "c": 5}) == [
        "b: 9 is greater than the maximum of 3"  # the rest is still checked
    ]
    warned = sorted(r.getMessage() for r in caplog.records)
    assert len(warned) == 2 and all("RE2 cannot run" in w for w in warned)
    assert warned[0].startswith("the input schema of pairs has the pattern '(x)\\\\1'")
    assert problems(codec, {"a": "x", "b": 1}) == []
    assert len(caplog.records) == 2  # once per pattern, not per call


def test_unevaluated_properties_beside_pattern_properties_is_left_to_the_server(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="toolchain.mcp")
    codec = SchemaCodec(
        {"type": "object", "patternProperties": {EVIL: {}}, "unevaluatedProperties": False},
        "strict",
    )
    evil = "a" * 24 + "!"
    assert problems(codec, {evil: 1}) == []  # at once: re never runs, the server decides
    [warned] = [r.getMessage() for r in caplog.records]
    assert "unevaluatedProperties is left to the server" in warned
    plain = SchemaCodec(
        {"type": "object", "properties": {"a": {}}, "unevaluatedProperties": False}, "plain"
    )
    assert problems(plain, {"a": 1, "b": 2})  # without patterns it is checked here


# -- what a listing may hold -----------------------------------------------------------

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=20,
)
TOOL = st.fixed_dictionaries(
    {},
    optional={
        "name": st.none() | st.text(max_size=8),
        "inputSchema": JSON
        | st.fixed_dictionaries(
            {"type": st.just("object")},
            optional={"properties": JSON, "required": JSON},
        ),
        "description": JSON,
    },
)


@settings(max_examples=300, deadline=None)
@given(st.lists(TOOL | JSON, max_size=6))
def test_a_listing_keeps_exactly_the_tools_a_client_can_offer(tools: list[object]) -> None:
    import mcp_types
    from mcp.shared.message import SessionMessage

    from toolchain.mcp._listing import ListingGuard

    guard = ListingGuard(lambda: "fuzzed")
    guard.sent(SessionMessage(mcp_types.JSONRPCRequest(jsonrpc="2.0", id=7, method="tools/list")))
    answer = mcp_types.JSONRPCResponse(jsonrpc="2.0", id=7, result={"tools": list(tools)})
    seen = guard.received(SessionMessage(answer))
    assert isinstance(seen, SessionMessage) and isinstance(seen.message, mcp_types.JSONRPCResponse)
    kept = seen.message.result["tools"]
    for tool in kept:  # the SDK takes every tool left in
        mcp_types.Tool.model_validate(tool, by_name=False)
    mcp_types.ListToolsResult.model_validate({"tools": kept}, by_name=False)
