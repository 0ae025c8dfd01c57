"""``DialectStream``: any chunking reads like the whole text; hostile text is safe and linear."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any
from unittest.mock import patch

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.timing import costlier_than
from tests.toolchain.dialects.dialect_corpus import CASES, FAMILY_CASES
from toolchain import ToolCall
from toolchain.dialects import DialectParse, DialectPolicy, DialectStream, parse
from toolchain.dialects import _tokens as tokens
from toolchain.dialects._assemble import assemble
from toolchain.dialects._catalog import Catalog
from toolchain.dialects._engine import Engine
from toolchain.dialects._invoke import WRAPPERS
from toolchain.dialects._opener import Openers
from toolchain.dialects._registry import openers_for

# Markers and fragments of every family, so random texts hit the readers' edges: a
# marker cut by a chunk, a closer that never comes, a name that may go on.
BASE_FRAGMENTS: tuple[str, ...] = (
    "<tool_call>", "</tool_call>", "<function=f>", "<function=", "</function>",
    "<parameter=x>", "</parameter>", "<arg_key>", "</arg_key>", "<arg_value>",
    "</arg_value>", "[TOOL_CALLS]", "[ARGS]", "[CALL_ID]", "<|python_tag|>",
    "<|python_start|>", "<|python_end|>", "<|tool▁calls▁begin|>", "<|tool▁call▁begin|>",
    "<|tool▁sep|>", "<|tool▁call▁end|>", "<|tool▁calls▁end|>", "<|tool_call_begin|>",
    "<|tool_call_argument_begin|>", "<|tool_call_end|>", "functions.f:0", "<|channel|>",
    "<|start|>", "<|message|>", "<|end|>", "<|call|>", "to=functions.f", "analysis",
    "<|tool_call|>", "<|action_start|>", "<|plugin|>", "<|action_end|>", "<|START_ACTION|>",
    "<|END_ACTION|>", "<|START_THINKING|>", "<|END_THINKING|>", "functools[", "call:f{",
    '<|"|>', "[TOOL_REQUEST]", "[TOOL_REQUEST_END]", "<invoke name=\"f\">",
    '<parameter name="k">', "</invoke>", "<tool>", "</tool>", "<tool_input>",
    "</tool_input>", "<final_answer>", "<name>f</name>", "<arguments>", "</arguments>",
    "<think>", "</think>", ">>>", "all\n", "python\n", "Thought: x\n", "Action: f\n",
    "Action Input: ", "Observation: ", "Final Answer: ", '{"name": "f", "arguments": {"a": 1}}',
    '{"a": 1}', "[f(x=1)]", "f(x='y')", "1e9", "true", "None", "```json\n", "```", "\n",
    " ", '"', "'", "{", "}", "[", "]", "(", ")", ":", ",", ";", "=", "\\", "x", "f",
    # the formats of issue 19
    "<|DSML|function_calls>", "</|DSML|function_calls>", '<|DSML|invoke name="f">',
    "</|DSML|invoke>", '<|DSML|parameter name="k" string="true">', "</|DSML|parameter>",
    'string="false">', "<function_calls>", "</function_calls>", "f(a=1)\n", "<seed:tool_call>",
    "</seed:tool_call>", "<seed:think>", "</seed:think>", "<seed:cot_budget_reflect>",
    "<seed:eos>", "function call<|role_sep|>", "<|function_call|>", "<|message_sep|>",
    "<minimax:tool_call>", "</minimax:tool_call>", "<|tool_call_start|>", "<|tool_call_end|>",
    "<|tool_call>", "<tool_call|>", "<|channel>", "thought\n", "<channel|>", "<turn|>",
    "<start_function_call>", "<end_function_call>", "<escape>", "<|tool▁output▁begin|>",
    "<|tool▁output▁end|>", "<co>", "</co: 0:[1]>", "<function=f/>", "<tool_call>f\n",
)  # fmt: skip
# DeepSeek writes its bars fullwidth (U+FF5C): both spellings go in.
FRAGMENTS = BASE_FRAGMENTS + tuple(
    f.replace("|", "\uff5c") for f in BASE_FRAGMENTS if "▁" in f or "DSML" in f
)
SOUP = st.lists(st.sampled_from(FRAGMENTS), max_size=24).map("".join)
TOOLS = st.sampled_from([None, ["f"], ["f", "g"]])


def streamed(
    text: str, cuts: Sequence[int], tools: Any = None
) -> tuple[DialectParse, tuple[ToolCall, ...]]:
    points = sorted({cut % (len(text) + 1) for cut in cuts})
    stream = DialectStream(tools)
    emitted: list[ToolCall] = []
    for start, stop in zip([0, *points], [*points, len(text)], strict=True):
        emitted.extend(stream.feed(text[start:stop]))
    assert stream.emitted == tuple(emitted)
    return stream.finish(), tuple(emitted)


def assert_reads_like_whole(text: str, cuts: Sequence[int], tools: Any = None) -> None:
    whole = parse(text, tools)
    result, emitted = streamed(text, cuts, tools)
    assert result == whole
    assert emitted == whole.calls[: len(emitted)], "a call fed early is not where it ends up"


ALL_CASES = CASES + FAMILY_CASES


@pytest.mark.parametrize("case", ALL_CASES, ids=[case["id"] for case in ALL_CASES])
def test_one_character_at_a_time(case: dict[str, Any]) -> None:
    text = case["text"]
    assert_reads_like_whole(text, range(len(text)), case.get("tools"))


@settings(max_examples=300, deadline=None)
@given(case=st.sampled_from(ALL_CASES), cuts=st.lists(st.integers(min_value=0), max_size=16))
def test_any_split_of_a_case(case: dict[str, Any], cuts: list[int]) -> None:
    assert_reads_like_whole(case["text"], cuts, case.get("tools"))


@settings(max_examples=600, deadline=None)
@given(text=SOUP, cuts=st.lists(st.integers(min_value=0), max_size=12), tools=TOOLS)
def test_any_split_of_marker_soup(text: str, cuts: list[int], tools: Any) -> None:
    assert_reads_like_whole(text, cuts, tools)


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=400), cuts=st.lists(st.integers(min_value=0), max_size=8))
def test_any_text_is_read_without_raising(text: str, cuts: list[int]) -> None:
    assert_reads_like_whole(text, cuts)


def test_calls_in_markup_come_as_soon_as_their_block_closes() -> None:
    stream = DialectStream()
    assert stream.feed('<tool_call>{"name": "a", "arguments": {}}') == ()
    assert [c.name for c in stream.feed("</tool_call>\n<tool_call>")] == ["a"]
    assert [c.name for c in stream.feed('{"name": "b", "arguments": {}}</tool_call>')] == ["b"]
    assert [c.name for c in stream.finish().calls] == ["a", "b"]


def test_unmarked_calls_wait_for_the_end() -> None:
    # A later 'Final Answer' or a JSON record beside it could still change their meaning.
    stream = DialectStream()
    assert stream.feed('{"name": "a", "arguments": {}}\n') == ()
    assert stream.feed("[b(x=1)]\n") == ()
    assert [c.name for c in stream.finish().calls] == ["a", "b"]


def test_finish_is_final() -> None:
    stream = DialectStream()
    stream.feed("Hello")
    assert stream.finish() is stream.finish()
    with pytest.raises(RuntimeError, match="after finish"):
        stream.feed("more")


def test_a_long_block_in_tiny_chunks() -> None:
    # Past the retry budget the stream retries only when its tail has doubled: the
    # result must not depend on when the retries fell.
    value = "x" * 60_000
    text = "y" * 70_000 + f'<tool_call>{{"name": "f", "arguments": {{"v": "{value}"}}}}</tool_call>'
    text += "".join(case["text"] for case in CASES[:80] + FAMILY_CASES[:40])
    for cuts in (range(0, len(text), 3), range(0, len(text), 997)):
        assert_reads_like_whole(text, cuts)


HOSTILE: dict[str, Callable[[int], str]] = {
    "open braces": lambda n: "{" * n,
    "open objects": lambda n: '{"a":' * (n // 5),
    "nested lists": lambda n: '{"a":[' * (n // 6),
    "open brackets": lambda n: "[" * n,
    "python calls": lambda n: "[f(" * (n // 3),
    "unclosed tags": lambda n: "<tool_call>" * (n // 11),
    "unclosed functions": lambda n: "<function=" * (n // 10),
    "Mistral markers": lambda n: "[TOOL_CALLS]" * (n // 12),
    "names before tags": lambda n: "a<arg_key>" * (n // 10),
    "harmony channels": lambda n: "<|channel|>" * (n // 11),
    "XML tools": lambda n: "<tool>" * (n // 6),
    "angle brackets": lambda n: "<" * n,
    "ReAct labels": lambda n: "Action: x\n" * (n // 10),
    "open string": lambda n: '{"a": "' + "\\" * n,
    "calls": lambda n: '{"name": "f", "arguments": {}}\n' * (n // 32),
    "DSML blocks": lambda n: "<\uff5cDSML\uff5cfunction_calls>" * (n // 22),
    "DSML invokes": lambda n: '<\uff5cDSML\uff5cinvoke name="f">' * (n // 24),
    "Olmo blocks": lambda n: "<function_calls>f(" * (n // 18),
    "Seed blocks": lambda n: "<seed:tool_call><function=f>" * (n // 28),
    "GigaChat markers": lambda n: "function call<|role_sep|>" * (n // 25),
    "MiniMax blocks": lambda n: '<minimax:tool_call><invoke name="f">' * (n // 36),
    "LFM2 blocks": lambda n: "<|tool_call_start|>[f(" * (n // 22),
    "Gemma 4 blocks": lambda n: "<|tool_call>call:f{" * (n // 19),
    "Gemma 4 channels": lambda n: "<|channel>" * (n // 10),
    "FunctionGemma blocks": lambda n: "<start_function_call>call:f{a:<escape>" * (n // 38),
    "Command actions": lambda n: "<|START_ACTION|>[{" * (n // 18),
    "citations": lambda n: "</co:" * (n // 5),
    "names above tags": lambda n: "a\n<arg_key>" * (n // 11),
    # Each was quadratic (issue 26): a loose quote sought its end through the rest of
    # the output, once per block; each call searched to the end for the other opener;
    # a parameter searched to the end for a newline; the ReAct label pattern split a
    # run of blanks between two of its parts in every way before failing.
    "LFM2 open strings": lambda n: "<|tool_call_start|>[f(a='" * (n // 24),
    "LFM2 open double quotes": lambda n: '<|tool_call_start|>[f(a="' * (n // 24),
    "LFM2 echoes": lambda n: "<|tool_call_start|>[f()]<|tool_call_end|>[f(a='" * (n // 43),
    "Seed calls": lambda n: "<seed:tool_call>" + "<function=f>" * (n // 6),
    "Seed tags cut by lines": lambda n: "<seed:tool_call>" + "<function=\n" * (n // 11),
    "Seed parameters": lambda n: (
        "<seed:tool_call><function=f>" + "<parameter=a>x" * (n // 14) + "</seed:tool_call>"
    ),
    "ReAct blank line": lambda n: "\n" + " " * (n // 8) + "thought",
    "ReAct blanks after a step number": lambda n: "Action " + "1" + " \t" * (n // 16) + "x",
    "tokens between blanks": lambda n: "</s> " * (n // 5) + "thought\n",
}


def _superlinear(make: Callable[[int], str], size: int, slack: float = 0.05) -> str | None:
    """Whether four times the text (``make(4 * size)``) costs eight times the work or
    more, every time (quadratic work would be sixteen times): the times seen, or None."""
    small, large = make(size), make(4 * size)
    return costlier_than(8, lambda: parse(small), lambda: parse(large), slack)


@pytest.mark.parametrize("shape", HOSTILE)
def test_hostile_text_costs_linear_time(shape: str) -> None:
    seen = _superlinear(HOSTILE[shape], 40_000)
    assert seen is None, f"{shape}: super-linear every time: {seen}"


# Every opener of every family whose reader reads past its marker, in the shapes hostile
# text takes: the opener written over and over, each time followed by nothing, a list,
# an object, a string or a call that is never closed. (A chat token is read as itself
# and nothing more: all of them, over and over, are one shape.)
READERS = sorted(
    {o.marker for o in openers_for(None).openers if o.read is not tokens.read_token} | set(WRAPPERS)
)
STRAY_TOKENS = "".join(
    sorted({o.marker for o in openers_for(None).openers if o.read is tokens.read_token})
)
NEVER_CLOSED = ("", "[", "{", "'", '"', "f(a='", "[f(a='", '{"a": "', "<function=f>")


def _repeated(unit: str) -> Callable[[int], str]:
    return lambda chars: unit * (chars // len(unit) + 1)


def _slow_shapes(units: Sequence[str]) -> list[str]:
    """The units that, written over and over, cost super-linear time every time."""
    slow: list[str] = []
    for unit in units:
        seen = _superlinear(_repeated(unit), 8_000, slack=0.02)
        if seen is not None:
            slow.append(f"{unit!r}: {seen}")
    return slow


@pytest.mark.parametrize("marker", READERS)
def test_every_opener_repeated_and_never_closed_costs_linear_time(marker: str) -> None:
    assert _slow_shapes([marker + tail for tail in NEVER_CLOSED]) == []


def test_every_chat_token_repeated_costs_linear_time() -> None:
    assert _slow_shapes([STRAY_TOKENS, STRAY_TOKENS + " x\n"]) == []


@settings(max_examples=300, deadline=None)
@given(text=SOUP, tools=TOOLS)
def test_unread_always_comes_with_its_error(text: str, tools: Any) -> None:
    result = parse(text, tools)
    assert result.error is not None or not result.unread


# Gates and retired openers only save work: the scanner without them reads the same.
SHORTCUT_FRAGMENTS = (
    "[f(", "[f(1", "[ f ( ", "[f(x=1)]", "[", "(", ")", "{", "{ x", '{"', "}", "x", "1", " ",
    "\n", '<invoke name="f">', "</invoke>", "<tool>", "</tool>", "<|tool_call_begin|>",
    "functions.f:0<|tool_call_argument_begin|>{}", "<|tool_call_end|>", "<function=f", ">",
    "</function>", "</co:", "Action: f\n", "Action Input: 1\n", "<tool_call>", "</tool_call>",
)  # fmt: skip
SHORTCUT_SOUP = st.lists(st.sampled_from(SHORTCUT_FRAGMENTS), max_size=30).map("".join)


def _all_of_them(self: Openers, marker: str) -> Openers:
    return self


def read_without_shortcuts(text: str, tools: Any) -> DialectParse:
    catalog = Catalog(tools)
    full = openers_for(None)
    plain = Openers(replace(opener, gate="") for opener in full.openers)
    engine = Engine(catalog, plain, DialectPolicy().max_chars)
    with (
        patch.object(Openers, "without", _all_of_them),
        patch("toolchain.dialects._engine.verified", _no_copies),
    ):
        engine.feed(text)
        engine.finish()
    return assemble(engine.pieces, catalog, DialectPolicy(), engine.truncated)


def _no_copies(*args: object) -> None:
    return None


def loops(fragments: Sequence[str], most: int = 6) -> st.SearchStrategy[str]:
    """A piece of soup written over and over (a model in a loop), between two others."""

    def soup(least: int = 0) -> st.SearchStrategy[str]:
        return st.lists(st.sampled_from(fragments), min_size=least, max_size=most).map("".join)

    return st.tuples(soup(), soup(1), st.integers(min_value=2, max_value=7), soup()).map(
        lambda parts: parts[0] + parts[1] * parts[2] + parts[3]
    )


LOOPS = loops(FRAGMENTS)


@settings(max_examples=500, deadline=None)
@given(text=SHORTCUT_SOUP | LOOPS, tools=TOOLS)
def test_shortcuts_change_nothing(text: str, tools: Any) -> None:
    # Gates, retired openers and runs of copies read as one only save work.
    assert parse(text, tools) == read_without_shortcuts(text, tools)


@settings(max_examples=400, deadline=None)
@given(text=LOOPS, cuts=st.lists(st.integers(min_value=0), max_size=12), tools=TOOLS)
def test_any_split_of_a_loop(text: str, cuts: list[int], tools: Any) -> None:
    assert_reads_like_whole(text, cuts, tools)


# LFM2 writes strings in single quotes without escaping them: inside its block a quote
# that cannot end a value is part of the string. A block left open was read on past the
# next <|tool_call_start|>, so a string took the next call's markup in, where a stream
# that had seen less of the output ended it sooner.
LFM2_FRAGMENTS = (
    "<|tool_call_start|>", "<|tool_call_end|>", "[", "]", "f(", "g(", "a=", "b=", "'",
    '"', "it's", "x", ")", ", ", " ", "\n", "1", "[f(a='x')]", "Done.",
)  # fmt: skip
LFM2_TEXT = st.lists(st.sampled_from(LFM2_FRAGMENTS), max_size=30).map("".join)
LFM2_LOOPS = loops(LFM2_FRAGMENTS, most=8)


@settings(max_examples=1000, deadline=None)
@given(
    text=LFM2_TEXT | LFM2_LOOPS | LFM2_LOOPS.map("<|tool_call_start|>[f(a='".__add__),
    cuts=st.lists(st.integers(min_value=0), max_size=12),
)
def test_lfm2_streams_as_it_reads_whole_and_keeps_markup_out_of_arguments(
    text: str, cuts: list[int]
) -> None:
    assert_reads_like_whole(text, cuts)
    for call in (*parse(text).calls, *parse(text).rejected):
        assert "<|tool_call_start|>" not in repr(call.args)


def test_an_open_lfm2_block_ends_at_the_next_one() -> None:
    opened = "<|tool_call_start|>[f(a='x"
    text = opened * 3 + "')]"
    whole = parse(text)
    assert [(c.name, dict(c.args)) for c in whole.calls] == [("f", {"a": "x"})]
    assert whole.error == "a <|tool_call_start|> block is not closed"
    result, _ = streamed(text, range(len(text)))
    assert result == whole
