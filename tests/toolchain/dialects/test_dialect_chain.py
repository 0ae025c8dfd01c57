"""``DialectToolChain``: native formats run through the same validation, hooks, errors
and observations as the JSON and YAML chains."""

from __future__ import annotations

import pytest

from formats import MarkdownFormat, XMLFormat
from toolchain import (
    DialectPolicy,
    DialectToolChain,
    ExecutionContext,
    JSONToolChain,
    ToolCall,
    ToolCallParseError,
    ToolChain,
    ToolHook,
    tool,
)


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def search(query: str, limit: int = 5) -> str:
    """Search the web."""
    return f"{limit} results for {query}"


def chain(**options: object) -> DialectToolChain:
    made = DialectToolChain(**options)  # type: ignore[arg-type]
    return made.register_tool(add).register_tool(search)


def run(text: str, made: DialectToolChain | None = None) -> tuple[list[str], list[object]]:
    """Each call's name and its output or error kind."""
    result = (made or chain()).execute_sync(ExecutionContext(), text, XMLFormat())
    names = [call.name for call in result.raw.calls]
    outcomes: list[object] = [
        error.kind if error is not None else ok.output if ok is not None else None
        for ok, error in zip(result.raw.results, result.raw.errors, strict=True)
    ]
    return names, outcomes


def test_it_is_a_tool_chain() -> None:
    assert isinstance(chain(), ToolChain)
    assert chain().name == "action"
    assert "<tool_call>" in chain().guidance
    assert chain(guidance="Write [TOOL_CALLS].").guidance == "Write [TOOL_CALLS]."


@pytest.mark.parametrize(
    "text",
    [
        '<tool_call>{"name": "add", "arguments": {"a": 2, "b": 3}}</tool_call>',
        '[TOOL_CALLS]add{"a": 2, "b": 3}',
        "<function=add>\n<parameter=a>\n2\n</parameter>\n<parameter=b>\n3\n</parameter>\n</function>",
        "<tool_call>add\n<arg_key>a</arg_key><arg_value>2</arg_value>"
        "<arg_key>b</arg_key><arg_value>3</arg_value></tool_call>",
        "[add(a=2, b=3)]",
        '{"name": "add", "parameters": {"a": 2, "b": 3}}',
        "<|python_tag|>add.call(a=2, b=3)",
        "call:add{a:2,b:3}",
        '<invoke name="add"><parameter name="a">2</parameter>'
        '<parameter name="b">3</parameter></invoke>',
        "<|channel|>commentary to=functions.add <|constrain|>json<|message|>"
        '{"a": 2, "b": 3}<|call|>',
        'Thought: sum it\nAction: add\nAction Input: {"a": 2, "b": 3}',
        '{"tool": "add", "args": {"a": 2, "b": 3}}',
    ],
)
def test_every_format_runs_the_same_call(text: str) -> None:
    # Text parameters (Qwen3-Coder, GLM, invoke) become integers by the tool's schema.
    assert run(text) == (["add"], [5])


def test_a_single_input_goes_to_the_only_required_parameter() -> None:
    assert run("Action: search\nAction Input: cats") == (["search"], ["5 results for cats"])


def test_ids_the_format_carries_are_kept() -> None:
    text = (
        "<|tool_call_begin|>functions.add:0<|tool_call_argument_begin|>"
        '{"a": 1, "b": 1}<|tool_call_end|>'
    )
    result = chain().execute_sync(ExecutionContext(), text, XMLFormat())
    assert [call.id for call in result.raw.calls] == ["functions.add:0"]
    assert [observation.id for observation in result.observations] == ["functions.add:0"]


def test_a_marked_call_to_an_unknown_tool_is_an_unknown_tool_error() -> None:
    text = '<tool_call>{"name": "ad", "arguments": {}}</tool_call>'
    result = chain().execute_sync(ExecutionContext(), text, XMLFormat())
    error = result.raw.errors[0]
    assert error is not None and error.kind == "unknown_tool"
    assert "add" in error.message  # the chain's suggestion


def test_unmarked_json_naming_no_offered_tool_is_not_a_call() -> None:
    with pytest.raises(ToolCallParseError, match="not offered"):
        chain().parse_calls('{"name": "Ada", "arguments": "x"}')


def test_text_with_no_call_is_a_parse_error_that_teaches_the_format() -> None:
    with pytest.raises(ToolCallParseError, match="<tool_call>"):
        chain().execute_sync(ExecutionContext(), "I will add them.", XMLFormat())
    with pytest.raises(ToolCallParseError, match="final answer"):
        chain().parse_calls("Thought: done\nFinal Answer: 5")
    assert chain().parse_calls("  \n") == []


def test_broken_markup_is_reported_beside_the_calls_that_were_read() -> None:
    text = (
        '<tool_call>{"name": "add", "arguments": {"a": 1, "b": 1}}</tool_call>'
        "<tool_call>{not json}</tool_call>"
    )
    assert run(text) == (["add", "error"], [2, "parse"])


def test_a_call_whose_arguments_cannot_be_json_is_answered_with_its_error() -> None:
    names, outcomes = run("[add(a=1, b=1e999), search(query='x')]")
    assert names == ["search", "add"]  # well-formed calls first, then rejected ones
    assert outcomes == ["5 results for x", "parse"]


def test_validation_hooks_and_observations_are_the_chains() -> None:
    class Double(ToolHook):
        def before_tool_call(self, ctx: ExecutionContext, call: ToolCall) -> ToolCall | None:
            return ToolCall(call.name, {**call.args, "b": 10}, call.id)

    ctx = ExecutionContext()
    ctx.hooks.add(Double())
    text = '<tool_call>{"name": "add", "arguments": {"a": 1, "b": 2}}</tool_call>'
    dialect = chain().execute_sync(ctx, text, MarkdownFormat())
    plain = JSONToolChain().register_tool(add)
    reference = plain.execute_sync(
        ctx, '{"tool": "add", "args": {"a": 1, "b": 2}}', MarkdownFormat()
    )
    assert dialect.text == reference.text == "# observation\n\n## add\n11"
    invalid = run('<tool_call>{"name": "add", "arguments": {"a": "x"}}</tool_call>')
    assert invalid == (["add"], ["invalid_arguments"])


def test_too_many_calls_are_cut_like_any_chains() -> None:
    text = "[" + ", ".join("add(a=1, b=1)" for _ in range(5)) + "]"
    names, outcomes = run(text, chain(max_calls=3))
    assert names == ["add", "add", "add", "error"]
    assert outcomes[-1] == "parse"


def test_yaml_observations() -> None:
    made = chain(output="yaml")
    result = made.execute_sync(ExecutionContext(), "[search(query='x', limit=2)]", XMLFormat())
    assert "2 results for x" in result.text
    assert "query:" in made.available_tools_prompt()


def test_parse_and_stream_use_the_chains_tools_and_policy() -> None:
    made = chain(policy=DialectPolicy(unknown_tools="drop"))
    dropped = made.parse('<tool_call>{"name": "ghost", "arguments": {}}</tool_call>')
    assert dropped.calls == () and dropped.error is not None and "ghost" in dropped.error
    stream = made.stream()
    fed = stream.feed(
        "<function=add><parameter=a>4</parameter><parameter=b>4</parameter></function>"
    )
    assert [dict(call.args) for call in fed] == [{"a": 4, "b": 4}]
