"""Case files: the relay PoC's unchanged, ours, and clear errors for malformed ones."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from agents.evals.cases import (
    CaseFileError,
    CountBound,
    PromptCase,
    expand_case_paths,
    load_case,
    load_cases,
    parse_case,
)
from agents.evals.matchers import Regex, SchemaValid

# The PoC's prompts/case3.md and web1.md, byte for byte.
POC_CASE3 = """---
id: case3
tool_calls:
  - tool_name: yt_transcribe
    opaque_id_result: true
  - tool_name: deep_check
    opaque_id_input: true
  - tool_name: internal_resource_read_slice
    opaque_id_input: true
forbidden_tools:
  - google_drive_write_file
  - internal_resource_read
---
Generate a transcript of the YouTube video with video_id='123' and then pass it to Deep Check for analysis.
Then let me know what number appears at the end of the transcript.
"""  # noqa: E501

POC_WEB1 = """---
id: web1
tool_calls:
  - tool_name: get_page
    opaque_id_result: true
  - tool_name: internal_resource_grep
    opaque_id_input: true
    allow_multiple: true
forbidden_tools:
  - internal_resource_read
---
Find all image elements in a HTML content at: https://demo.local/history

The page may be huge, use optimal tool usage to find it without exposing full page content.
"""


def test_the_pocs_case_files_load_unchanged(tmp_path: Path) -> None:
    (tmp_path / "case3.md").write_text(POC_CASE3)
    (tmp_path / "web1.md").write_text(POC_WEB1)
    case3, web1 = load_cases(globs=[str(tmp_path / "*.md")])
    assert case3.id == "case3" and case3.toolset == "relay"
    assert [e.tool_name for e in case3.tool_calls] == [
        "yt_transcribe",
        "deep_check",
        "internal_resource_read_slice",
    ]
    assert case3.tool_calls[0].opaque_id_result and case3.tool_calls[1].opaque_id_input
    assert case3.forbidden_tools == {"google_drive_write_file", "internal_resource_read"}
    assert case3.prompt.endswith("at the end of the transcript.")
    assert case3.effective_order == "in_order"
    assert web1.tool_calls[1].allow_multiple and web1.effective_order == "any_order"
    assert web1.path == tmp_path / "web1.md"


def test_ids_follow_the_poc() -> None:
    assert parse_case("---\nid: 7\n---\nGo.").id == "case7"
    assert parse_case("Go.", path="prompts/case2.md").id == "case2"
    assert parse_case("---\nid: prompts/x.md\n---\nGo.").id == "x"


def test_a_file_without_frontmatter_is_a_plain_prompt() -> None:
    case = parse_case("Just do it.\n", path="p.md")
    assert (case.id, case.prompt, case.has_frontmatter, case.tool_calls) == (
        "p",
        "Just do it.",
        False,
        (),
    )


def test_our_keys() -> None:
    case = parse_case(
        """---
description: all of it
toolset: airline
order: any_order
tool_calls:
  - tool_name: get_flight_seats
    args:
      flight_number: AA102
      seat_class: {regex: "^eco"}
    args_schema: {type: object, required: [flight_number]}
    result: {contains: "14A"}
call_counts:
  get_flight_seats: {min: 1, max: 2}
  "*": 5
answer: {contains: [AA102], not_contains: fee, regex: "\\\\d"}
expect_internal_resolve: false
stopped_by: limit
max_steps: 4
today: 2026-03-05
text_format: markdown
calls: json
---
Go."""
    )
    entry = case.tool_calls[0]
    assert isinstance(entry.args["seat_class"], Regex)
    assert entry.args["flight_number"].check("AA102") is None
    assert isinstance(entry.args_schema, SchemaValid)
    assert entry.result is not None and entry.result.contains == ("14A",)
    assert case.call_counts == {"get_flight_seats": CountBound(1, 2), "*": CountBound(5, 5)}
    assert case.answer is not None and case.answer.text.not_contains == ("fee",)
    assert (case.stopped_by, case.max_steps, case.today) == ("limit", 4, dt.date(2026, 3, 5))
    assert (case.text_format, case.calls, case.expect_internal_resolve) == (
        "markdown",
        "json",
        False,
    )


@pytest.mark.parametrize(
    ("text", "key", "message"),
    [
        ("---\nforbiden_tools: [x]\n---\nGo.", "forbiden_tools", "did you mean 'forbidden_tools'"),
        (
            "---\ntool_calls: [{opaque_id_input: true}]\n---\nGo.",
            "tool_calls[0].tool_name",
            "missing",
        ),
        ("---\ntool_calls: {tool_name: x}\n---\nGo.", "tool_calls", "expected a list"),
        ("---\ntool_calls: [x]\n---\nGo.", "tool_calls[0]", "expected a mapping, got a string"),
        (
            "---\ntool_calls: [{tool_name: x, alow_multiple: true}]\n---\nGo.",
            "tool_calls[0].alow_multiple",
            "did you mean 'allow_multiple'",
        ),
        (
            "---\ntool_calls: [{tool_name: x, opaque_id_result: 1}]\n---\nGo.",
            "tool_calls[0].opaque_id_result",
            "expected true or false",
        ),
        (
            "---\ntool_calls: [{tool_name: x, args: {a: {regex: '('}}}]\n---\nGo.",
            "tool_calls[0].args.a.regex",
            "not a valid regular expression",
        ),
        (
            "---\ntool_calls: [{tool_name: x, args_schema: {type: 3}}]\n---\nGo.",
            "tool_calls[0].args_schema",
            "not a valid JSON Schema",
        ),
        (
            "---\ntool_calls: [{tool_name: x, result: {has: y}}]\n---\nGo.",
            "tool_calls[0].result.has",
            "unknown key",
        ),
        ("---\nforbidden_tools: [1]\n---\nGo.", "forbidden_tools[0]", "expected a tool name"),
        ("---\norder: random\n---\nGo.", "order", "expected one of in_order, any_order"),
        (
            "---\ncall_counts: {x: {min: 3, max: 1}}\n---\nGo.",
            "call_counts.x",
            "max (1) is below min (3)",
        ),
        ("---\ncall_counts: {x: -1}\n---\nGo.", "call_counts.x", "at least 0"),
        ("---\nanswer: {model: 'json:dumps'}\n---\nGo.", "answer.model", "is not a pydantic model"),
        (
            "---\nanswer: {predicate: 'json:__doc__'}\n---\nGo.",
            "answer.predicate",
            "is not callable",
        ),
        (
            "---\nanswer: {predicate: 'no.such.module:f'}\n---\nGo.",
            "answer.predicate",
            "cannot import no.such.module",
        ),
        ("---\nmax_steps: 0\n---\nGo.", "max_steps", "at least 1"),
        ("---\ntoday: tomorrow\n---\nGo.", "today", "expected a date"),
        ("---\nstopped_by: whenever\n---\nGo.", "stopped_by", "expected one of"),
        ("---\ntoolset: ''\n---\nGo.", "toolset", "expected a non-empty string"),
        ("---\ntoolset: nothing\n---\nGo.", "toolset", "unknown toolset 'nothing'"),
        ("---\ntoolset: os:system\n---\nGo.", "toolset", "is not a toolset factory"),
        ("---\ntoday: 2026-13-45\n---\nGo.", "today", "got '2026-13-45'"),
        ("---\nid: ..\n---\nGo.", "id", "'..' cannot be a case id"),
        ("---\nid: a\nid: b\n---\nGo.", "id", "duplicate key"),
    ],
)
def test_malformed_keys_are_named(text: str, key: str, message: str) -> None:
    with pytest.raises(CaseFileError) as raised:
        parse_case(text, path="prompts/bad.md")
    error = raised.value
    assert (error.path, error.key) == ("prompts/bad.md", key)
    assert message in error.message
    assert str(error).startswith(f"prompts/bad.md: {key}: ")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("---\nid: x\nGo.", "never closed"),
        ("---\nid: x\n---\n", "the prompt (the text after the frontmatter) is empty"),
        ("---\n- a\n- b\n---\nGo.", "the frontmatter must be a mapping, got a list"),
        ("---\nid: [unclosed\n---\nGo.", "invalid YAML"),
        ("---\na: &x [1]\nb: *x\n---\nGo.", "YAML aliases are not allowed"),
        ("---\nid: !!python/object:os.system x\n---\nGo.", "invalid YAML"),
        ("---\n" + "[" * 5000 + "\n---\nGo.", "invalid YAML"),
        ("---\n" + "x: " + "y" * 70_000 + "\n---\nGo.", "longer than"),
    ],
)
def test_malformed_files_say_why(text: str, message: str) -> None:
    with pytest.raises(CaseFileError, match=r"^prompts/bad\.md: ") as raised:
        parse_case(text, path="prompts/bad.md")
    assert message in str(raised.value)


def test_unreadable_files(tmp_path: Path) -> None:
    big = tmp_path / "big.md"
    big.write_bytes(b"x" * ((1 << 20) + 1))
    with pytest.raises(CaseFileError, match="larger than"):
        load_case(big)
    latin = tmp_path / "latin.md"
    latin.write_bytes(b"caf\xe9")
    with pytest.raises(CaseFileError, match="is not UTF-8"):
        load_case(latin)
    with pytest.raises(CaseFileError, match="cannot be read"):
        load_case(tmp_path / "missing.md")


def test_globs_are_sorted_deduplicated_and_must_match(tmp_path: Path) -> None:
    for name in ("b.md", "a.md"):
        (tmp_path / name).write_text("Go.")
    paths = expand_case_paths([str(tmp_path / "b.md")], [str(tmp_path / "*.md")])
    assert [p.name for p in paths] == ["b.md", "a.md"]
    with pytest.raises(CaseFileError, match="matches no file"):
        expand_case_paths(globs=[str(tmp_path / "*.txt")])


def test_a_case_id_that_names_a_folder_is_refused_however_the_case_is_made() -> None:
    with pytest.raises(ValueError, match=r"'\.\.' cannot be a case id"):
        PromptCase(id="..", prompt="Hi.")
    with pytest.raises(CaseFileError, match=r"^prompts/\.\.\.md: id: '\.\.' cannot be"):
        parse_case("Hi.", path="prompts/...md")  # the id comes from the file's name
