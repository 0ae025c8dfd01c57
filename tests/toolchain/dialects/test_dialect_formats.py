"""Dialect behaviour the corpus does not pin down: policies, ids, tool specs, and the
format variants its peers do not test."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolchain import tool
from toolchain.dialects import FAMILIES, INPUT_KEY, DialectPolicy, parse
from toolchain.dialects._react import _LABEL

MARKED = '<tool_call>{"name": "ghost", "arguments": {}}</tool_call>'
BARE = '{"name": "ghost", "arguments": {}}'
WEATHER_SPEC: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            "required": ["city"],
        },
    },
}


def names(text: str, tools: Any = None, **policy: Any) -> list[str]:
    return [call.name for call in parse(text, tools, policy=DialectPolicy(**policy)).calls]


def test_unknown_tools_policy() -> None:
    offered = ["get_weather"]
    assert names(MARKED, offered) == ["ghost"]  # keep_marked: the chain says it is unknown
    assert names(BARE, offered) == []  # …but unmarked JSON naming it is text
    assert parse(BARE, offered).content == BARE
    assert names(MARKED, offered, unknown_tools="drop") == []
    assert names(BARE, offered, unknown_tools="keep") == ["ghost"]
    assert names(BARE) == ["ghost"]  # no tools offered: nothing is unknown


def test_families_narrow_what_is_read() -> None:
    text = MARKED + "\n[f(x=1)]\n" + BARE
    assert names(text) == ["ghost", "f", "ghost"]
    assert names(text, families=frozenset({"hermes"})) == ["ghost"]
    assert names(text, families=frozenset({"pythonic"})) == ["f"]
    assert "react" in FAMILIES and "reasoning" not in FAMILIES
    react = "Action: f\nAction Input: 1"
    assert names(react) == ["f"]
    assert names(react, families=frozenset({"hermes"})) == []
    assert names("python\nprint(1)", families=frozenset({"hermes"})) == []
    only_hermes = parse(
        "<think>hm</think>" + MARKED, policy=DialectPolicy(families=frozenset({"hermes"}))
    )
    assert only_hermes.reasoning == "hm"  # thinking is never content, whatever is chosen
    with pytest.raises(ValueError, match="unknown format families"):
        parse("x", policy=DialectPolicy(families=frozenset({"klingon"})))


def test_reasoning_policy() -> None:
    text = "<think>plan</think>Hello"
    assert (parse(text).reasoning, parse(text).content) == ("plan", "Hello")
    inline = parse(text, policy=DialectPolicy(reasoning="inline"))
    assert (inline.reasoning, inline.content) == (None, text)
    opened = parse("plan</think>Hi" + MARKED)
    assert (opened.reasoning, opened.content, len(opened.calls)) == ("plan", "Hi", 1)


def test_text_past_max_chars_is_not_read() -> None:
    result = parse("x" * 50 + MARKED, policy=DialectPolicy(max_chars=60))
    assert result.calls == ()
    assert result.error is not None and "first 60 characters" in result.error
    with pytest.raises(ValueError, match="max_chars"):
        DialectPolicy(max_chars=0)


def test_tool_specs_type_text_arguments() -> None:
    text = (
        "<function=get_weather><parameter=city>Oslo</parameter>"
        "<parameter=days>3</parameter></function>"
    )
    assert dict(parse(text, [WEATHER_SPEC]).calls[0].args) == {"city": "Oslo", "days": 3}
    assert dict(parse(text).calls[0].args) == {"city": "Oslo", "days": "3"}  # no schema: text

    @tool
    def get_weather(city: str, days: int = 1) -> str:
        """Forecast."""
        return city

    assert dict(parse(text, [get_weather]).calls[0].args) == {"city": "Oslo", "days": 3}
    anthropic = {"name": "get_weather", "input_schema": WEATHER_SPEC["function"]["parameters"]}
    assert dict(parse(text, [anthropic]).calls[0].args)["days"] == 3


def test_single_inputs_bind_to_the_one_parameter_a_tool_has() -> None:
    react = "Action: get_weather\nAction Input: Oslo"
    assert dict(parse(react).calls[0].args) == {INPUT_KEY: "Oslo"}
    assert dict(parse(react, [WEATHER_SPEC]).calls[0].args) == {"city": "Oslo"}


def test_quoted_names_resolve_to_offered_tools() -> None:
    text = '<function="get_weather"><parameter=city>Oslo</parameter></function>'
    assert names(text) == ['"get_weather"']  # as written (Ollama's reading)
    assert names(text, [WEATHER_SPEC]) == ["get_weather"]


@pytest.mark.parametrize(
    ("text", "call_id"),
    [
        ('[TOOL_CALLS]get_weather[CALL_ID]a1B2c3D4e[ARGS]{"city": "Oslo"}', "a1B2c3D4e"),
        (
            '<tool_call>{"id": "call_9", "name": "get_weather", "arguments": {}}</tool_call>',
            "call_9",
        ),
        (
            '[{"id": "c1", "type": "function", "function": {"name": "get_weather", '
            '"arguments": "{\\"city\\": \\"Oslo\\"}"}}]',
            "c1",
        ),
    ],
)
def test_ids(text: str, call_id: str) -> None:
    result = parse(text)
    assert [(c.name, c.id) for c in result.calls] == [("get_weather", call_id)]


def test_deepseek_v31_and_ascii_bars() -> None:
    ascii_bars = '<|tool▁call▁begin|>get_weather<|tool▁sep|>{"city": "Oslo"}<|tool▁call▁end|>'
    assert names(ascii_bars) == ["get_weather"]
    assert names(ascii_bars.replace("|", "\uff5c")) == ["get_weather"]  # DeepSeek's own bars


def test_harmony_python_takes_raw_code() -> None:
    text = "<|channel|>analysis to=python<|message|>print(1)<|call|>"
    assert [dict(c.args) for c in parse(text).calls] == [{"code": "print(1)"}]


def test_whole_output_forms_need_the_whole_output() -> None:
    assert names("python\nprint('hey')") == ["python"]  # Functionary's first recipient
    assert names("python\nprint('hey')", ["get_weather"]) == []  # python is not offered
    assert names("get_weather city=Oslo", [WEATHER_SPEC]) == ["get_weather"]  # GLM-4.7
    assert names("get_weather city=Oslo") == []  # too close to prose without tools
    assert names("python\nprint(1)\n<tool_call>{bad}</tool_call>") == []  # markup: not whole


def test_react_edges() -> None:
    both = parse("Action: a\nAction Input: 1\nObservation: 2\nFinal Answer: 3")
    assert both.calls == () and both.error is not None and "final answer" in both.error
    two = parse("Thought: t\nAction: a\nAction Input: 1\nAction: b\nAction Input: 2")
    assert [c.name for c in two.calls] == ["a", "b"] and two.reasoning == "t"
    assert parse("Answer: 42").answer is None  # no ReAct step around it: plain text
    prose = parse("The plan:\nAction: approve the PR\nThanks!")  # a label, but no step
    assert prose.content == "The plan:\nAction: approve the PR\nThanks!"
    assert prose.calls == () and prose.error is not None and "Action Input" in prose.error
    bold = parse('**Thought:** hm\n**Action:** search\n**Action Input:** "cats"')
    assert [(c.name, dict(c.args)) for c in bold.calls] == [("search", {INPUT_KEY: "cats"})]


def test_rejected_calls_are_kept_apart() -> None:
    result = parse("call:f{x:1e999}")
    assert result.calls == ()
    assert [(c.name, c.rejected is not None) for c in result.rejected] == [("f", True)]


def test_problems_are_reported() -> None:
    assert parse("Hello").error is None
    broken = parse("<tool_call>not a call</tool_call>Bye")
    assert broken.calls == () and broken.content == "Bye" and broken.error is not None
    twice = parse(
        '[TOOL_CALLS][{"name": "a", "arguments": {}}][TOOL_CALLS][{"name": "b", "arguments": {}}]'
    )
    assert twice.calls == () and twice.error is not None and "one is expected" in twice.error


def test_json_nested_too_deep_is_skipped_whole() -> None:
    # Decoding it would recurse as deep as the interpreter allows, which depends on the
    # caller: skipped whole, the same text reads the same from anywhere.
    deep = "[" * 300 + "]" * 300
    result = parse(deep + MARKED)
    assert names(deep + MARKED) == ["ghost"] and result.content == deep
    assert names("[" * 200 + "]" * 200) == []


# The ReAct label pattern as it was: `[ \t]*(?:\*\*|__)?[ \t]*` splits a run of blanks
# between its two parts in every way before failing (a line of blanks was quadratic).
# Run on short lines only.
REFERENCE_LABEL = re.compile(
    r"[ \t]*(?:\*\*|__)?[ \t]*(thought|action input|action|observation|final answer|answer)"
    r"[ \t]*\d*[ \t]*(?:\*\*|__)?[ \t]*:(?:[ \t]*(?:\*\*|__))?",
    re.IGNORECASE,
)
LABEL_PARTS = (" ", "\t", "**", "__", "*", "_", "Action", "action input", "Thought", "1", "23",
               ":", "x", "Final Answer", "answer", "OBSERVATION")  # fmt: skip
LABEL_LIKE = st.lists(st.sampled_from(LABEL_PARTS), max_size=10).map("".join)


@settings(max_examples=2_000, deadline=None)
@given(LABEL_LIKE)
def test_react_labels_are_read_as_the_reference_pattern_reads_them(line: str) -> None:
    old, new = REFERENCE_LABEL.match(line), _LABEL.match(line)
    assert (old and (old.group(), old.group(1))) == (new and (new.group(), new.group(1)))
