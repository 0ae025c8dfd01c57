"""The fast reader of common call YAML gives what PyYAML gives, or declines.

``compose_common`` reads the plain shape models write (a block list of ``tool:``/``args:``
mappings, short flow collections, one-line scalars) without PyYAML. Each property here
compares it with PyYAML's own safe composer on generated YAML in and around that shape:
the same node tree (tags, values, styles), the same calls and values through
``load_yaml_calls`` / ``load_yaml`` with and without schemas, or a decline (None) that
sends the text to PyYAML. One more test shows the benchmark's shape really is read fast.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from tests.support.timing import costlier_than
from toolchain import ToolCall, ToolCallParseError, YAMLToolChain, load_yaml, tool
from toolchain._syntax._yaml import MAX_COMPOSED, load_yaml_calls
from toolchain._syntax._yaml_fast import LOADER, compose_common

TRICKY = [
    "yes", "no", "on", "off", "Yes", "NO", "y", "n", "true", "False", "null", "Null", "~",
    "0123", "0", "-0", "1e3", "1.5e3", "1_000", "0x1f", "0o17", "0b101", "+12", "-.5", ".5",
    "2026-01-27", "2026-01-27 12:30:00", "12:30", "1:30:15", ".inf", "-.Inf", ".nan", "=",
    "<<", "Paris", "São Paulo", "日本語", "a b", "a  b", "a,b", "a]", "x[0]", "{x}", "a:b",
    "http://x.org/a?b=c", "it's", 'say "hi"', "-x", "--x", "e\u0301", "\U0001f600",
]  # fmt: skip
ODD = [
    "!x", "&a", "*a", "%x", "@x",
    "`x`", "|", ">", "?", "?x", ":x", "-", "- x", "a: b", "a #b", "a#b", "'q'", '"d"',
    "'it''s'", '"a\\nb"', "", " ", "\u00a0x", "x\u2028y", "a\\b",
]  # fmt: skip
ODD_KEYS = ["-k", "k:"]
KEYS = ["tool", "args", "name", "key", "city", "a b", "yes", "1", "'q'", '"d"'] * 4 + ODD_KEYS

words = st.one_of(  # mostly words a model writes, some noise
    *[st.sampled_from(TRICKY * 6 + ODD)] * 7,
    st.text(st.sampled_from("ab1 -:,.'\"[]{}#?!&*|>%@`~\\é\t"), min_size=0, max_size=6),
)


def _scalar_text(draw: st.DrawFn) -> str:
    value = draw(words)
    quote = draw(st.sampled_from(["", "", "", "'", '"']))
    return f"{quote}{value}{quote}"


@st.composite
def flow(draw: st.DrawFn, depth: int = 0) -> str:
    gap = draw(st.sampled_from(["", " ", "  "]))
    if depth < 2 and draw(st.booleans()):
        items = draw(st.lists(flow(depth + 1), max_size=3))
        return "[" + gap + ("," + draw(st.sampled_from([" ", "", "  "]))).join(items) + gap + "]"
    if depth < 2 and draw(st.booleans()):
        pairs = [
            draw(st.sampled_from(KEYS))
            + draw(st.sampled_from([": "] * 6 + [":", " : ", ":  "]))
            + draw(flow(depth + 1))
            for _ in range(draw(st.integers(0, 3)))
        ]
        return "{" + gap + ", ".join(pairs) + draw(st.sampled_from(["", ",", " "])) + "}"
    return _scalar_text(draw)


@st.composite
def block(draw: st.DrawFn, indent: int, depth: int) -> list[str]:
    """Lines of a block collection at ``indent`` (some deliberately off the shape)."""
    pad = " " * indent
    lines: list[str] = []
    if draw(st.booleans()):  # a list
        for _ in range(draw(st.integers(1, 3))):
            after = draw(st.sampled_from(["- "] * 6 + ["-  ", "-"]))
            kind = draw(st.sampled_from(["value", "mapping", "below"] if depth < 3 else ["value"]))
            if kind == "value":
                lines.append(pad + after + draw(flow()))
            elif kind == "mapping" and after != "-":
                inner = draw(block(indent + len(after), depth + 1))
                first = inner[0].lstrip(" ")
                lines += [pad + after + first, *inner[1:]]
            else:
                lines.append(pad + after.rstrip(" "))
                lines += draw(block(indent + draw(st.sampled_from([1, 2, 4])), depth + 1))
        return lines
    for _ in range(draw(st.integers(1, 3))):
        key = draw(st.sampled_from(KEYS))
        colon = draw(st.sampled_from([": "] * 12 + [":", " : ", ":   "]))
        kind = draw(st.sampled_from(["value", "below", "same"] if depth < 3 else ["value"]))
        if kind == "value":
            lines.append(pad + key + colon + draw(flow()))
        else:
            lines.append(pad + key + colon.rstrip(" "))
            step = 0 if kind == "same" else draw(st.sampled_from([1, 2, 3]))
            lines += draw(block(indent + step, depth + 1))
    return lines


@st.composite
def call_yaml(draw: st.DrawFn) -> str:
    """Call YAML in and around the common shape: odd spacing, comments, CRLF, tabs."""
    lines = draw(block(draw(st.sampled_from([0, 0, 0, 2])), 0))
    noise = draw(
        st.lists(
            st.tuples(
                st.integers(0, len(lines) - 1),
                st.sampled_from(["  ", " # note", "#x", "\t", " \t", "\r", "", "\u00a0"]),
            ),
            max_size=draw(st.sampled_from([0, 0, 2])),
        )
    )
    for at, tail in noise:
        lines[at] += tail
    if draw(st.booleans()):
        lines.insert(draw(st.integers(0, len(lines))), draw(st.sampled_from(["", "   ", "---"])))
    end = draw(st.sampled_from(["\n", "\r\n", "\n", "\n"]))
    return end.join(lines) + draw(st.sampled_from(["", end]))


def tree(node: Node | None) -> object:
    """What a node tree says, marks aside (libyaml's plain style is "")."""
    if node is None:
        return None
    if isinstance(node, ScalarNode):
        return ("scalar", node.tag, node.value, node.style or "")
    if isinstance(node, SequenceNode):
        return ("seq", node.tag, node.flow_style, [tree(item) for item in node.value])
    assert isinstance(node, MappingNode)
    return ("map", node.tag, node.flow_style, [(tree(k), tree(v)) for k, v in node.value])


def pyyaml_tree(text: str) -> object:
    try:
        return tree(yaml.compose(text, Loader=LOADER))
    except yaml.YAMLError:
        return "error"


SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "key": {"type": "string"},
        "city": {"type": "string"},
        "name": {"type": ["integer", "null"]},
        "yes": {"type": "boolean"},
        "a b": {"type": "array", "items": {"type": "number"}},
    },
}


def _declines(text: str, max_size: int) -> None:
    """A fast reader that declines everything: PyYAML's path alone."""


def both_paths(text: str, read: Callable[[str], object]) -> tuple[object, object]:
    """``read(text)`` with the fast reader on, then with it off (PyYAML's path)."""

    def outcome() -> object:
        try:
            return read(text)
        except ToolCallParseError as error:
            return ("refused", str(error))

    fast_result = outcome()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("toolchain._syntax._yaml.compose_common", _declines)
        return fast_result, outcome()


@settings(max_examples=1500, deadline=None)
@given(call_yaml())
@example("- tool: lookup\n  args: {key: alpha}\n- tool: lookup\n  args: {key: beta}\n")
@example("- tool: a\r\n  args:\r\n    key: 0123\r\n    yes: on\r\n")
@example("args:\n- 1\n- [a, {b: ~}]\nname:\n")
@example("- tool: a\n  args:\n    key: x  # why\n")
@example("- tool: a\n  args:\n   key: x\n    more\n")
@example("-   tool: a\n    args: { k :  v ,  x: -1 }\n-\ttool: b\n")  # blanks after "-", in flow
@example("- 'a\n  b': c\n")  # no part of a line crosses a line break
@example('- "d\n  e": f\n')
@example("- g\n  h: i\n")
@example("---\n- tool: a\n...\n")
@example("- tool: a\n  args: {k: v, 'q': w}\n- tool: a\n  args: {k: a: b}\n")
def test_fast_reader_gives_pyyamls_tree_or_declines(text: str) -> None:
    fast = compose_common(text, MAX_COMPOSED)
    if fast is not None:
        assert tree(fast) == pyyaml_tree(text), text


@settings(max_examples=600, deadline=None)
@given(call_yaml(), st.booleans())
@example("- tool: lookup\n  args: {key: 0123, name: 1_000, yes: no, a b: [1e3, .inf]}\n", True)
@example("- tool: lookup\n  args: {key: '5', name: 2026-01-27, city: Paris, n: 5}\n", True)
@example('- tool: lookup\n  args:\n    key: "0123"\n    when: 2026-01-27 12:30:00\n', True)
def test_calls_and_values_are_the_same_with_and_without_the_fast_reader(
    text: str, with_schema: bool
) -> None:
    def schema_for(name: str) -> dict[str, Any] | None:
        return SCHEMA if with_schema else None

    fast, slow = both_paths(text, lambda t: load_yaml_calls(t, schema_for, limit=2))
    assert repr(fast) == repr(slow)  # repr: nan != nan, but it reads alike
    fast, slow = both_paths(text, lambda t: load_yaml(t, SCHEMA if with_schema else None))
    assert repr(fast) == repr(slow)


def test_the_benchmark_shapes_are_read_without_pyyaml(monkeypatch: pytest.MonkeyPatch) -> None:
    """The loop benchmark's action and the toolchain benchmark's calls never reach PyYAML
    (so the fast reader cannot silently decline everything)."""

    @tool
    def lookup(key: str) -> dict[str, str]:
        """Look a key up."""
        return {"key": key}

    @tool
    def get_weather(city: str, days: int) -> dict[str, object]:
        """The weather."""
        return {"city": city, "days": days}

    def no_pyyaml(*args: object, **kwargs: object) -> None:
        raise AssertionError("PyYAML composed a call the fast reader should have read")

    monkeypatch.setattr(yaml, "compose", no_pyyaml)
    chain = YAMLToolChain().register_tool(lookup).register_tool(get_weather)
    action = "- tool: lookup\n  args: {key: alpha}\n- tool: lookup\n  args: {key: beta}\n"
    assert chain.parse_calls(action) == [
        ToolCall("lookup", {"key": "alpha"}),
        ToolCall("lookup", {"key": "beta"}),
    ]
    one = "- tool: get_weather\n  args:\n    city: Paris\n    days: 2\n    date: 2026-01-27\n"
    assert chain.parse_calls(one) == [
        ToolCall("get_weather", {"city": "Paris", "days": 2, "date": "2026-01-27"})
    ]


def test_declined_yaml_still_reads_through_pyyaml() -> None:
    """Comments, anchors and block scalars are PyYAML's: the same calls as before."""
    text = "- tool: lookup  # first\n  args: &a {key: alpha}\n- tool: lookup\n  args: *a\n"
    assert compose_common(text, MAX_COMPOSED) is None
    assert load_yaml_calls(text, lambda name: None) == [
        ToolCall("lookup", {"key": "alpha"}),
        ToolCall("lookup", {"key": "alpha"}),
    ]
    assert load_yaml("note: |\n  two\n  lines\n") == {"note": "two\nlines\n"}


def test_bounds_are_the_bounded_paths() -> None:
    """Too large or too deep: declined, so PyYAML's bounded path refuses it in its words."""
    deep = "".join(" " * level + "a:\n" for level in range(80))
    assert compose_common(deep, MAX_COMPOSED) is None
    with pytest.raises(ToolCallParseError, match="nested more than"):
        load_yaml(deep)
    flat = "a: [" + "[" * 70 + "]" * 70 + "]"
    assert compose_common(flat, MAX_COMPOSED) is None
    big = "- tool: a\n  args: {key: " + "x" * MAX_COMPOSED + "}\n"
    assert compose_common(big, MAX_COMPOSED) is None


def _fill(unit: str, chars: int, head: str = "", tail: str = "") -> str:
    return head + unit * ((chars - len(head) - len(tail)) // len(unit)) + tail


# Read or declined by the fast reader itself, up to the largest text it takes.
FAST_SHAPES: dict[str, Callable[[int], str]] = {
    "calls": lambda chars: _fill("- tool: t\n  args: {a: 1, b: [x, y]}\n", chars),
    "a long flow list": lambda chars: _fill("1, ", chars, "- tool: t\n  args: {a: [", "1]}"),
    "a long plain value": lambda chars: _fill("ab ", chars, "- tool: t\n  args:\n    a: ", "x"),
    "spaces inside a key": lambda chars: _fill(" ", chars, "- tool: t\n  a", "b: 1"),
    "a key never ended": lambda chars: _fill("a", chars, "- tool: t\n  args:\n    "),
    "quotes never closed in a flow": lambda chars: _fill("'a:", chars, "a: ["),
    "escapes in a flow": lambda chars: _fill('"\\', chars, "a: ["),
    "a flow never closed": lambda chars: _fill("[a, ", chars, "a: "),
}


@pytest.mark.parametrize("shape", FAST_SHAPES)
def test_the_fast_reader_costs_linear_time(shape: str) -> None:
    make = FAST_SHAPES[shape]
    small, large = make(MAX_COMPOSED // 20), make(MAX_COMPOSED)

    def read(text: str) -> None:
        # Each tree let go at once: twenty large trees kept alive measured the machine's
        # memory and the collector (53x once, in a whole suite on a busy host), not us.
        for _ in range(20):
            compose_common(text, MAX_COMPOSED)

    # Twenty times the text: at most about twenty times the work (quadratic: 400 times).
    seen = costlier_than(40, lambda: read(small), lambda: read(large))
    assert seen is None, f"{shape}: super-linear every time: {seen}"
