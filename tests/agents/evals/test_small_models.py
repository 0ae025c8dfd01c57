"""Real outputs of two small local models in the airline demo, replayed through the loop.

The corpus (``tests/corpus/small-model-outputs``, with its sources and licences) holds
what gemma-3-270m and SmolLM2-135M wrote as the demo agent's model: prompt echoes,
unclosed sections, prose where calls belong, loops, cut-offs. A model this small is not
expected to call tools; what is asserted is the loop's side: every output is read or
rejected with feedback the model could act on, never a crash, and the run ends with a
clear stop reason, which an evaluation reports as the failure.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from agents.demo import build_demo
from agents.evals import EvalReport, EvalSettings, ModelTarget, load_case, run_case
from agents.models import ScriptedModel
from tests.agents.evals.recording import PROMPTS

CORPUS = Path(__file__).resolve().parents[2] / "corpus" / "small-model-outputs"
ENTRIES: list[dict[str, Any]] = json.loads((CORPUS / "index.json").read_text())

SECTIONS = ("thinking", "action", "answer")


def actionable(feedback: str) -> bool:
    """Feedback names what to write: a section, or the call syntax."""
    names_a_section = any(name in feedback for name in SECTIONS)
    names_the_syntax = "tool" in feedback and "args" in feedback
    return bool(feedback.strip()) and (names_a_section or names_the_syntax)


@pytest.mark.parametrize("entry", ENTRIES, ids=[entry["file"] for entry in ENTRIES])
def test_each_output_ends_the_run_clearly_with_feedback_it_could_act_on(
    entry: dict[str, Any],
) -> None:
    output = (CORPUS / entry["file"]).read_text()
    model = ScriptedModel(lambda messages: output, name=entry["run"])
    demo = build_demo(text_format=entry["text_format"], calls=entry["calls"], model=model)
    result = demo.agent.run_sync(demo.task)
    assert result.stopped_by == "limit", (result.stopped_by, result.error)
    # a reply that is no sections is a parse error; action sections holding no calls
    # are failed calls: either way the run ends at its consecutive-errors limit
    assert result.limit in ("max_consecutive_parse_errors", "max_consecutive_tool_errors")
    assert len(result.steps) <= 6
    # each reply is answered: feedback, or the failed calls' errors, in the next message
    answers = [m.text_content() for m in result.messages[2:] if m.role == "user"]
    assert len(answers) == len(result.steps)
    for answer in answers:
        assert actionable(answer), answer
    assert demo.data.bookings["BK001"].flight_number == "AA100"  # nothing was changed


def test_an_evaluation_reports_why_a_small_model_failed() -> None:
    entry = next(e for e in ENTRIES if e["text_format"] == "xml" and e["calls"] == "yaml")
    output = (CORPUS / entry["file"]).read_text()
    case = dataclasses.replace(load_case(PROMPTS / "airline" / "reschedule.md"), text_format="xml")
    target = ModelTarget(entry["model"], lambda: ScriptedModel(lambda messages: output))
    result = asyncio.run(run_case(case, target, EvalSettings()))
    assert not result.passed
    assert result.failures[0] == (
        "the run stopped by limit (max_consecutive_parse_errors), expected answer"
    )
    row = EvalReport([result]).to_markdown().splitlines()[2]
    assert row.startswith(f"| {entry['model']} | reschedule | - | ❌ | text | - | 4 | 0 |")
