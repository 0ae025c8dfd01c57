"""The ported cases (the relay's six, two airline scenarios) replay offline, and their
cassettes are what recording through the loopback endpoint makes today."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from agents.evals import EvalReport, ModelTarget, load_case, run_case, run_cases
from agents.evals.runner import CaseResult
from tests.agents.evals.recording import (
    API_KEY,
    MODEL_NAME,
    PROMPTS,
    Variant,
    record,
    suites,
)

REPLAY = ModelTarget(MODEL_NAME, lambda: pytest.fail("replay must never build a model"))

RERECORD = (
    "if a prompt changed on purpose, re-record: .venv/bin/python -m tests.agents.evals.recording"
)

PLAN = [(case, variant) for case, variants in suites() for variant in variants]


@pytest.mark.parametrize(
    ("case_id", "variant"),
    [(case.id, variant) for case, variant in PLAN],
    ids=[f"{case.id}-{v.protocol}-{v.boxing}" for case, v in PLAN],
)
def test_each_ported_case_replays_and_passes(case_id: str, variant: Variant) -> None:
    [case] = [case for case, _ in suites() if case.id == case_id]
    result = asyncio.run(run_case(case, REPLAY, variant.settings("replay")))
    assert result.passed, f"{result.failures}; {RERECORD}"
    assert result.stopped_by == "answer" and result.calls


def test_the_relay_moved_real_values_and_the_model_saw_references() -> None:
    [case1] = [case for case, _ in suites() if case.id == "case1"]
    result = asyncio.run(run_case(case1, REPLAY, Variant("native").settings("replay")))
    yt, check = result.calls
    assert yt.result.startswith("internal://") and check.args["text"] == yt.result
    assert "word7999" not in result.transcript  # the transcript never reached the model


def test_recording_again_makes_the_same_cassettes(tmp_path: Path) -> None:
    results = record(tmp_path)
    assert all(result.passed for result in results), [r.failures for r in results]
    made = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*.json"))
    # <suite>/cassettes/<case>/<file> in the package is <suite>/<case>/<file> here
    committed = sorted(
        Path(relative.parts[0], *relative.parts[2:])
        for relative in (p.relative_to(PROMPTS) for p in PROMPTS.glob("*/cassettes/**/*.json"))
    )
    assert made == committed and len(made) == 22
    for relative in made:
        suite, rest = relative.parts[0], Path(*relative.parts[1:])
        expected = (PROMPTS / suite / "cassettes" / rest).read_text()
        assert (tmp_path / relative).read_text() == expected, (
            f"{relative} is out of date: re-record"
        )
        assert API_KEY not in expected and "Authorization" not in expected


def test_a_changed_prompt_fails_with_a_replay_miss(tmp_path: Path) -> None:
    shutil.copytree(PROMPTS / "relay", tmp_path / "relay")
    file = tmp_path / "relay" / "case1.md"
    file.write_text(file.read_text().replace("video_id='123'", "video_id='124'"))
    result = asyncio.run(run_case(load_case(file), REPLAY, Variant("text").settings("replay")))
    assert not result.passed and result.stopped_by == "error"
    assert "no recording for this request (prompt changed?): request 1 to loopback:scripted" in (
        result.detail
    )
    assert "message 1 (user)" in result.detail
    assert result.failures[0].startswith(
        "the run stopped by error (model call failed: no recording"
    )


def test_the_ported_report(tmp_path: Path) -> None:
    cases = [
        case for case, _ in suites() if case.path is not None and case.path.parent.name == "relay"
    ]
    results: list[CaseResult] = []
    for variant in (Variant("text"), Variant("native"), Variant("text", "json")):
        results += asyncio.run(run_cases(cases, [REPLAY], variant.settings("replay")))
    report = EvalReport(results)
    assert report.exit_code == 0 and report.passed == 18
    table = report.to_markdown().splitlines()
    assert table[2] == "| loopback:scripted | case0 | ✔ | ✅ | text | opaque | 3 | 2 |  |"
    assert "| loopback:scripted | web1 | ✔ | ✅ | native | opaque | 3 | 2 |  |" in table
