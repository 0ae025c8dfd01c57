"""Hostile action content and tool outputs: only the documented exceptions ever leave.

Parsing raises nothing but ``ToolCallParseError`` (whole content unreadable) and reports
everything else per call; serialising raises nothing but ``OutputError``.
"""

from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.timing import costlier_than
from tests.support.tools import all_tools
from toolchain import (
    JSONToolChain,
    OutputError,
    ToolCall,
    ToolCallParseError,
    YAMLToolChain,
    load_yaml,
    to_builtins,
    to_json,
    to_yaml,
)
from toolchain._syntax._json import call_from_mapping, decode_json_calls
from toolchain._syntax._yaml import load_yaml_calls

INT_SCHEMA: dict[str, Any] = {"properties": {"a": {"type": "integer"}}, "type": "object"}
NUMBER_SCHEMA: dict[str, Any] = {"properties": {"a": {"type": "number"}}, "type": "object"}
BOOL_SCHEMA: dict[str, Any] = {"properties": {"a": {"type": "boolean"}}, "type": "object"}
TEXT_SCHEMA: dict[str, Any] = {"properties": {"a": {"type": "string"}}, "type": "object"}


def yaml_chain() -> YAMLToolChain:
    chain = YAMLToolChain()
    for t in all_tools():
        chain.register_tool(t)
    return chain


def json_chain() -> JSONToolChain:
    chain = JSONToolChain()
    for t in all_tools():
        chain.register_tool(t)
    return chain


def schema_of(schema: dict[str, Any] | None) -> Callable[[str], dict[str, Any] | None]:
    def schema_for(name: str) -> dict[str, Any] | None:
        return schema if name == "t" else None

    return schema_for


@pytest.fixture
def int_digit_limit() -> Iterator[None]:
    previous = sys.get_int_max_str_digits()
    yield
    sys.set_int_max_str_digits(previous)


# -- 1. scalars YAML resolves to a type its constructor cannot read --------------------

# (what the model wrote, the type YAML resolves it to, the text it stands for)
UNREADABLE = [
    ("0x_", "integer", "0x_"),
    ("0b_", "integer", "0b_"),
    ("+0x_", "integer", "+0x_"),
    ("-0b_", "integer", "-0b_"),
    ("9" * 5000, "integer", "9" * 5000),
    ("!!int abc", "integer", "abc"),
    ("!!int ", "integer", ""),
    ("!!int 0o_", "integer", "0o_"),
    ("!!int 1:x", "integer", "1:x"),
    ("!!float abc", "number", "abc"),
    ("!!float 1:x", "number", "1:x"),
    ("!!bool maybe", "boolean", "maybe"),
]
TYPED = {"integer": INT_SCHEMA, "number": NUMBER_SCHEMA, "boolean": BOOL_SCHEMA}


@pytest.mark.parametrize(("value", "kind", "text"), UNREADABLE)
def test_unreadable_scalar_for_a_typed_parameter_fails_only_its_call(
    value: str, kind: str, text: str
) -> None:
    content = f"- tool: t\n  args:\n    a: {value}\n- tool: t\n  args:\n    a: 1\n"
    first, second = load_yaml_calls(content, schema_of(TYPED[kind]))
    assert isinstance(first, str)
    assert first.startswith(f"call 1 (t): argument a: {text[:30]!r}")
    assert f" is not {'an' if kind == 'integer' else 'a'} {kind} (" in first
    assert "text is not accepted there" in first
    assert second == ToolCall("t", {"a": 1})


@pytest.mark.parametrize(("value", "kind", "text"), UNREADABLE)
def test_unreadable_scalar_stays_text_where_a_string_is_accepted(
    value: str, kind: str, text: str
) -> None:
    either = {"properties": {"a": {"anyOf": [TYPED[kind]["properties"]["a"], {"type": "string"}]}}}
    for schema in (TEXT_SCHEMA, either, None):
        (call,) = load_yaml_calls(f"- tool: t\n  args: {{a: {value}}}", schema_of(schema))
        assert call == ToolCall("t", {"a": text})
        assert load_yaml(f"a: {value}", schema) == {"a": text}


def test_unreadable_scalar_through_the_yaml_chain_is_a_per_call_error() -> None:
    content = "- tool: add\n  args: {a: 0x_}\n- tool: add\n  args: {a: !!bool maybe, b: 1}\n"
    content += "- tool: add\n  args: {a: 2, b: 3}\n"
    first, second, third = yaml_chain().parse_calls(content)
    assert first == (
        "call 1 (add): argument a: '0x_' is not an integer (it has no digits) and text is not "
        "accepted there; write digits such as 42"
    )
    assert isinstance(second, str)
    assert "'maybe' is not a boolean" in second
    assert third == ToolCall("add", {"a": 2, "b": 3})


def test_unreadable_scalar_problem_names_its_nested_path() -> None:
    schema = {
        "properties": {
            "rows": {"type": "array", "items": {"properties": {"n": {"type": "integer"}}}}
        }
    }
    with pytest.raises(ToolCallParseError) as raised:
        load_yaml("rows:\n- n: 1\n- n: !!int abc\n", schema)
    assert type(raised.value) is ToolCallParseError
    assert str(raised.value).startswith("rows[1].n: 'abc' is not an integer")


def test_load_yaml_keeps_unreadable_scalars_as_text_without_a_schema() -> None:
    assert load_yaml("{a: 0x_, b: !!int abc, c: !!bool maybe, d: !!int , e: !!float x}") == {
        "a": "0x_",
        "b": "abc",
        "c": "maybe",
        "d": "",
        "e": "x",
    }


def test_huge_integer_is_refused_for_an_int_parameter_not_a_valueerror() -> None:
    (problem,) = load_yaml_calls(
        "- tool: t\n  args: {a: " + "9" * 5000 + "}", schema_of(INT_SCHEMA)
    )
    assert isinstance(problem, str)
    assert "(5000 characters) is not an integer (it has more than 4300 digits)" in problem


@pytest.mark.parametrize(
    "value",
    [
        "0x" + "f" * 4000,
        "0b" + "1" * 15000,
        "0" + "7" * 4301,
        "!!int 1" + ":1" * 2500,
        "1" + "0" * 4300,
        "!!int 1:" + "9" * 4301,
        "9" * 4301 + ":1",
    ],
)
def test_integers_that_could_not_be_printed_again_are_refused(value: str) -> None:
    (problem,) = load_yaml_calls(f"- tool: t\n  args: {{a: {value}}}", schema_of(INT_SCHEMA))
    assert isinstance(problem, str)
    assert "it has more than 4300 digits" in problem


def test_a_lowered_int_digit_limit_is_respected(int_digit_limit: None) -> None:
    sys.set_int_max_str_digits(1000)
    (problem,) = load_yaml_calls(
        "- tool: t\n  args: {a: " + "7" * 1500 + "}", schema_of(INT_SCHEMA)
    )
    assert isinstance(problem, str)
    assert "more than 1000 digits" in problem
    assert load_yaml("a: " + "7" * 999, INT_SCHEMA) == {"a": int("7" * 999)}


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("0x1F", 31),
        ("-0x1F", -31),
        ("0b101", 5),
        ("+0b1_01", 5),
        ("1:20", 80),
        ("-1:0:0", -3600),
        ("0123", 123),
        ("+1_000", 1000),
        ("!!int 0o17", 15),
        ("0" * 50 + "7" * 4300, int("7" * 4300)),
        ("!!int 1" + ":59" * 2000, 2 * 60**2000 - 1),
        ("9" * 4300, int("9" * 4300)),
        ("0x" + "f" * 3500, int("f" * 3500, 16)),
    ],
)
def test_yaml_integer_forms_are_still_read(value: str, expected: int) -> None:
    assert load_yaml(f"a: {value}", INT_SCHEMA) == {"a": expected}


@pytest.mark.parametrize(
    ("value", "expected"),
    [("1.5", 1.5), ("-1_0.5", -10.5), ("1:30.5", 90.5), ("!!float 3", 3.0), (".inf", float("inf"))],
)
def test_yaml_float_forms_are_still_read(value: str, expected: float) -> None:
    assert load_yaml(f"a: {value}", NUMBER_SCHEMA) == {"a": expected}


@pytest.mark.parametrize(
    ("value", "expected"), [("yes", True), ("Off", False), ("!!bool TRUE", True)]
)
def test_yaml_booleans_are_still_read(value: str, expected: bool) -> None:
    assert load_yaml(f"a: {value}", BOOL_SCHEMA) == {"a": expected}


# -- lone surrogates, deep nesting, huge numbers on both chains -------------------------


@pytest.mark.parametrize("surrogate", [chr(0xD800), chr(0xDFFF), chr(0xDC80)])
@pytest.mark.parametrize(
    "content",
    ["{s}", "- tool: add\n  args: {{a: '{s}'}}", '{{"tool": "add", "args": {{"a": "{s}"}}}}'],
)
def test_lone_surrogate_is_a_parse_error_on_both_chains(surrogate: str, content: str) -> None:
    text = content.format(s=surrogate)
    code = f"U+{ord(surrogate):04X}"
    for parse in (yaml_chain().parse_calls, json_chain().parse_calls, load_yaml):
        with pytest.raises(ToolCallParseError, match=re.escape(f"unpaired surrogate ({code})")):
            parse(text)


def test_surrogate_message_says_where() -> None:
    with pytest.raises(ToolCallParseError) as raised:
        load_yaml("a: 'x\udc80'")
    assert str(raised.value) == (
        "the text holds an unpaired surrogate (U+DC80) at character 5, which is not valid "
        "Unicode; write the call again without it"
    )


@pytest.mark.parametrize(
    "content",
    [
        '{"tool": "add", "args": {"a": ' + "9" * 5000 + "}}",
        '{"tool": "add", "args": {"a": 1e99999}}',
    ],
)
def test_json_numbers_out_of_range_are_a_parse_error_that_says_so(content: str) -> None:
    with pytest.raises(ToolCallParseError, match=r"out of range.*write numbers this large as"):
        json_chain().parse_calls(content)


def test_big_json_integers_within_the_digit_limit_are_read() -> None:
    content = '{"tool": "add", "args": {"a": ' + "9" * 4300 + "}}"
    assert json_chain().parse_calls(content) == [ToolCall("add", {"a": int("9" * 4300)})]


@pytest.mark.parametrize("opener", ["[", '{"a": ', '[{"tool": "add", "args": '])
def test_deep_json_is_a_parse_error_that_says_so(opener: str) -> None:
    with pytest.raises(ToolCallParseError, match="nested more than 64 levels deep"):
        decode_json_calls(opener * (900_000 // len(opener)))


def test_deep_arguments_string_is_a_per_call_problem() -> None:
    problem = call_from_mapping(0, {"name": "add", "arguments": "[" * 100_000})
    assert problem == (
        'call 1 (add): "arguments" is nested more than 64 levels deep; write flatter values'
    )


@pytest.mark.parametrize(
    "arguments",
    ["9" * 5000, '{"a": ' + "9" * 5000 + "}", "\ud800", '{"a": "\\ud800"}', "{"],
)
def test_bad_arguments_string_is_a_per_call_problem(arguments: str) -> None:
    problem = call_from_mapping(0, {"name": "add", "arguments": arguments})
    assert isinstance(problem, str)
    assert problem.startswith('call 1 (add): "arguments" is a string that is not JSON (')
    assert problem.endswith("write the arguments as a JSON object")


# -- 6. linear time -------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        "1" + ":1" * 490_000,  # was quadratic: PyYAML multiplied a growing int per part
        "!!int 1" + ":1" * 490_000,
        "9" * 990_000,
        "0x" + "f" * 990_000,
        "1" + "_" * 990_000,
    ],
)
def test_a_megabyte_scalar_is_read_or_refused(value: str) -> None:
    # Its time (linear; quadratic took minutes) is in benchmarks/adversarial_chains.py.
    (problem,) = load_yaml_calls(f"- tool: t\n  args: {{a: {value}}}", schema_of(INT_SCHEMA))
    assert isinstance(problem, str) or problem == ToolCall("t", {"a": 1})


def _repeat(unit: str, chars: int, head: str = "", tail: str = "") -> str:
    return head + unit * ((chars - len(head) - len(tail)) // len(unit)) + tail


YAML_SHAPES: dict[str, Callable[[int], str]] = {
    "merge keys": lambda chars: _repeat("<<: \n", chars),  # 1 MB: was 16x for 10x
    "empty keys": lambda chars: _repeat("a: \n", chars),
    "flow list": lambda chars: _repeat("1, ", chars, "- tool: t\n  args: {a: [", "]}"),
    "calls": lambda chars: _repeat("- tool: t\n  args: {a: 1}\n", chars),
}


@pytest.mark.parametrize("shape", YAML_SHAPES)
def test_yaml_with_many_nodes_costs_linear_time(shape: str) -> None:
    make = YAML_SHAPES[shape]
    chain = yaml_chain()
    small, large = make(50_000), make(1_000_000)  # the largest content a chain reads
    # Twenty times the text: at most about twenty times the work (composing the whole
    # tree was superlinear: 30x and more).
    seen = costlier_than(
        20, lambda: _parse_or_refuse(chain, small), lambda: _parse_or_refuse(chain, large)
    )
    assert seen is None, f"{shape}: super-linear every time: {seen}"


def _parse_or_refuse(chain: JSONToolChain | YAMLToolChain, text: str) -> object:
    try:
        return chain.parse_calls(text)
    except ToolCallParseError as error:
        return error


# What hostile content looks like to a chain: an opener repeated and never closed,
# brackets nested as deep as the text goes, a quote never closed, and the YAML shapes
# the pre-scan of flow nesting reads with care (brackets and quotes inside a word,
# where it looks back for a tag or an anchor; block scalars, whose line it reads).
HOSTILE_SHAPES: dict[str, Callable[[int], str]] = {
    "brackets opened, never closed": lambda chars: _repeat("[", chars),
    "JSON objects opened, never closed": lambda chars: _repeat('{"a":', chars),
    "YAML objects opened, never closed": lambda chars: _repeat("{a: ", chars),
    "calls opened, never closed": lambda chars: _repeat('{"tool": "t", "args": ', chars),
    "a quote never closed": lambda chars: _repeat("\\", chars, 'a: "'),
    "a single quote never closed": lambda chars: _repeat("x", chars, "a: '"),
    "quotes inside a word": lambda chars: _repeat("x'", chars),
    "brackets inside a word": lambda chars: _repeat("x{", chars),
    "brackets after tags inside a word": lambda chars: _repeat("x!{", chars),
    "tags before brackets": lambda chars: _repeat("!t [] ", chars),
    # Each entry of the line was looked for from every character of a long key: 64 KB
    # took 21 s.
    "a long key before a block scalar": lambda chars: _repeat("a", chars, "", ":x: |\n" + "[" * 70),
    "block scalars": lambda chars: _repeat("- a:b: |\n", chars, "", "[" * 70),
    "comments": lambda chars: _repeat("x #[\n", chars),
}


@pytest.mark.parametrize("kind", ["json", "yaml"])
@pytest.mark.parametrize("shape", HOSTILE_SHAPES)
def test_hostile_content_costs_linear_time(kind: str, shape: str) -> None:
    make = HOSTILE_SHAPES[shape]
    chain = json_chain() if kind == "json" else yaml_chain()
    small, large = make(125_000), make(500_000)
    # Four times the text: about four times the work; quadratic work would be sixteen.
    seen = costlier_than(
        8, lambda: _parse_or_refuse(chain, small), lambda: _parse_or_refuse(chain, large)
    )
    assert seen is None, f"{shape}: super-linear every time: {seen}"


def test_brackets_inside_a_word_cost_what_brackets_between_words_cost() -> None:
    # From each bracket inside a word the pre-scan looked back up to 256 characters for
    # a tag or an anchor: 1 MB of `x{` took 15 s (8 s unloaded), 14 times as long as as
    # many brackets between words. A ratio of two texts with as many brackets.
    chain = yaml_chain()
    inside, between = "x{" * 100_000, "x {" * 100_000
    seen = costlier_than(
        3,
        lambda: _parse_or_refuse(chain, between),
        lambda: _parse_or_refuse(chain, inside),
        slack=0.02,
    )
    assert seen is None, f"brackets inside a word cost more every time: {seen}"


def test_yaml_with_too_many_nodes_is_refused_in_our_words() -> None:
    with pytest.raises(ToolCallParseError, match=r"YAML holds more than 40000 keys and values"):
        yaml_chain().parse_calls("<<: \n" * 200_000)
    with pytest.raises(ToolCallParseError, match=r"YAML holds more than 40000 keys and values"):
        load_yaml("[" + "1, " * 50_000 + "]")
    assert len(load_yaml("[" + "1, " * 9_000 + "]")) == 9_000  # within the bound: read


# -- 4. outputs -------------------------------------------------------------------------

SERIALISERS = [to_json, to_yaml, to_builtins]


@pytest.mark.parametrize("serialise", SERIALISERS)
@pytest.mark.parametrize(
    ("value", "named"),
    [
        ({(1, 2): "x"}, "dict key (1, 2) is a tuple; output keys must be strings"),
        ({"rows": [{None: 1}]}, "dict key None is a NoneType; output keys must be strings"),
        ({True: 1}, "dict key True is a bool; output keys must be strings"),
        ({frozenset({1}): 1}, "dict key frozenset({1}) is a frozenset; output keys must be"),
    ],
)
def test_non_string_dict_key_is_an_output_error_naming_it(
    serialise: Any, value: object, named: str
) -> None:
    with pytest.raises(OutputError) as raised:
        serialise(value)
    assert str(raised.value).startswith(named)


def test_int_and_float_keys_are_accepted_and_written_as_json_strings() -> None:
    assert to_json({1: "a", 2.5: "b"}) == '{"1":"a","2.5":"b"}'
    assert to_yaml({1: "a"}) == "1: a"
    assert to_builtins({1: "a"}) == {1: "a"}


@pytest.mark.parametrize("serialise", SERIALISERS)
def test_self_referencing_output_is_an_output_error(serialise: Any) -> None:
    looped: dict[str, object] = {"a": [1]}
    looped["self"] = {"inner": looped}
    with pytest.raises(OutputError, match="tool output contains itself"):
        serialise(looped)


@pytest.mark.parametrize("serialise", SERIALISERS)
def test_deep_output_is_an_output_error(serialise: Any) -> None:
    deep: list[object] = []
    for _ in range(20_000):
        deep = [deep]
    with pytest.raises(OutputError, match="nested too deeply"):
        serialise(deep)


def test_output_yaml_deeper_than_pyyaml_recurses_is_an_output_error() -> None:
    deep: list[object] = []
    for _ in range(600):
        deep = [deep]
    assert to_json(deep).startswith("[[[")
    with pytest.raises(OutputError, match="nested too deeply"):
        to_yaml(deep)


@pytest.mark.parametrize("serialise", [to_json, to_yaml])
@pytest.mark.parametrize("value", ["\ud800", {"a": "x\udfff"}, ["\udc80"], {"\ud800": 1}])
def test_lone_surrogate_in_output_is_an_output_error(serialise: Any, value: object) -> None:
    with pytest.raises(OutputError, match="unpaired surrogate"):
        serialise(value)


@pytest.mark.parametrize("serialise", [to_json, to_yaml])
def test_integer_past_the_digit_limit_in_output_is_an_output_error(serialise: Any) -> None:
    with pytest.raises(OutputError):
        serialise({"n": 10**5000})


# -- 5. properties ------------------------------------------------------------------------

FRAGMENTS = st.sampled_from(
    [
        "- tool: add\n  args:\n    a: ",
        "- tool: get_weather\n  args: {city: ",
        "{tool: add, args: {a: ",
        '{"tool": "add", "args": {"a": ',
        '{"name": "add", "arguments": "',
        "[",
        "]",
        "{",
        "}",
        ", ",
        ": ",
        "\n",
        "  ",
        "- ",
        "? ",
        '"',
        "'",
        "|\n",
        "---\n",
        "```yaml\n",
        "```\n",
        "!!int ",
        "!!float ",
        "!!bool ",
        "!!null ",
        "!!str ",
        "!!binary ",
        "!!timestamp ",
        "!!python/object:os.system ",
        "!!python/name:builtins.eval ",
        "!custom ",
        "&a ",
        "*a",
        "<<: ",
        "0x_",
        "0b_",
        "+0x_",
        "0o_",
        "0x1F",
        "1_000",
        "1:20:30",
        "0123",
        ".inf",
        "maybe",
        "yes",
        "~",
        "null",
        "1e99999",
        "NaN",
        "\\ud800",
        "\ud800",
        "\udfff",
        "\x00",
        "\ufeff",
        "\u2028",
    ]
)
HUGE = st.one_of(
    st.integers(4000, 6000).map(lambda n: "9" * n),
    st.integers(1, 2000).map(lambda n: "1" + ":1" * n),
    st.integers(1, 20000).map(lambda n: "0x" + "f" * n),
)
DEEP = st.tuples(st.sampled_from(["[", "{", "- ", "{a: ", '{"a": ']), st.integers(50, 3000)).map(
    lambda pair: pair[0] * pair[1]
)
PIECE = st.one_of(
    FRAGMENTS,
    FRAGMENTS,
    FRAGMENTS,
    HUGE,
    DEEP,
    st.text(max_size=8),
    st.characters(categories=["Cs"]),
)
HOSTILE = st.lists(PIECE, max_size=12).map("".join)
PROPERTY = settings(max_examples=250, deadline=None)


@PROPERTY
@given(HOSTILE)
def test_yaml_calls_raise_only_parse_errors(content: str) -> None:
    schemas = {"add": INT_SCHEMA, "get_weather": TEXT_SCHEMA}
    try:
        items = load_yaml_calls(content, schemas.get)
    except ToolCallParseError:
        return
    assert all(isinstance(item, ToolCall | str) for item in items)


CHAINS = (yaml_chain(), json_chain())


@PROPERTY
@given(HOSTILE)
def test_chains_raise_only_parse_errors(content: str) -> None:
    for chain in CHAINS:
        try:
            items = chain.parse_calls(content)
        except ToolCallParseError as error:
            problem = str(error)
        else:
            assert all(isinstance(item, ToolCall | str) for item in items)
            continue
        # parse_calls has a last-resort guard for exceptions that escape the parsers;
        # it must never be what turned this content into a parse error.
        assert "could not be read (" not in problem


@PROPERTY
@given(HOSTILE)
def test_load_yaml_raises_only_parse_errors(content: str) -> None:
    for schema in (None, INT_SCHEMA, BOOL_SCHEMA):
        with contextlib.suppress(ToolCallParseError):
            load_yaml(content, schema)
