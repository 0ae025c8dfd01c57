"""Our own nesting limit fires first, whatever the parser's version does.

The scans in `toolchain._syntax._nesting` read JSON and YAML text before any parser does; here
they are checked against the parsers themselves (PyYAML's pure-Python event stream, the
stdlib JSON decoder) on generated documents, in every style YAML writes, so the limit is
never met by a parser's own error first.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from toolchain import JSONToolChain, ToolCallParseError, YAMLToolChain, load_json, load_yaml
from toolchain._syntax._nesting import (
    MAX_DEPTH,
    _last_entry,
    json_nesting_exceeds,
    yaml_flow_nesting_exceeds,
)

# Scalars chosen to hold the characters that could fool a lexer.
_TRICKY = st.sampled_from(
    ["[", "]", "{", "}", "'", '"', "#", "|", ">", "- x", "a: [b", "it's", "x # [", "!!str", ""]
)
_SCALARS = st.one_of(st.integers(), st.booleans(), st.none(), _TRICKY, st.text(max_size=8))


def _values(depth: int) -> st.SearchStrategy[Any]:
    return st.recursive(
        _SCALARS,
        lambda inner: st.one_of(
            st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner, max_size=3)
        ),
        max_leaves=depth,
    )


def _flow_depth(text: str) -> int:
    """The deepest flow nesting, from the pure-Python parser's events."""
    depth = deepest = 0
    flows: list[bool] = []
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, yaml.CollectionStartEvent):
            flows.append(bool(event.flow_style))
            depth += flows[-1]
            deepest = max(deepest, depth)
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= flows.pop()
    return deepest


def _json_depth(value: object) -> int:
    if isinstance(value, list):
        return 1 + max((_json_depth(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((_json_depth(v) for v in value.values()), default=0)
    return 0


@settings(max_examples=300, deadline=None)
@given(_values(40), st.integers(0, 6), st.sampled_from([None, True, False]))
def test_the_yaml_scan_never_counts_fewer_flow_levels_than_the_parser(
    value: object, limit: int, flow_style: bool | None
) -> None:
    text = yaml.safe_dump(value, default_flow_style=flow_style, allow_unicode=True)
    if _flow_depth(text) > limit:
        assert yaml_flow_nesting_exceeds(text, limit)


@settings(max_examples=300, deadline=None)
@given(_values(40), st.integers(0, 6))
def test_the_yaml_scan_does_not_count_brackets_in_block_text(value: object, limit: int) -> None:
    """In block style every bracket is inside a scalar: none of them counts."""
    text = yaml.safe_dump(value, default_flow_style=False, allow_unicode=True)
    if _flow_depth(text) == 0:
        assert not yaml_flow_nesting_exceeds(text, limit)


@settings(max_examples=300, deadline=None)
@given(_values(40), st.integers(0, 6))
def test_the_json_scan_measures_exactly(value: object, limit: int) -> None:
    text = json.dumps(value)
    assert json_nesting_exceeds(text, limit) == (_json_depth(value) > limit)


@pytest.mark.parametrize(
    "text",
    [
        "[" * 1_100,  # PyYAML 6.0.4's libyaml refuses this itself, in its own words
        "a: " + "[" * 1_100,
        "- " + "[{" * 600,
        "[" * 40_000 + "]" * 40_000,
    ],
)
def test_deep_flow_yaml_is_refused_in_our_words(text: str) -> None:
    with pytest.raises(ToolCallParseError) as refused:
        load_yaml(text)
    assert str(refused.value) == (
        f"YAML is nested more than {MAX_DEPTH} levels deep; write flatter values"
    )


@pytest.mark.parametrize("levels", [MAX_DEPTH, MAX_DEPTH + 1])
def test_the_limit_is_the_same_in_both_syntaxes_and_both_styles(levels: int) -> None:
    flow = "[" * levels + "]" * levels
    block = "".join("  " * i + "-\n" for i in range(levels - 1)) + "  " * (levels - 1) + "- x"
    json_text = "[" * levels + "]" * levels
    for load, text in ((load_yaml, flow), (load_yaml, block), (load_json, json_text)):
        if levels <= MAX_DEPTH:
            load(text)
        else:
            with pytest.raises(ToolCallParseError, match=f"more than {MAX_DEPTH} levels deep"):
                load(text)


def test_brackets_inside_strings_and_scalars_are_not_nesting() -> None:
    brackets = "[" * 200
    assert load_json(json.dumps({"code": brackets})) == {"code": brackets}
    for text in (
        f"code: '{brackets}'",
        f'code: "{brackets}"',
        f"code: x{brackets}",
        f"code: |\n  {brackets}\nnext: 1",
        f"code: 1  # {brackets}",
    ):
        loaded = load_yaml(text)
        assert isinstance(loaded, dict)


def test_chains_refuse_deep_calls_in_our_words() -> None:
    deep = '{"tool": "t", "args": {"a": ' + "[" * 100 + "]" * 100 + "}}"
    with pytest.raises(ToolCallParseError, match="nested more than 64 levels deep"):
        JSONToolChain().parse_calls(deep)
    with pytest.raises(ToolCallParseError, match="nested more than 64 levels deep"):
        YAMLToolChain().parse_calls("- tool: t\n  args: {a: " + "[" * 100 + "}")
    stringly = '{"tool": "t", "arguments": ' + json.dumps("[" * 100 + "]" * 100) + "}"
    (problem,) = JSONToolChain().parse_calls(stringly)
    assert problem == (
        'call 1 (t): "arguments" is nested more than 64 levels deep; write flatter values'
    )


# The pattern the block-scalar reading used to find a line's entries: from every
# character of a long key it ran to the next colon before failing (quadratic). Run on
# short lines only.
REFERENCE_ENTRY = re.compile(r"(?:^|[ \t])[-?](?=[ \t])|[^\s:][^:]*?:(?=[ \t]|$)")
_LINE = st.lists(
    st.sampled_from([" ", "\t", "-", "?", ":", "a", "b:", "- ", ": ", "? ", "\xa0", "\r", "x1"]),
    max_size=14,
).map("".join)


@settings(max_examples=2_000, deadline=None)
@given(_LINE)
def test_a_lines_last_entry_is_where_the_reference_pattern_finds_it(line: str) -> None:
    entries = [
        entry.start() + (1 if entry.group()[0] in " \t" else 0)
        for entry in REFERENCE_ENTRY.finditer(line)
    ]
    assert _last_entry(line) == max(entries, default=-1)
