"""Conformance of ``toolchain.dialects`` with the peers' tool-call corpus.

The corpus (304 cases transcribed from vLLM, llama.cpp, Ollama, mlx-lm, LangChain,
LlamaIndex, CrewAI, smolagents, DSPy and llxprt test suites) is kept in this repository,
with its sources and licences: ``tests/corpus/toolcall-dialects/cases.jsonl``.

Each case is compared on what its peer asserts, with these conventions:

- calls: names and arguments, in order. An opaque string input (LangChain, CrewAI,
  smolagents) is ``{INPUT_KEY: text}`` (ends stripped), or the object a JSON string
  spells; ``null`` arguments are ``{}``; a scalar is ``{INPUT_KEY: scalar}``;
- content and reasoning, where asserted: ``None`` and ``""`` are equal and ends are
  stripped (peers differ on the whitespace next to removed markup); ``content_contains``
  is a substring test;
- the final answer, where asserted, is ``DialectParse.answer``; ids where asserted;
- ``expected_error`` cases must yield no call;
- ``expected_sections`` (DSPy fields, LlamaIndex's Thought/Action strings) and
  ``expected_code`` (smolagents code blobs) are not tool calls and are not compared.

Where peers disagree, one of them loses: ``EXPECTED_MISSES`` names every such case and
why, and the tests check each still misses (and, when a ``DialectPolicy`` gives that
peer's behaviour, that it passes with it). The per-format table is printed in pytest's
terminal summary.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from tests.toolchain.dialects.dialect_corpus import BY_ID, CASES, Miss, Summary, misses, table
from toolchain import JSONToolChain, YAMLToolChain
from toolchain.dialects import DialectPolicy, parse

CASE_COUNT = 304
PASS_RATE = 0.96


INLINE = DialectPolicy(reasoning="inline")
THINK_IN_CONTENT = (
    "its peer leaves <think> in content (no reasoning parser); the default moves it to "
    "reasoning, as llama.cpp's reasoning_format=deepseek does for the same text ({twin})"
)
EXPECTED_MISSES: dict[str, Miss] = {
    "llamacpp-hermes-think-unparsed": Miss(
        THINK_IN_CONTENT.format(twin="llamacpp-hermes-think-parsed"), INLINE
    ),
    "llamacpp-deepseek-r1-think-call-unparsed-reasoning": Miss(
        THINK_IN_CONTENT.format(twin="llamacpp-deepseek-r1-think-call"), INLINE
    ),
    "ollama-deepseek-ascii-bars": Miss(
        THINK_IN_CONTENT.format(twin="llamacpp-deepseek-r1-think-call"), INLINE
    ),
    "vllm-glm45-think-then-call": Miss(
        THINK_IN_CONTENT.format(twin="llamacpp-hermes-think-parsed"), INLINE
    ),
    "vllm-xlam-think-then-array": Miss(
        THINK_IN_CONTENT.format(twin="llamacpp-hermes-think-parsed"), INLINE
    ),
    "vllm-internlm2-unknown-tool-rejected": Miss(
        "vLLM's InternLM2 parser drops a marked call to a tool not offered, while its GLM "
        "parser keeps one (vllm-glm45-single-indented); the default keeps marked calls so "
        "a chain can tell the model the tool does not exist",
        DialectPolicy(unknown_tools="drop"),
    ),
    "vllm-glm45-mixed-content-two-calls": Miss(
        "vLLM's GLM parser drops prose written between two calls; llxprt keeps it "
        "(llxprt-hermes-interleaved-prose, llxprt-gemma-two-tool-requests), and so do we: "
        "it is text the user should see"
    ),
    "vllm-llama3-json-surrounding-text": Miss(
        "vLLM's llama3_json parser returns no content once it finds a call, dropping the "
        "prose around it; llama.cpp keeps it (llamacpp-hermes-text-then-bare-json), as we do"
    ),
    "smolagents-jsonblob-missing-args": Miss(
        "smolagents reads {'name': …} with no arguments key as a call; vLLM reads the same "
        "text as content (vllm-llama3-json-missing-params). Unmarked JSON must name its "
        "arguments to be a call, or every JSON record with a 'name' would be one"
    ),
    "vllm-granite-malformed-1": Miss(
        "vLLM's Granite parser wants a list after <|tool_call|>; a single call object "
        "there is plainly a call, so it is read"
    ),
    "vllm-glm45-incomplete-no-close": Miss(
        "vLLM leaves a GLM call cut off before </tool_call> in content, markup and all; "
        "ollama's GLM-4.6 parser reports it (ollama-glm46-unclosed-* in "
        "tests/corpus/dialects), and so do we: call markup is never content, and the "
        "model is told its call was cut off"
    ),
    "vllm-granite-malformed-2": Miss(
        "vLLM's Granite parser refuses a call list without its <|tool_call|> marker; "
        "xLAM (vllm-xlam-parallel-array) and Ollama (ollama-list-multiple) read bare "
        "lists, and the string arguments are the tool's single input"
    ),
}


def run(case: dict[str, Any], policy: DialectPolicy | None = None) -> list[str]:
    tools = case.get("tools")
    result = (
        parse(case["text"], tools) if policy is None else parse(case["text"], tools, policy=policy)
    )
    return misses(case, result)


@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
def test_case(case: dict[str, Any]) -> None:
    found = run(case)
    miss = EXPECTED_MISSES.get(case["id"])
    if miss is None:
        assert not found, f"{case['id']} ({case['format']}): {found}; notes: {case['notes']}"
        return
    assert found, f"{case['id']} passes now: remove it from EXPECTED_MISSES"
    if miss.policy is not None:
        assert not run(case, miss.policy), f"{case['id']} fails with {miss.policy}"


def test_the_corpus_is_the_one_described() -> None:
    assert len(CASES) == CASE_COUNT
    assert len(BY_ID) == CASE_COUNT
    assert set(EXPECTED_MISSES) <= set(BY_ID)


def test_rejected_outputs_never_yield_calls() -> None:
    rejected = [case for case in CASES if case.get("expected_error")]
    assert len(rejected) == 18
    for case in rejected:
        assert parse(case["text"], case.get("tools")).calls == (), case["id"]


def baseline(case: dict[str, Any]) -> bool:
    """Whether the JSON or YAML chain reads a case's calls (the state before dialects)."""
    for chain in (JSONToolChain(), YAMLToolChain()):
        try:
            items = chain.parse_calls(case["text"])
        except ValueError:
            continue
        calls = [item for item in items if not isinstance(item, str)]
        expected = case["expected_calls"]
        if len(calls) == len(expected) and all(
            isinstance(want["arguments"], dict)
            and call.name == want["name"]
            and dict(call.args) == want["arguments"]
            for call, want in zip(calls, expected, strict=True)
        ):
            return True
    return False


def conformance_table() -> tuple[list[str], int, set[str]]:
    failed = {case["id"] for case in CASES if run(case)}
    lines = table(CASES, failed)
    with_calls = [case for case in CASES if case["expected_calls"]]
    before = sum(baseline(case) for case in with_calls)
    lines.append(
        f"before dialects: JSONToolChain/YAMLToolChain read {before} of the "
        f"{len(with_calls)} cases that expect calls"
    )
    return lines, len(CASES) - len(failed), failed


def test_conformance_table(request: pytest.FixtureRequest) -> None:
    lines, total, failed = conformance_table()
    print("\n".join(lines))  # in the captured output too, shown with -rP or on failure
    summary = Summary("tool-call dialect conformance: the peers' corpus", lines)
    request.config.pluginmanager.register(summary, "dialect-conformance-table")
    assert total >= math.ceil(PASS_RATE * CASE_COUNT), "\n".join(lines)
    assert failed == set(EXPECTED_MISSES), (
        f"unexpected misses: {sorted(failed - set(EXPECTED_MISSES))}; "
        f"listed but passing: {sorted(set(EXPECTED_MISSES) - failed)}"
    )


@pytest.mark.parametrize(
    ("text", "unread"),
    [
        ('<tool_call>{"name": "f", "arguments": {</tool_call>', True),
        ('<tool_call>{"name": "f", "arguments": {}}</tool_call><tool_call>{bad}</tool_call>', True),
        ('[TOOL_CALLS][{"name": "f", "arguments": {}}][TOOL_CALLS][{"name": "f"}]', True),
        ("Thought: x\nAction: f\nAction Input: {}\nFinal Answer: 1", True),
        ("Thought: x\nAction: f", True),  # names an offered tool, with no input
        ("Thought: fine\nAction: call your bank.", False),  # a label in prose
        ('Like this:\n```json\n{"name": "g", "arguments": {}}\n```', False),  # g: not offered
        ("Plain text.", False),
    ],
)
def test_unread_marks_call_markup_that_will_not_run(text: str, unread: bool) -> None:
    # What an agent feeds back (unread) and what it may keep as an answer (not).
    result = parse(text, ["f"])
    assert result.unread is unread
    assert result.error is not None or not unread


def test_a_call_the_policy_drops_is_unread() -> None:
    text = '<tool_call>{"name": "g", "arguments": {}}</tool_call>'
    result = parse(text, ["f"], policy=DialectPolicy(unknown_tools="drop"))
    assert result.calls == () and result.unread
