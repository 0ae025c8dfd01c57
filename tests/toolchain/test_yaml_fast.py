"""The fast readers of common call YAML give what PyYAML gives, or decline.

``compose_common`` reads the plain shape models write (a block list of ``tool:``/``args:``
mappings, short flow collections, one-line scalars) without PyYAML. Each property here
compares it with PyYAML's own safe composer on generated YAML in and around that shape:
the same node tree (tags, values, styles), the same calls and values through
``load_yaml_calls`` / ``load_yaml`` with and without schemas, or a decline (None) that
sends the text to PyYAML. One more test shows the benchmark's shape really is read fast.

``read_common_calls`` reads gent's own call list straight to names and arguments; it is
held to ``compose_common`` (and so to PyYAML) on generated calls in and around that shape:
what it reads, ``compose_common`` reads the same, and the calls built are the same.
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
from toolchain._syntax._yaml_fast import (
    _FLOW_CALLS,  # pyright: ignore[reportPrivateUsage]  # the two readings, side by side
    LOADER,
    Args,
    _flow_calls,  # pyright: ignore[reportPrivateUsage]  # the two readings, side by side
    _line_by_line,  # pyright: ignore[reportPrivateUsage]  # the two readings, side by side
    _read_lines,  # pyright: ignore[reportPrivateUsage]  # the two readings, side by side
    compose_common,
    read_common_calls,
)

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


def outcome(text: str, read: Callable[[str], object], *declining: str) -> object:
    """``read(text)``, or its refusal, with the readers named (of ``_yaml``) declining."""
    with pytest.MonkeyPatch.context() as patch:
        for reader in declining:
            patch.setattr(f"toolchain._syntax._yaml.{reader}", _declines)
        try:
            return read(text)
        except ToolCallParseError as error:
            return ("refused", str(error))


def both_paths(text: str, read: Callable[[str], object]) -> tuple[object, object]:
    """``read(text)`` with the fast readers on, then with them off (PyYAML's path)."""
    return outcome(text, read), outcome(text, read, "compose_common", "read_common_calls")


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


NAMES = ["lookup", "get_weather", "a.b", "x-1", "'quoted'", '"d q"', "~", "123", "yes", "-x"]
ARG_KEYS = ["key", "city", "name", "yes", "a b", "1", "<<", "'q'", "-k", "k:", "?k", "a#b"]


@st.composite
def common_calls(draw: st.DrawFn) -> str:
    """Gent's call list (what ``read_common_calls`` reads), each part now and then off
    the shape: spacing, indentation, keys, values, blank lines, CRLF, one call alone."""

    noisy = draw(st.booleans())  # half the texts are plainly the shape, half now and then not

    def mostly(usual: str, *odd: str) -> str:
        return draw(st.sampled_from([usual] * 12 + list(odd))) if noisy else usual

    def value() -> str:  # mostly a plain word a model writes, some quoted, flow or odd
        kind = draw(st.sampled_from(["plain"] * 8 + ["quoted", "flow"] + ["odd"] * noisy))
        if kind == "plain":
            return draw(st.sampled_from(TRICKY))
        return _scalar_text(draw) if kind == "quoted" else draw(flow() if kind == "flow" else words)

    def key() -> str:
        return draw(st.sampled_from(ARG_KEYS[:5] * 6 + (ARG_KEYS + KEYS) * noisy))

    listed = draw(st.sampled_from([True] * 5 + [False]))
    indent = " " * draw(st.sampled_from([0, 0, 0, 2]))
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 3)) if listed else 1):
        dash = mostly("- ", "-  ", "-", "-   ") if listed else ""
        name = draw(st.sampled_from(NAMES * 6 + TRICKY + ODD * noisy))
        lines.append(f"{indent}{dash}tool{mostly(': ', ':', ':  ', ' : ')}{name}{mostly('', ' ')}")
        column = indent + " " * len(dash)
        shape = draw(st.sampled_from(["flow"] * 4 + ["block"] * 4 + ["none"] + ["other"] * noisy))
        args = column + mostly("", " ") + mostly("args", "arguments", "args ", "tool", "'args'")
        if shape == "flow":
            pairs = [
                f"{key()}{mostly(': ', ':', ':   ', ' : ')}{value()}"
                for _ in range(draw(st.integers(0, 3)))
            ]
            written = "{" + mostly(", ", ",", " ,", ",  ").join(pairs) + mostly("}", " }", ",}")
            lines.append(f"{args}{mostly(': ', ':', ':   ')}{mostly(written, draw(flow()))}")
        elif shape == "block":
            lines.append(f"{args}:{mostly('', ' ')}")
            inner = column + mostly("  ", "    ", "", " ")
            for _ in range(draw(st.integers(0, 3))):
                lines.append(
                    f"{inner}{mostly('', ' ')}{key()}{mostly(': ', ':', ' : ', ':  ')}"
                    f"{mostly(value(), '', value() + ' ')}"
                )
        elif shape == "other":
            lines += draw(block(len(column) + 2, 1))
    if draw(st.booleans()):
        lines.insert(draw(st.integers(0, len(lines))), mostly("", "   ", "#c", "\t"))
    end = mostly("\n", "\r\n", "\r")
    return end.join(lines) + mostly("", end)


def read_tree(calls: list[tuple[str, Args]] | None) -> object:
    """What ``read_common_calls`` says, as ``tree`` says it (mapping styles aside)."""
    if calls is None:
        return None
    return [(name, _args_tree(args)) for name, args in calls]


def _args_tree(args: Args) -> object:
    if args is None:
        return None
    if isinstance(args, list):
        return [(key, tree(value)) for key, value in args]
    if isinstance(args, MappingNode):
        return [(k.value, tree(v)) for k, v in args.value]
    return tree(args)


def compose_tree(text: str) -> object:
    """The calls ``compose_common`` composes from ``text``, as ``read_tree`` says them,
    or "declined", or "not calls" where they are not all ``tool:`` then ``args:``."""
    node = compose_common(text, MAX_COMPOSED)
    if node is None:
        return "declined"
    items = node.value if isinstance(node, SequenceNode) else [node]
    calls: list[tuple[str, object]] = []
    for item in items:
        if not isinstance(item, MappingNode):
            return "not calls"
        keys = [k.value for k, _ in item.value]
        if keys not in (["tool"], ["tool", "args"]):
            return "not calls"
        name = item.value[0][1]
        if not isinstance(name, ScalarNode):
            return "not calls"
        args = item.value[1][1] if len(keys) == 2 else None
        calls.append((name.value.strip(), None if args is None else _args_tree(args)))
    return calls


@settings(max_examples=2000, deadline=None)
@given(common_calls())
@example("- tool: lookup\n  args: {key: alpha}\n- tool: lookup\n  args: {key: beta}")
@example("tool: lookup\nargs:\n  key: alpha\n  n: 3\n")
@example("- tool: a\n  args:\n    k: v\n\n- tool: b\n\n  args: {x: -1, y: 2026-01-27}\n")
@example("- tool: a\n  args:\n    k: v\n   j: w\n")  # a shallower line inside the mapping
@example("- tool: a\n  args:\n  - 1\n")  # a list at the key's column
@example("- tool: a\n  args:\n- tool: b\n")  # args: with nothing under it (null)
@example("- tool: a\n  args: {k: -, j: -x, l: a?b, m: 'q'}\n")
@example("- tool: a\n  args: {k: v, }\n")
@example("- tool: \u00a0a\n")
@example("tool: a\nargs: {k: v}\ntool: b\n")  # a second "tool:" in one mapping
def test_the_direct_reader_reads_what_compose_common_reads(text: str) -> None:
    direct = read_common_calls(text, MAX_COMPOSED)
    if direct is not None:
        composed = compose_tree(text)
        assert read_tree(direct) == composed, text
        assert tree(compose_common(text, MAX_COMPOSED)) == pyyaml_tree(text), text


@settings(max_examples=1000, deadline=None)
@given(common_calls(), st.booleans(), st.sampled_from([1, 2, 50]))
@example("- tool: lookup\n  args: {key: 0123, name: 1_000, yes: no, a b: [1e3, .inf]}\n", True, 50)
@example("- tool: lookup\n  args:\n    name: 0x_\n    key: 2026-01-27\n", True, 50)
@example("- tool: lookup\n  args:\n    name: 5\n- tool: x\n- tool: y\n", False, 1)
@example("- tool: lookup\n  args: [1, 2]\n", True, 50)  # not a mapping: the builder says so
def test_calls_are_the_same_with_and_without_the_direct_reader(
    text: str, with_schema: bool, limit: int
) -> None:
    def schema_for(name: str) -> dict[str, Any] | None:
        return SCHEMA if with_schema else None

    def read(t: str) -> object:
        return load_yaml_calls(t, schema_for, limit=limit, too_many=lambda extra: f"+{extra}")

    direct = outcome(text, read)
    assert repr(direct) == repr(outcome(text, read, "read_common_calls"))
    pyyaml_alone = outcome(text, read, "read_common_calls", "compose_common")
    assert repr(direct) == repr(pyyaml_alone)


@settings(max_examples=2000, deadline=None)
@given(common_calls())
@example("- tool: lookup\n  args: {key: alpha}\n- tool: lookup\n  args: {key: beta}")
@example("- tool: a\n  args: {k: v}\n- tool: b\n  args: {x: -1, y: 2026-01-27}\n")
@example("- tool: a\n  args: {   }\n")  # only blanks: an empty mapping node, line by line
@example("- tool: a\n  args: {k: a?b}\n")  # declined either way
@example("- tool: a\n  args: {k: v, }\n- tool: b\n  args: {k: v}")
@example("- tool: null\n  args: {k: ~, yes: no}\n")
def test_flow_calls_are_read_as_line_by_line(text: str) -> None:
    """Where the one pattern matches the whole text, `_flow_calls` reads what the line
    by line reading reads (the same names and pairs, or None for it to decide)."""
    readable = _line_by_line(text, MAX_COMPOSED)
    if readable is None or _FLOW_CALLS.fullmatch(readable) is None:
        return
    flow = _flow_calls(readable)
    if flow is not None:
        assert read_tree(flow) == read_tree(_read_lines(readable)), text


def test_flow_calls_take_the_benchmark_action_and_decline_the_rest() -> None:
    """The loop benchmark's action is read by the one pattern; a flow of blanks is left to
    the line-by-line reading, which reads it as an empty mapping."""
    action = "- tool: lookup\n  args: {key: alpha}\n- tool: lookup\n  args: {key: beta}"
    assert _FLOW_CALLS.fullmatch(action) is not None
    flow = _flow_calls(action)
    assert flow is not None and [name for name, _ in flow] == ["lookup", "lookup"]
    assert read_tree(flow) == read_tree(_read_lines(action))
    blanks = "- tool: a\n  args: {  }"
    assert _FLOW_CALLS.fullmatch(blanks) is not None and _flow_calls(blanks) is None
    assert read_tree(read_common_calls(blanks, MAX_COMPOSED)) == [("a", [])]
    others = ("- tool: a-b\n  args: {k: v}", "- tool: a\n  args: {k: [v]}", "tool: a\nargs: {k: v}")
    for other in others:
        assert _FLOW_CALLS.fullmatch(other) is None, other


def test_the_direct_reader_reads_gents_shapes_and_declines_the_rest() -> None:
    """The call list as the guidance shows it, its flow form and one call alone are read
    directly; the other shapes models write go to the composers, with the same calls."""
    read = [
        "- tool: lookup\n  args:\n    key: alpha\n    n: 3\n- tool: lookup\n  args: {key: b}\n",
        "tool: lookup\nargs: {key: alpha}\n",
        "- tool: ping\n",
    ]
    for text in read:
        assert read_common_calls(text, MAX_COMPOSED) is not None, text
    assert load_yaml_calls(read[0], lambda name: SCHEMA) == [
        ToolCall("lookup", {"key": "alpha", "n": 3}),
        ToolCall("lookup", {"key": "b"}),
    ]
    declined = [
        "- name: lookup\n  arguments: {key: alpha}\n",  # other keys: the key search
        "- args: {key: alpha}\n  tool: lookup\n",  # another order
        "- tool: lookup\n  args:\n    keys:\n      - a\n",  # nesting under args
        "- tool: lookup\n  args:\n    'key': alpha\n",  # a quoted key
        "- tool: lookup\n  args: {key: alpha}  # why\n",  # a comment
        "- tool: lookup\n\targs: {key: alpha}\n",  # a tab
        "- tool: lookup\n  args: {key: a?b}\n",  # "?" in a flow: YAML readers differ
    ]
    for text in declined:
        assert read_common_calls(text, MAX_COMPOSED) is None, text
    assert compose_common(declined[-1], MAX_COMPOSED) is None
    assert load_yaml_calls(declined[0], lambda name: None) == [ToolCall("lookup", {"key": "alpha"})]
    assert load_yaml_calls(declined[2], lambda name: None) == [ToolCall("lookup", {"keys": ["a"]})]


# Read or declined by the direct reader itself, up to the largest text it takes.
DIRECT_SHAPES: dict[str, Callable[[int], str]] = {
    "calls": lambda chars: _fill("- tool: t\n  args: {a: 1, b: x}\n", chars),
    "block calls": lambda chars: _fill("- tool: t\n  args:\n    a: 1\n    b: [x]\n", chars),
    "a long flat flow": lambda chars: _fill(", a: 1", chars, "- tool: t\n  args: {b: 2", "}"),
    "many keys": lambda chars: _fill("    a: 1\n", chars, "- tool: t\n  args:\n"),
    "blank lines": lambda chars: _fill("\n", chars, "- tool: t\n", "  args: {a: 1}"),
    "a long name": lambda chars: _fill("ab ", chars, "- tool: t"),
}


@pytest.mark.parametrize("shape", DIRECT_SHAPES)
def test_the_direct_reader_costs_linear_time(shape: str) -> None:
    make = DIRECT_SHAPES[shape]
    small, large = make(MAX_COMPOSED // 20), make(MAX_COMPOSED)
    assert read_common_calls(large, MAX_COMPOSED) is not None, shape  # read, not declined

    def read(text: str) -> None:
        for _ in range(20):
            read_common_calls(text, MAX_COMPOSED)

    seen = costlier_than(40, lambda: read(small), lambda: read(large))
    assert seen is None, f"{shape}: super-linear every time: {seen}"


# Near misses of `_FLOW_CALLS` (the direct reader's one pattern): declined, in linear time.
DIRECT_NEAR_MISSES: dict[str, Callable[[int], str]] = {
    "a flow never closed": lambda chars: _fill("a: 1, ", chars, "- tool: t\n  args: {"),
    "the last call off the shape": lambda chars: _fill(
        "- tool: t\n  args: {a: 1}\n", chars, tail="- tool: t\n  args: {a: 1"
    ),
}


@pytest.mark.parametrize("shape", DIRECT_NEAR_MISSES)
def test_the_direct_reader_declines_near_misses_in_linear_time(shape: str) -> None:
    make = DIRECT_NEAR_MISSES[shape]
    small, large = make(MAX_COMPOSED // 20), make(MAX_COMPOSED)
    assert read_common_calls(large, MAX_COMPOSED) is None, shape

    def read(text: str) -> None:
        for _ in range(20):
            read_common_calls(text, MAX_COMPOSED)

    seen = costlier_than(40, lambda: read(small), lambda: read(large))
    assert seen is None, f"{shape}: super-linear every time: {seen}"
