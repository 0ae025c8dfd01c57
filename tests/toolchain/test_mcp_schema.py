"""``SchemaCodec`` on its own: a server's JSON Schema checked in time linear in the
arguments (patterns on RE2), patterns RE2 cannot run left to the server, clearly."""

from __future__ import annotations

import logging
import time

import pytest

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
