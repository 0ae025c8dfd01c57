"""Secrets an endpoint echoes back are blanked everywhere we write them.

The endpoint is the loopback server behind a custom provider (``ECHO_API_KEY``,
``ECHO_API_BASE`` with ``user:password@``): the key has no known shape, so only
knowing that we sent it can blank it. One case gets a 401 quoting the key, the password
and the Basic token the SDK made of them; the other a reply repeating them. Neither
the eval reports (Markdown, JSON, HTML), the console, the error texts, the log records
nor the traces may show any of them.
"""

from __future__ import annotations

import base64
import io
import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from agents import ConsoleTraceWriter, JSONLTraceWriter, ReActAgent
from agents.cli import main
from agents.evals.cli import make_console
from agents.models import OpenAIChatModel
from tests.support.loopback import LoopbackServer, RecordedRequest, Reply
from tests.support.openai_replies import openai_completion, openai_error
from toolchain import ExecutionContext

KEY = "Qv81LmZp0rTy55WnxHd"  # no known shape
PASSWORD = "Pw0rd-of-alice-77"
TOKEN = base64.b64encode(f"alice:{PASSWORD}".encode()).decode()  # what the SDK sends
SECRETS = (KEY, PASSWORD, TOKEN)
LEAK = f"key {KEY}, password {PASSWORD}, token {TOKEN}"


def answer(request: RecordedRequest) -> Reply:
    if "DENY" in request.body.decode():
        return openai_error(401, f"Incorrect API key provided ({LEAK})")
    return openai_completion(f"<answer>Sure: {LEAK}</answer>")


@pytest.fixture
def endpoint() -> Iterator[str]:
    with LoopbackServer() as server:
        server.respond_with(answer)
        yield server.openai_base_url.replace("http://", f"http://alice:{PASSWORD}@")


def assert_no_secret(where: str, text: str) -> None:
    for secret in SECRETS:
        assert secret not in text, f"{secret!r} in {where}"


def test_eval_reports_console_and_logs_hold_no_echoed_secret(
    endpoint: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="agents")
    caplog.set_level(logging.DEBUG, logger="toolchain")
    monkeypatch.setenv("ECHO_API_KEY", KEY)
    monkeypatch.setenv("ECHO_API_BASE", endpoint)
    for name, prompt in (("deny", "DENY: capital of France?"), ("echo", "Capital of France?")):
        (tmp_path / f"{name}.md").write_text(f"---\nanswer: {{contains: Paris}}\n---\n{prompt}")
    reports = {suffix: tmp_path / f"report.{suffix}" for suffix in ("md", "json", "html")}
    out = io.StringIO()
    args = ["eval", "--no-env-file", "--glob", str(tmp_path / "*.md"), "--model", "echo:m"]
    args += ["--max-retries", "0"]
    for suffix, path in reports.items():
        args += [f"--report-{suffix}", str(path)]
    status = main(args, console=make_console("never", file=out))
    assert status == 1  # both cases fail: they are about the secrets, not Paris
    document = json.loads(reports["json"].read_text())
    deny, echo = sorted(document["results"], key=lambda result: result["case"])
    assert deny["stopped_by"] == "error" and "HTTP 401" in deny["detail"]
    assert echo["answer"].startswith("Sure: key [REDACTED]")
    for suffix, path in reports.items():
        assert_no_secret(f"the {suffix} report", path.read_text())
    assert_no_secret("the console", out.getvalue())
    assert "[REDACTED]" in out.getvalue()
    for record in caplog.records:
        assert_no_secret(f"the log record {record.getMessage()!r}", record.getMessage())
    assert any(record.levelno == logging.WARNING for record in caplog.records)


async def test_errors_traces_and_logs_of_a_run_hold_no_echoed_secret(
    endpoint: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="agents")
    model = OpenAIChatModel("m", api_key=KEY, base_url=endpoint, max_retries=0)
    agent = ReActAgent(model)
    lines, console, ctx = io.StringIO(), io.StringIO(), ExecutionContext()
    JSONLTraceWriter(lines, include_messages=True).attach(ctx)
    ConsoleTraceWriter(console).attach(ctx)
    echoed = await agent.run("Capital of France?", ctx=ctx)
    denied = await agent.run("DENY: capital of France?", ctx=ctx)
    await model.aclose()
    assert echoed.answer == f"Sure: {LEAK}"  # the program still gets what the model said
    assert denied.stopped_by == "error" and denied.error is not None
    assert_no_secret("the error", denied.error)
    assert_no_secret("the JSON-lines trace", lines.getvalue())
    assert_no_secret("the console trace", console.getvalue())
    assert lines.getvalue().count("[REDACTED]") >= 6
    for record in caplog.records:
        assert_no_secret(f"the log record {record.getMessage()!r}", record.getMessage())
