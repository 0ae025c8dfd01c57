"""Judging runs: sequences, counts, references, forbidden tools, answers."""

from __future__ import annotations

import pytest

from agents.evals.cases import parse_case
from agents.evals.validation import CallRecord, reference_id, validate


def case(frontmatter: str):  # type: ignore[no-untyped-def]
    return parse_case(f"---\n{frontmatter}\n---\nGo.")


def ok(calls: list[CallRecord], frontmatter: str, answer: str | None = "done") -> list[str]:
    return validate(case(frontmatter), calls, stopped_by="answer", answer=answer)


YT = CallRecord("yt_transcribe", {"video_id": "123"}, "internal://abc")
CHECK = CallRecord("deep_check", {"text": "internal://abc"}, "Analysis: fine.")
SLICE = CallRecord(
    "internal_resource_read_slice",
    {"opaque_reference": "internal://abc", "start_index": -30},
    "4242.",
)


def test_in_order_needs_exactly_the_listed_sequence_of_the_listed_tools() -> None:
    spec = "tool_calls: [{tool_name: yt_transcribe}, {tool_name: deep_check}]"
    assert ok([YT, SLICE, CHECK], spec) == []  # other tools may come between
    assert ok([CHECK, YT], spec) == [
        "tool call sequence mismatch: expected ['yt_transcribe', 'deep_check'], "
        "got ['deep_check', 'yt_transcribe']"
    ]
    assert ok([YT, CHECK, CHECK], spec) != []


def test_any_order_counts_and_allow_multiple() -> None:
    spec = "tool_calls: [{tool_name: deep_check}, {tool_name: yt_transcribe, allow_multiple: true}]"
    assert ok([CHECK, YT, YT, YT], spec) == []
    assert ok([YT, CHECK, CHECK], spec) == ["expected 1 calls of deep_check, got 2"]
    assert ok([CHECK], spec) == ["expected at least 1 calls of yt_transcribe, got 0"]
    assert ok([CHECK, YT], "order: any_order\n" + spec.replace(", allow_multiple: true", "")) == []


def test_references_in_and_out() -> None:
    spec = (
        "tool_calls: [{tool_name: yt_transcribe, opaque_id_result: true},"
        " {tool_name: deep_check, opaque_id_input: true}]"
    )
    assert ok([YT, CHECK], spec) == []
    plain = CallRecord("yt_transcribe", {"video_id": "999"}, "Hello and welcome.")
    pasted = CallRecord("deep_check", {"text": "Hello and welcome."}, "Analysis: fine.")
    assert ok([plain, pasted], spec) == [
        "yt_transcribe (call 1): expected an internal:// reference as the result, "
        "got 'Hello and welcome.'",
        "deep_check (call 2): expected a reference as input, but none was returned before",
    ]
    invented = CallRecord("deep_check", {"text": "internal://zzz"}, "Error")
    assert ok([YT, invented], spec) == [
        "deep_check (call 2): expected an earlier internal:// reference as an argument, "
        "got {'text': 'internal://zzz'}"
    ]


def test_json_mode_resource_links_count_as_references() -> None:
    link = '{"type":"resource_link","uri":"internal://abc"}'
    spec = (
        "tool_calls: [{tool_name: yt_transcribe, opaque_id_result: true},"
        " {tool_name: deep_check, opaque_id_input: true}]"
    )
    boxed = CallRecord("yt_transcribe", {"video_id": "123"}, link)
    as_object = CallRecord(
        "deep_check", {"text": {"type": "resource_link", "uri": "internal://abc"}}
    )
    as_text = CallRecord("deep_check", {"text": link})
    nested = CallRecord("deep_check", {"texts": ["internal://abc"]})
    for check in (as_object, as_text, nested):
        assert ok([boxed, check], spec) == []


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("internal://a-b_c", "a-b_c"),
        ("  internal://abc  ", "abc"),
        ("see internal://abc", None),
        ("internal://abc and more", None),
        ({"uri": "internal://abc"}, "abc"),
        ({"type": "link", "uri": "internal://abc"}, None),
        ("{not json", None),
        (42, None),
    ],
)
def test_reference_forms(value: object, expected: str | None) -> None:
    assert reference_id(value) == expected


def test_forbidden_tools_count_even_calls_that_never_ran() -> None:
    refused = CallRecord(
        "internal_resource_read", {"opaque_reference": "x"}, "Error", "unknown_tool"
    )
    assert ok([YT, refused], "forbidden_tools: [internal_resource_read]") == [
        "forbidden tool internal_resource_read was called (1x)"
    ]


def test_a_failed_call_that_is_fixed_keeps_the_sequence() -> None:
    bad = CallRecord("deep_check", {}, "Error: text is required", "invalid_arguments")
    spec = "tool_calls: [{tool_name: yt_transcribe}, {tool_name: deep_check}]"
    assert ok([YT, bad, CHECK], spec) == []


def test_arguments_schema_and_result_checks() -> None:
    spec = """tool_calls:
  - tool_name: internal_resource_read_slice
    args: {opaque_reference: {regex: "^internal://"}, length: 30}
    args_schema: {type: object, properties: {start_index: {maximum: -1}}}
    result: {contains: "4242", not_contains: "word"}"""
    assert ok([SLICE], spec) == [
        "internal_resource_read_slice (call 1): argument length is missing (equals 30)"
    ]
    forward = CallRecord(
        "internal_resource_read_slice",
        {"opaque_reference": "x", "start_index": 5, "length": 30},
        "word5",
    )
    assert ok([forward], spec) == [
        "internal_resource_read_slice (call 1): argument opaque_reference: 'x' does not match /^internal:///",
        "internal_resource_read_slice (call 1): arguments not valid against the schema at "
        "/start_index: 5 is greater than the maximum of -1",
        "internal_resource_read_slice (call 1): the result does not contain '4242'",
        "internal_resource_read_slice (call 1): the result contains 'word'",
    ]


def test_call_count_bounds() -> None:
    spec = "call_counts: {deep_check: {min: 2}, '*': {max: 2}}"
    assert ok([YT, CHECK, CHECK], spec) == ["tool calls: expected at most 2, got 3"]
    assert ok([CHECK], spec) == ["calls of deep_check: expected at least 2, got 1"]


def test_expect_internal_resolve() -> None:
    assert ok([YT, SLICE], "expect_internal_resolve: true") == []
    assert ok([YT, CHECK], "expect_internal_resolve: true") == [
        "expected a reader tool (internal_resource_*) to open an earlier reference"
    ]
    assert ok([YT, SLICE], "expect_internal_resolve: false") == [
        "no reader tool was expected, but internal_resource_read_slice was called"
    ]
    listed = (
        "expect_internal_resolve: false\ntool_calls: [{tool_name: internal_resource_read_slice}]"
    )
    assert ok([YT, SLICE], listed) == []


def test_how_the_run_stopped_and_its_answer() -> None:
    spec = "answer: {contains: '4242'}"
    assert validate(case(spec), [], stopped_by="limit", answer=None, detail="max_steps") == [
        "the run stopped by limit (max_steps), expected answer",
        "there is no answer to check",
    ]
    assert ok([], spec, answer="It is 4243.") == ["the answer does not contain '4242'"]
    assert validate(case("stopped_by: limit"), [], stopped_by="limit", answer=None) == []
