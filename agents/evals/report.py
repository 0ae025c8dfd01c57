"""Reports of an evaluation: a Markdown table like the relay PoC's, JSON, and HTML.

`EvalReport` holds the results in matrix order. The Markdown table has the PoC's
columns (Model, Prompt Id, Few-shot, Validation) and then the protocol, the boxing
mode, the steps, the tool calls and, for a failure, its first reason. The HTML
page is self-contained (inline styles, no scripts) and shows every failing run's
failures and transcript; everything a model or tool wrote is HTML-escaped. Every
format passes each text through `toolchain._redact.redact`: no key, token or value a model
adapter sent as a credential is written, even where a reply or an error repeats it.
`EvalReport.exit_code` is 0 when every case passed, 1 when one failed and 2 when a run
could not be set up (its model, toolset or cassette), for CI.

>>> from agents.evals.cases import parse_case
>>> from agents.evals.runner import CaseResult, EvalSettings
>>> case = parse_case("Hi.", path="case0.md")
>>> report = EvalReport([CaseResult(case, "m", EvalSettings(), (), "answer")])
>>> print(report.to_markdown())
| Model | Prompt Id | Few-shot | Validation | Protocol | Boxing | Steps | Tool calls | Reason |
|---|---|---|---|---|---|---|---|---|
| m | case0 | - | ✅ | text | - | 0 | 0 |  |
>>> report.exit_code
0
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from agents._terminal import visible
from agents.evals.runner import CaseResult
from toolchain.runtime import redact, redact_data

__all__ = ["EvalReport"]

PASS: Final = "✅"
FAIL: Final = "❌"
_COLUMNS: Final = (
    "Model",
    "Prompt Id",
    "Few-shot",
    "Validation",
    "Protocol",
    "Boxing",
    "Steps",
    "Tool calls",
    "Reason",
)


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell: one line, pipes escaped, control
    characters written out (the table is often read with ``cat``)."""
    return visible(" ".join(text.split())).replace("|", "\\|")


def _esc(text: str) -> str:
    """Text safe inside HTML, redacted."""
    return html.escape(redact(text))


@dataclass(frozen=True, slots=True)
class EvalReport:
    """The results of an evaluation and their renderings."""

    results: Sequence[CaseResult]

    @property
    def passed(self) -> int:
        return sum(1 for result in self.results if result.passed)

    @property
    def failed(self) -> int:
        return len(self.results) - self.passed

    @property
    def exit_code(self) -> int:
        """0 when every case passed (and there was one); 2 when a run could not be set
        up (``CaseResult.setup_failed``: fix the setup, not the prompt); else 1."""
        if any(result.setup_failed for result in self.results):
            return 2
        return 0 if self.results and not self.failed else 1

    def rows(self) -> list[tuple[str, ...]]:
        """The table's rows, one per result, as plain strings (redacted)."""
        rows: list[tuple[str, ...]] = []
        for result in self.results:
            relay = result.uses_relay
            rows.append(
                (
                    result.model,
                    result.case.id,
                    ("✔" if result.settings.few_shot else "-") if relay else "-",
                    PASS if result.passed else FAIL,
                    result.settings.protocol,
                    result.settings.boxing if relay else "-",
                    str(result.steps),
                    str(len(result.calls)),
                    result.failures[0] if result.failures else "",
                )
            )
        return [tuple(redact(cell) for cell in row) for row in rows]

    def to_markdown(self) -> str:
        """The per model and case table, as in the relay PoC's README."""
        lines = [
            "| " + " | ".join(_COLUMNS) + " |",
            "|" + "---|" * len(_COLUMNS),
        ]
        lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in self.rows()]
        return "\n".join(lines)

    def to_json(self) -> str:
        """Every result with its failures and calls, as indented JSON."""
        items: list[dict[str, object]] = []
        for result in self.results:
            items.append(
                {
                    "model": result.model,
                    "case": result.case.id,
                    "file": str(result.case.path) if result.case.path else None,
                    "protocol": result.settings.protocol,
                    "boxing": result.settings.boxing if result.uses_relay else None,
                    "few_shot": result.settings.few_shot if result.uses_relay else None,
                    "passed": result.passed,
                    "failures": list(result.failures),
                    "stopped_by": result.stopped_by,
                    "detail": result.detail,
                    "answer": result.answer,
                    "steps": result.steps,
                    "tool_calls": [
                        {
                            "name": call.name,
                            "args": dict(call.args),
                            "result": call.result,
                            "error": call.error_kind,
                        }
                        for call in result.calls
                    ],
                    "usage": {
                        "input_tokens": result.usage.input_tokens,
                        "output_tokens": result.usage.output_tokens,
                    },
                    "duration_seconds": round(result.duration, 3),
                    "notes": list(result.notes),
                }
            )
        document = {
            "passed": self.passed,
            "failed": self.failed,
            "results": redact_data(items),
        }
        return json.dumps(document, indent=2, ensure_ascii=False, default=str) + "\n"

    def to_html(self, *, title: str = "Prompt-case evaluation") -> str:
        """One self-contained page: the table, then each failing run's transcript."""
        esc = _esc
        head = "".join(f"<th>{esc(column)}</th>" for column in _COLUMNS)
        body_rows: list[str] = []
        for index, (result, row) in enumerate(zip(self.results, self.rows(), strict=True)):
            cells = [esc(cell) for cell in row]
            if not result.passed:
                cells[3] = f'<a href="#run-{index}">{cells[3]}</a>'
            css = "pass" if result.passed else "fail"
            body_rows.append(
                f'<tr class="{css}">' + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"
            )
        details: list[str] = []
        for index, result in enumerate(self.results):
            if result.passed:
                continue
            failures = "".join(f"<li>{esc(failure)}</li>" for failure in result.failures)
            where = esc(str(result.case.path)) if result.case.path else "(prompt)"
            details.append(
                f'<section id="run-{index}"><h2>{esc(result.case.id)} on {esc(result.model)}'
                f" ({esc(result.settings.protocol)})</h2>"
                f"<p>{where} · stopped by {esc(result.stopped_by)}"
                f"{' (' + esc(result.detail) + ')' if result.detail else ''}"
                f" · {result.steps} steps · {len(result.calls)} tool calls</p>"
                f"<ul>{failures}</ul>"
                f"<details><summary>transcript</summary><pre>{esc(result.transcript)}</pre>"
                "</details></section>"
            )
        summary = f"{self.passed} passed, {self.failed} failed"
        return (
            '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f"<title>{esc(title)}</title><style>{_STYLE}</style></head><body>"
            f"<h1>{esc(title)}</h1><p>{esc(summary)}</p>"
            f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body_rows)}</tbody></table>"
            f"{''.join(details)}</body></html>\n"
        )


_STYLE: Final = (
    "body{font-family:system-ui,sans-serif;margin:2em;color:#222}"
    "table{border-collapse:collapse}th,td{border:1px solid #ccc;padding:4px 8px;"
    "text-align:left;vertical-align:top}tr.fail td{background:#fdecea}"
    "tr.pass td{background:#eef8ee}pre{white-space:pre-wrap;background:#f6f6f6;"
    "padding:1em;max-height:40em;overflow:auto}section{margin-top:2em}"
)
