"""The peers' tool-call corpus, read where it lies beside the repository, and how a
``DialectParse`` is judged against one of its cases (conventions: see test_dialects)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from toolchain.dialects import INPUT_KEY, DialectParse

CORPUS = Path(__file__).resolve().parents[2].parent / "shared/corpus/toolcall-dialects/cases.jsonl"

if not CORPUS.is_file():
    pytest.fail(f"the tool-call corpus is missing: expected it at {CORPUS}", pytrace=False)
CASES: list[dict[str, Any]] = [
    json.loads(line) for line in CORPUS.read_text("utf-8").splitlines() if line.strip()
]
BY_ID = {case["id"]: case for case in CASES}


def arguments_match(expected: object, got: Mapping[str, object]) -> bool:
    args = dict(got)
    if isinstance(expected, dict):
        return args == expected
    if expected is None:
        return args == {}
    if isinstance(expected, str):
        single = args.get(INPUT_KEY)
        if set(args) == {INPUT_KEY} and isinstance(single, str):
            return single.strip() == expected.strip()
        try:
            spelled = json.loads(expected)
        except ValueError:
            return False
        return isinstance(spelled, dict) and args == spelled
    return args == {INPUT_KEY: expected}


def _text(value: str | None) -> str:
    return (value or "").strip()


def misses(case: dict[str, Any], result: DialectParse) -> list[str]:
    """What in ``result`` differs from what the case's peer asserts (empty: a pass)."""
    found: list[str] = []
    expected = case["expected_calls"]
    calls = result.calls
    if len(expected) != len(calls) or not all(
        want["name"] == call.name and arguments_match(want["arguments"], call.args)
        for want, call in zip(expected, calls, strict=False)
    ):
        found.append(f"calls {[(c.name, dict(c.args)) for c in calls]!r}, wanted {expected!r}")
    if "expected_content" in case and _text(case["expected_content"]) != _text(result.content):
        found.append(f"content {result.content!r}, wanted {case['expected_content']!r}")
    contains = case.get("expected_content_contains")
    if contains is not None and contains not in (result.content or ""):
        found.append(f"content {result.content!r} lacks {contains!r}")
    if "expected_reasoning" in case and _text(case["expected_reasoning"]) != _text(
        result.reasoning
    ):
        found.append(f"reasoning {result.reasoning!r}, wanted {case['expected_reasoning']!r}")
    if "expected_ids" in case and [c.id for c in calls] != case["expected_ids"]:
        found.append(f"ids {[c.id for c in calls]!r}, wanted {case['expected_ids']!r}")
    final = case.get("expected_final")
    if final is not None and _text(final) != _text(result.answer):
        found.append(f"answer {result.answer!r}, wanted {final!r}")
    if case.get("expected_error") and calls:
        found.append("calls read where the peer rejects the output")
    return found
