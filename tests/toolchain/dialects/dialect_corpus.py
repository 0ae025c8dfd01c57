"""The tool-call corpora and how a ``DialectParse`` is judged against one of their cases
(conventions: see test_dialects): the peers' corpus (``tests/corpus/toolcall-dialects``)
and the corpus of current open-weight formats (``tests/corpus/dialects``, issue 19), both
kept in this repository with their sources and licences."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from toolchain.dialects import INPUT_KEY, DialectParse, DialectPolicy

CORPORA = Path(__file__).resolve().parents[2] / "corpus"
CORPUS = CORPORA / "toolcall-dialects" / "cases.jsonl"
FAMILIES_CORPUS = CORPORA / "dialects" / "cases.jsonl"


def _load(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        pytest.fail(f"the tool-call corpus is missing: expected it at {path}", pytrace=False)
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


CASES = _load(CORPUS)
BY_ID = {case["id"]: case for case in CASES}
FAMILY_CASES = _load(FAMILIES_CORPUS)
FAMILY_BY_ID = {case["id"]: case for case in FAMILY_CASES}


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


def table(cases: list[dict[str, Any]], failed: set[str]) -> list[str]:
    """One row per format: its cases, how many pass, and the share; then the total."""
    counts = Counter(case["format"] for case in cases)
    passed = Counter(case["format"] for case in cases if case["id"] not in failed)
    width = max(map(len, counts))
    lines = [f"{'format':<{width}}  cases  passed      %"]
    for name in sorted(counts, key=lambda n: (-counts[n], n)):
        share = 100 * passed[name] / counts[name]
        lines.append(f"{name:<{width}}  {counts[name]:>5}  {passed[name]:>6}  {share:5.1f}")
    total = sum(passed.values())
    lines.append(f"{'all':<{width}}  {len(cases):>5}  {total:>6}  {100 * total / len(cases):5.1f}")
    return lines


class Summary:
    """Adds a conformance table to pytest's terminal summary."""

    def __init__(self, title: str, lines: list[str]) -> None:
        self.title = title
        self.lines = lines

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        terminalreporter.section(self.title)
        for line in self.lines:
            terminalreporter.write_line(line)


@dataclass(frozen=True)
class Miss:
    """A case the defaults do not pass, why, and the policy that gives its peer's result."""

    reason: str
    policy: DialectPolicy | None = None
