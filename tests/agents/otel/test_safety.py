"""Spans that are safe and bounded.

- With ``capture_content=True``, a credential inside structured arguments or results (a
  ``password`` field, an ``Authorization`` header, a ``token`` in a list of dicts, a
  pydantic model, a dataclass) is blanked by its field's name, not only by its shape.
- With ``capture_content=False``, no argument reaches a span, not even through the
  status description of a failed call.
- Content is recorded once per run (each ``chat`` span has only the messages new to it)
  and each content attribute is capped, so the spans of a run grow linearly with its
  steps, whatever the outputs.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import (
    SimpleSpanProcessor,
)
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic import BaseModel

from agents import ReActAgent, ScriptedModel, ToolCallingAgent
from agents.otel import instrument, uninstrument
from tests.agents.otel.tracing import Traced, every_text, failed
from tests.support.agent_kinds import KINDS, Kind, answer, call
from toolchain import Limits, tool
from toolchain.testing import fixed_clock

# -- credentials by field name, at any depth ---------------------------------------------

# None of these has a known shape: only the name of the field they sit in gives them away.
DB_PASSWORD = "pw-0a9b8c7d6e"
HEADER_VALUE = "Basic Ym9iOnBhc3M0NTY3"
API_KEY_HEADER = "key-5f4e3d2c1b"
REPLICA_SECRET = "rs-1122334455"
SESSION_TOKEN = "tok-99aa88bb77"
RESULT_PASSWORD = "pw-result-66cc"
SECRETS = (DB_PASSWORD, API_KEY_HEADER, REPLICA_SECRET, SESSION_TOKEN, RESULT_PASSWORD)


class Replica(BaseModel):
    host: str
    secret: str


class Connection(BaseModel):
    host: str
    db_password: str
    headers: dict[str, str]
    replicas: list[Replica]


@dataclasses.dataclass
class Session:
    host: str
    token: str
    accounts: list[dict[str, str]]


@tool
def connect(connection: Connection) -> Session:
    """Open a session on a database."""
    accounts = [{"user": "ada", "password": RESULT_PASSWORD}]
    return Session(connection.host, SESSION_TOKEN, accounts)


ARGUMENTS = {  # the tool's input is the model itself: its fields are the arguments
    "host": "db.internal",
    "db_password": DB_PASSWORD,
    "headers": {"Authorization": HEADER_VALUE, "X-Api-Key": API_KEY_HEADER, "Accept": "*/*"},
    "replicas": [{"host": "replica.internal", "secret": REPLICA_SECRET}],
}


@KINDS
async def test_credentials_in_structured_arguments_and_results_are_blanked_by_name(
    kind: Kind, spans_with_content: Traced
) -> None:
    model = ScriptedModel([call(kind, "connect", **ARGUMENTS), answer(kind, "Connected.")])
    agent_class = ReActAgent if kind == "react" else ToolCallingAgent
    result = await agent_class(model, tools=[connect], name="dba", clock=fixed_clock).run("Go.")
    assert result.answer == "Connected."
    text = every_text(spans_with_content.spans)
    assert [secret for secret in (*SECRETS, HEADER_VALUE) if secret in text] == []
    tool_span = dict(spans_with_content.one("execute_tool connect").attributes or {})
    arguments = json.loads(str(tool_span["gen_ai.tool.call.arguments"]))
    assert arguments == {
        "host": "db.internal",
        "db_password": "[REDACTED]",
        "headers": {"Authorization": "[REDACTED]", "X-Api-Key": "[REDACTED]", "Accept": "*/*"},
        "replicas": [{"host": "replica.internal", "secret": "[REDACTED]"}],
    }
    assert json.loads(str(tool_span["gen_ai.tool.call.result"])) == {
        "host": "db.internal",
        "token": "[REDACTED]",
        "accounts": [{"user": "ada", "password": "[REDACTED]"}],
    }
    # The schema offered to the model names a password field: it is kept, not blanked.
    chat = dict(spans_with_content.named("chat scripted")[0].attributes or {})
    assert '"db_password":{"type":"string"' in str(chat["gen_ai.tool.definitions"])


# -- no content without capture_content, not even in a status ----------------------------

PLAN = "atlantis-landing-plan"  # an argument value: content


@tool
def lookup(city: str) -> str:
    """Look a city up."""
    raise RuntimeError(f"no such city: {city}")


@tool
def count(n: int) -> int:
    """Count to n."""
    return n


@pytest.mark.parametrize("capture", [False, True])
async def test_a_failed_call_s_status_says_what_failed_and_only_with_content_what_it_got(
    capture: bool,
) -> None:
    model = ScriptedModel(
        [
            ScriptedModel.call("lookup", city=PLAN),
            ScriptedModel.call("count", n=PLAN),  # invalid: pydantic quotes the input
            "Done.",
        ]
    )
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instrument(provider, capture_content=capture)
    try:
        agent = ToolCallingAgent(model, tools=[lookup, count], name="careful")
        assert (await agent.run("Go.")).answer == "Done."
    finally:
        uninstrument()
        provider.shutdown()
    spans = exporter.get_finished_spans()
    raised = next(s for s in spans if s.name == "execute_tool lookup")
    invalid = next(s for s in spans if s.name == "execute_tool count")
    assert failed(raised) == "tool_error" and failed(invalid) == "invalid_arguments"
    if capture:
        assert raised.status.description == f"lookup failed: RuntimeError: no such city: {PLAN}"
        assert PLAN in str(invalid.status.description)
    else:
        assert raised.status.description == "lookup failed: tool_error"
        assert invalid.status.description == "count failed: invalid_arguments"
        assert PLAN not in every_text(spans)


# -- content grows linearly with the steps, and each attribute is capped -----------------


@tool
def page(n: int) -> str:
    """Read page n of the report."""
    return f"page {n}: " + "lorem ipsum dolor sit amet " * (OUTPUT_CHARS // 27)


OUTPUT_CHARS = 40_000  # more than a content attribute holds (32 KiB)


def reading_agent(kind: Kind, steps: int) -> ReActAgent[str] | ToolCallingAgent[str]:
    turns = [call(kind, "page", n=n) for n in range(steps)]
    model = ScriptedModel([*turns, answer(kind, "Read.")])
    agent_class = ReActAgent if kind == "react" else ToolCallingAgent
    limits = Limits(max_steps=steps + 5)
    return agent_class(model, tools=[page], name="reader", limits=limits, clock=fixed_clock)


def attribute_bytes(spans: Sequence[ReadableSpan]) -> int:
    return sum(
        len(value.encode())
        for span in spans
        for value in (span.attributes or {}).values()
        if isinstance(value, str)
    )


@KINDS
async def test_a_run_s_content_grows_linearly_with_its_steps(
    kind: Kind, spans_with_content: Traced
) -> None:
    sizes: dict[int, int] = {}
    for steps in (5, 20):
        spans_with_content.clear()
        result = await reading_agent(kind, steps).run("Read the report.")
        assert result.answer == "Read." and len(result.steps) == steps + 1
        sizes[steps] = attribute_bytes(spans_with_content.spans)
    # Four times the steps: about four times the bytes (the whole conversation on every
    # chat span made it about sixteen).
    assert sizes[20] < 6 * sizes[5], sizes
    chats = sorted(spans_with_content.named("chat scripted"), key=lambda s: s.start_time or 0)
    earlier = [dict(chat.attributes or {}).get("gent.chat.earlier_messages", 0) for chat in chats]
    # Chat k leaves out what chat k-1 had: the task, and each step's reply and result.
    assert earlier == [0, *(2 * k - 1 for k in range(1, 21))]


@KINDS
async def test_every_content_attribute_is_capped_with_a_note_of_what_was_cut(
    kind: Kind, spans_with_content: Traced
) -> None:
    await reading_agent(kind, 2).run("Read the report.")
    for span in spans_with_content.spans:
        for key, value in (span.attributes or {}).items():
            if isinstance(value, str):
                assert len(value.encode()) <= 32 * 1024, (span.name, key)
    call_span = dict(spans_with_content.named("execute_tool page")[0].attributes or {})
    result = str(call_span["gen_ai.tool.call.result"])
    assert json.loads(result).startswith("page 0: lorem ipsum")  # still JSON, cut
    assert "characters cut]" in result
    assert 0 < int(str(call_span["gent.content.cut_chars"])) < OUTPUT_CHARS
