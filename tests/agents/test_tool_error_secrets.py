"""A key in what a tool raised goes nowhere: not to the model (the request the server
gets), not into the log records (message or traceback), not into ``raw.errors``, not
into a span, whichever agent runs it, through the OpenAI SDK against a loopback server.
The keys are of known shapes, the adapter's own key (no shape: it was sent), and, in a
second process, a key the process was given in its environment.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from agents import AgentResult, ReActAgent, ToolCallingAgent
from agents.models import OpenAIChatModel
from tests.agents.otel.tracing import every_text, traced
from tests.support.agent_kinds import KINDS, Kind
from tests.support.chat_script import Turn, calls, chat_script
from tests.support.loopback import LoopbackServer
from toolchain import ToolCallError, tool
from toolchain.testing import fixed_clock

ROOT = Path(__file__).resolve().parents[2]
# Built from pieces so that no whole key sits in the source (secret scanners read tests).
OPENAI_KEY = "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"
AWS_KEY_ID = "AKIA" + "IOSFODNN7EXAMPLE"
GITHUB_TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
JWT = "eyJ" + "hbGciOiJIUzI1NiJ9.eyJ" + "zdWIiOiIxMjM0In0.SflKxwRJSMeKKF2QT4fwpMeJf36P"
ADAPTER_KEY = "adapter-key-6Hq1Zr0Pw9"  # no known shape: blanked because the adapter sends it
SECRETS = (OPENAI_KEY, AWS_KEY_ID, GITHUB_TOKEN, JWT, ADAPTER_KEY)


@tool
def lookup(city: str) -> str:
    """Look a city up in the partner's service."""
    raise RuntimeError(
        f"partner refused {city}: key {OPENAI_KEY}, id {AWS_KEY_ID}, token {GITHUB_TOKEN}, "
        f"session {JWT}, and our own {ADAPTER_KEY}"
    )


def script(kind: Kind) -> list[Turn]:
    if kind == "native":
        return [calls(("lookup", {"city": "Oslo"})), "The partner is down."]
    action = json.dumps({"tool": "lookup", "args": {"city": "Oslo"}})
    return [f"<action>{action}</action>", "<answer>The partner is down.</answer>"]


def leaked(text: str) -> list[str]:
    return [secret for secret in SECRETS if secret in text]


@KINDS
@pytest.mark.parametrize("capture_content", [False, True])
async def test_a_key_a_tool_raised_reaches_no_request_log_error_or_span(
    kind: Kind, capture_content: bool, loopback: LoopbackServer, caplog: pytest.LogCaptureFixture
) -> None:
    loopback.respond_with(chat_script(script(kind)))
    model = OpenAIChatModel("gpt-test", api_key=ADAPTER_KEY, base_url=loopback.openai_base_url)
    agent_class = ReActAgent if kind == "react" else ToolCallingAgent
    agent = agent_class(model, tools=[lookup], clock=fixed_clock)
    caplog.set_level(logging.INFO)
    result: AgentResult[str] | None = None
    for spans in traced(capture_content=capture_content):  # instrumented for this run
        result = await agent.run("Is the partner up for Oslo?")
        span_text = every_text(spans.spans)
        assert leaked(span_text) == [] and "lookup failed" in span_text
    await model.aclose()
    assert result is not None and result.ok and result.answer == "The partner is down."

    # The model read the failure, redacted: the tool message of the second request.
    second = loopback.requests[1].body.decode("utf-8")
    assert leaked(second) == []
    assert "partner refused Oslo: key [REDACTED]" in json.loads(second)["messages"][-1]["content"]
    assert all(leaked(request.body.decode("utf-8")) == [] for request in loopback.requests)

    # The developer's records: the INFO record of the failed call and the WARNING with
    # the traceback, formatted as any handler would.
    records = [r for r in caplog.records if r.name == "toolchain"]
    assert {r.levelno for r in records} == {logging.INFO, logging.WARNING}
    assert leaked(caplog.text) == []
    assert "RuntimeError: partner refused Oslo: key [REDACTED]" in caplog.text
    for record in records:
        assert leaked(logging.Formatter().format(record)) == []

    # raw.errors: the message is redacted; the exception is the one the tool raised (a
    # program may inspect it), its own text as it was.
    (error,) = [e for i in result.steps for r in i.tool_results for e in r.raw.errors if e]
    assert isinstance(error, ToolCallError) and error.kind == "tool_error"
    assert leaked(error.message) == [] and "[REDACTED]" in error.message
    assert isinstance(error.exception, RuntimeError)
    assert leaked(result.transcript()) == []


WORKER = textwrap.dedent(
    """
    import logging, os, sys

    from agents import ToolCallingAgent
    from agents.models import OpenAIChatModel
    from toolchain import tool

    logging.basicConfig(level=logging.INFO, stream=sys.stderr)


    @tool
    def charge(amount: int) -> str:
        '''Charge the card through the payment service.'''
        raise RuntimeError(f"payment service said: bad key {os.environ['ACME_PAYMENTS_API_KEY']}")


    model = OpenAIChatModel("gpt-test", api_key="unused-here", base_url=os.environ["BASE_URL"])
    result = ToolCallingAgent(model, tools=[charge]).run_sync("Charge 5.")
    errors = [e for i in result.steps for r in i.tool_results for e in r.raw.errors if e]
    print(errors[0].message)
    print(result.answer)
    """
)


def test_a_key_the_process_was_given_is_blanked_wherever_a_tool_repeats_it(
    loopback: LoopbackServer, tmp_path: Path
) -> None:
    env_key = "acme-live-77Qx91aaZr"  # no known shape: blanked because the process has it
    loopback.respond_with(chat_script([calls(("charge", {"amount": 5})), "The charge failed."]))
    worker = tmp_path / "worker.py"
    worker.write_text(WORKER)
    environment = {
        **os.environ,
        "ACME_PAYMENTS_API_KEY": env_key,
        "BASE_URL": loopback.openai_base_url,
        "PYTHONPATH": str(ROOT),
    }
    done = subprocess.run(
        [sys.executable, str(worker)],
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "charge failed: RuntimeError: payment service said: bad key [REDACTED]",
        "The charge failed.",
    ]
    assert env_key not in done.stderr and "bad key [REDACTED]" in done.stderr
    assert "Traceback" in done.stderr  # the WARNING's traceback, redacted
    assert all(env_key not in request.body.decode("utf-8") for request in loopback.requests)
