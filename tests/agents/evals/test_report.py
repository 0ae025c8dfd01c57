"""Reports: the PoC-style table, JSON, and an HTML page that escapes what models wrote."""

from __future__ import annotations

import json

from agents.evals.cases import parse_case
from agents.evals.report import EvalReport
from agents.evals.runner import CaseResult, EvalSettings
from agents.evals.validation import CallRecord

HOSTILE = "<script>alert('x')</script></pre><b>&amp;"


def result(case_id: str, *, failures: tuple[str, ...] = (), **settings: object) -> CaseResult:
    case = parse_case("Go.", path=f"prompts/{case_id}.md")
    return CaseResult(
        case,
        "openai:gpt-4o-mini",
        EvalSettings(**settings),  # type: ignore[arg-type]
        failures,
        "answer" if not failures else "limit",
        detail="" if not failures else "max_steps",
        calls=(CallRecord("yt_transcribe", {"video_id": "123"}, "internal://a"),),
        steps=2,
        transcript=f"==== assistant ====\n{HOSTILE}",
        uses_relay=True,
    )


REPORT = EvalReport(
    [
        result("case0"),
        result("case1", few_shot=False, boxing="json", protocol="native"),
        result("case2", failures=(f"the answer does not contain '4242' | {HOSTILE}",)),
    ]
)


def test_the_markdown_table_has_the_pocs_columns_first() -> None:
    lines = REPORT.to_markdown().splitlines()
    assert lines[0].startswith("| Model | Prompt Id | Few-shot | Validation |")
    assert lines[2] == "| openai:gpt-4o-mini | case0 | ✔ | ✅ | text | opaque | 2 | 1 |  |"
    assert lines[3] == "| openai:gpt-4o-mini | case1 | - | ✅ | native | json | 2 | 1 |  |"
    assert lines[4].startswith("| openai:gpt-4o-mini | case2 | ✔ | ❌ | text | opaque | 2 | 1 |")
    assert "\\| <script>" in lines[4]  # a pipe in a reason cannot break the table
    assert len(lines) == 5


def test_json_report() -> None:
    document = json.loads(REPORT.to_json())
    assert (document["passed"], document["failed"]) == (2, 1)
    failed = document["results"][2]
    assert failed["case"] == "case2" and not failed["passed"]
    assert failed["stopped_by"] == "limit" and failed["detail"] == "max_steps"
    assert failed["tool_calls"] == [
        {
            "name": "yt_transcribe",
            "args": {"video_id": "123"},
            "result": "internal://a",
            "error": None,
        }
    ]
    assert document["results"][1]["few_shot"] is False


def test_html_escapes_everything_models_and_tools_wrote() -> None:
    page = REPORT.to_html(title="<relay> & co")
    assert page.startswith("<!DOCTYPE html>")
    assert "<script>" not in page and "</pre><b>" not in page
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;&lt;/pre&gt;&lt;b&gt;&amp;amp;" in page
    assert "<title>&lt;relay&gt; &amp; co</title>" in page
    # only the failing run gets its transcript, linked from its row
    assert page.count("<details>") == 1 and 'href="#run-2"' in page and 'id="run-2"' in page
    assert "2 passed, 1 failed" in page


def test_exit_codes() -> None:
    assert REPORT.exit_code == 1
    assert EvalReport([result("case0")]).exit_code == 0
    assert EvalReport([]).exit_code == 1  # nothing ran: not a success
