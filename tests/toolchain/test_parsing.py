"""Reading calls out of action content: shapes, fences, YAML typing, hostile input."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from formats import MarkdownFormat, XMLFormat
from tests.support.tools import all_tools
from toolchain import (
    ExecutionContext,
    JSONToolChain,
    Tool,
    ToolCall,
    ToolCallParseError,
    ToolResult,
    YAMLToolChain,
)


def json_chain() -> JSONToolChain:
    chain = JSONToolChain()
    for t in all_tools():
        chain.register_tool(t)
    return chain


def yaml_chain() -> YAMLToolChain:
    chain = YAMLToolChain()
    for t in all_tools():
        chain.register_tool(t)
    return chain


WEATHER = ToolCall("get_weather", {"city": "Paris"})


@pytest.mark.parametrize(
    "content",
    [
        '{"tool": "get_weather", "args": {"city": "Paris"}}',
        '[{"tool": "get_weather", "args": {"city": "Paris"}}]',
        '{"name": "get_weather", "arguments": {"city": "Paris"}}',
        '{"name": "get_weather", "parameters": {"city": "Paris"}}',
        '{"name": "get_weather", "arguments": "{\\"city\\": \\"Paris\\"}"}',
        '{"type": "function", "function": {"name": "get_weather", '
        '"arguments": "{\\"city\\": \\"Paris\\"}"}}',
        'I will call it now:\n```json\n{"tool": "get_weather", "args": {"city": "Paris"}}\n```',
    ],
)
def test_json_call_shapes(content: str) -> None:
    assert json_chain().parse_calls(content) == [WEATHER]


def test_json_lines_are_several_calls() -> None:
    content = '{"tool": "add", "args": {"a": 1}}\n{"tool": "add", "args": {"a": 2}}'
    assert json_chain().parse_calls(content) == [
        ToolCall("add", {"a": 1}),
        ToolCall("add", {"a": 2}),
    ]


@pytest.mark.parametrize(
    "content",
    [
        "- tool: get_weather\n  args:\n    city: Paris",
        "tool: get_weather\nargs:\n  city: Paris",
        "- name: get_weather\n  arguments:\n    city: Paris",
        "```yaml\n- tool: get_weather\n  args: {city: Paris}\n```",
        "- args: {city: Paris}\n  tool: get_weather",  # keys in the other order
        "- tool: get_weather\n  args: {city: Paris}\n  tool: get_weather",  # a repeated key
    ],
)
def test_yaml_call_shapes(content: str) -> None:
    assert yaml_chain().parse_calls(content) == [WEATHER]


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        # "tool" then "args", the shape read without the key search, holding no call.
        ("- tool: [a, b]\n  args: {city: Paris}", "call 1 has no 'tool:' name (keys: tool, args)"),
        ("- tool: get_weather\n  args: [Paris]", "call 1 (get_weather): 'args' must be a mapping"),
    ],
)
def test_yaml_tool_then_args_that_is_no_call_says_why(content: str, problem: str) -> None:
    (item,) = yaml_chain().parse_calls(content)
    assert isinstance(item, str) and item.startswith(problem)


class Strings(BaseModel):
    answer: str
    code: str
    exponent: str
    day: str
    count: int
    flag: bool
    maybe: str | None = None


class Echo(Tool[Strings, dict[str, object]]):
    name = "echo"
    description = "Echo the arguments."

    def call(self, ctx: ExecutionContext, input: Strings) -> ToolResult[dict[str, object]]:
        return ToolResult(input.model_dump())


def test_yaml_keeps_what_the_model_wrote_for_string_fields() -> None:
    chain = YAMLToolChain().register_tool(Echo())
    content = (
        "- tool: echo\n  args:\n    answer: no\n    code: 0123\n    exponent: 1e3\n"
        "    day: 2026-01-27\n    count: 0123\n    flag: yes\n    maybe: ~"
    )
    [call] = chain.parse_calls(content)
    assert call == ToolCall(
        "echo",
        {
            "answer": "no",
            "code": "0123",
            "exponent": "1e3",
            "day": "2026-01-27",
            "count": 123,
            "flag": True,
            "maybe": None,
        },
    )
    result = chain.execute_sync(ExecutionContext(), content, XMLFormat())
    assert result.raw.errors == (None,)
    assert "answer: 'no'\ncode: '0123'" in result.text


def test_yaml_without_schema_uses_yaml_types_but_keeps_dates_as_text() -> None:
    [call] = YAMLToolChain().parse_calls("tool: unknown\nargs: {a: no, b: 2026-01-27, c: 7}")
    assert call == ToolCall("unknown", {"a": False, "b": "2026-01-27", "c": 7})


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"tool": "add", "args": {"a": 1}', "not valid JSON"),
        ("just some prose, no call", "not valid JSON"),
    ],
)
def test_json_content_that_is_not_calls_raises(content: str, message: str) -> None:
    with pytest.raises(ToolCallParseError, match=message):
        json_chain().parse_calls(content)


def test_yaml_syntax_error_names_the_line() -> None:
    with pytest.raises(ToolCallParseError, match=r"not valid YAML: .*line 2"):
        yaml_chain().parse_calls("- tool: add\n\targs: {a: 1}\n")


def test_items_that_are_not_calls_are_reported_per_item() -> None:
    items = json_chain().parse_calls('[{"tool": "add", "args": {"a": 1}}, 42, {"args": {}}]')
    assert items[0] == ToolCall("add", {"a": 1})
    assert items[1] == "call 2 is not an object with a tool name (got int)"
    assert items[2] == 'call 3 has no "tool" name (keys: args)'


def test_yaml_alias_bomb_is_refused() -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
    for level in "bcdefg":
        previous = chr(ord(level) - 1)
        bomb += f"{level}: &{level} [" + ", ".join([f"*{previous}"] * 10) + "]\n"
    content = "tool: add\nargs:\n" + "".join("  " + line + "\n" for line in bomb.splitlines())
    [problem] = yaml_chain().parse_calls(content)
    assert isinstance(problem, str)
    assert problem.startswith("call 1: tool call YAML is too large or too deeply nested")


def test_yaml_recursive_alias_is_refused() -> None:
    [problem] = yaml_chain().parse_calls("tool: add\nargs: &x\n  a: *x\n")
    assert isinstance(problem, str)
    assert "too large or too deeply nested" in problem


def test_a_bad_call_does_not_fail_its_siblings() -> None:
    items = yaml_chain().parse_calls(
        "- tool: add\n  args: {a: 1}\n- tool: add\n  args: {[1, 2]: complex key}\n"
    )
    assert items[0] == ToolCall("add", {"a": 1})
    assert items[1] == "call 2: a YAML mapping key must be a plain scalar"


@pytest.mark.parametrize(
    "content",
    [
        "[" * 40_000,  # libyaml's composer overflowed the C stack here: a segfault
        "- " * 40_000 + "x",
        "tool: add\nargs:\n  a: " + "{b: " * 40_000,
    ],
)
def test_deep_yaml_is_refused_before_composing(content: str) -> None:
    with pytest.raises(ToolCallParseError, match="nested more than 64 levels"):
        yaml_chain().parse_calls(content)


@pytest.mark.parametrize(
    "content",
    [
        "[" * 100_000 + "]" * 100_000,
        '{"tool": "add", "args": {"a": ' + "9" * 5_000 + "}}",
        '{"tool": "add", "arguments": "' + "[" * 100_000 + '"}',
    ],
)
def test_deep_or_huge_json_is_a_parse_error_not_a_crash(content: str) -> None:
    try:
        items = json_chain().parse_calls(content)
    except ToolCallParseError:
        return
    assert all(isinstance(item, str) for item in items)


def test_unclosed_fences_are_linear_and_harmless() -> None:
    content = "```python\n" * 50_000
    with pytest.raises(ToolCallParseError):
        json_chain().parse_calls(content)


def test_yaml_never_builds_python_objects() -> None:
    content = "tool: add\nargs:\n  a: !!python/object/apply:os.system ['echo hi']\n"
    [call] = yaml_chain().parse_calls(content)
    assert isinstance(call, ToolCall)
    assert call.args == {"a": ["echo hi"]}  # the tag is ignored: plain data only


@pytest.mark.parametrize("chain", [json_chain(), yaml_chain()])
def test_oversized_content_is_refused(chain: Any) -> None:
    with pytest.raises(ToolCallParseError, match="too large"):
        chain.parse_calls("x" * 1_000_001)


@pytest.mark.parametrize("fmt", [XMLFormat(), MarkdownFormat()])
def test_calls_in_a_subsection(fmt: Any) -> None:
    chain = JSONToolChain(subsection="direct_call").register_tool(all_tools()[0])
    content = (
        '<direct_call>\n[{"tool": "get_weather", "args": {"city": "Paris"}}]\n</direct_call>'
        if isinstance(fmt, XMLFormat)
        else '## direct_call\n[{"tool": "get_weather", "args": {"city": "Paris"}}]'
    )
    assert chain.parse_calls(content, fmt) == [WEATHER]
    # content without the sub-section is read whole
    assert chain.parse_calls('{"tool": "get_weather", "args": {"city": "Paris"}}', fmt) == [WEATHER]
    assert "direct_call" in chain.guidance


def test_tool_with_arguments_key_keeps_its_arguments() -> None:
    assert json_chain().parse_calls('{"tool": "add", "arguments": {"a": 1}}') == [
        ToolCall("add", {"a": 1})
    ]
