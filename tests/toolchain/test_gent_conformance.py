"""Conformance with real model output: the gent execution logs in tests/corpus/gent-logs.

Every model output in both logs is parsed with ``XMLFormat`` and the matching chain
(YAML calls in ``<action>``; JSON calls in a ``<direct_call>`` sub-section of
``<action>``) and must give exactly the tool names and arguments of the log's
``BeforeToolCall`` entries. Those entries are Go structs dumped as YAML: field names
lower-cased without underscores, and fields the model did not set shown as zero
values, so keys are compared in that normal form and zero-valued extras are allowed.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest
import yaml
from pydantic import BaseModel

from formats import Section, XMLFormat
from toolchain import ExecutionContext, JSONToolChain, Tool, ToolCall, ToolResult, YAMLToolChain

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "gent-logs"


@dataclass(frozen=True)
class Turn:
    output: str
    calls: list[tuple[str, dict[str, Any]]]


def read_turns(log: str) -> list[Turn]:
    turns: list[Turn] = []
    for block in re.split(r"^>>> \[AfterModelCall: ", log, flags=re.M)[1:]:
        content = re.search(r"^  Content:\n(.*?)^  StopReason:", block, flags=re.M | re.S)
        assert content is not None, "an AfterModelCall without content"
        output = textwrap.dedent(content.group(1))
        calls = [
            (name, yaml.safe_load(args) or {})
            for name, args in re.findall(
                r"^>>> \[BeforeToolCall: (\w+)\][^\n]*\nArgs:\n(.*?)\n\n", block, flags=re.M | re.S
            )
        ]
        turns.append(Turn(output, calls))
    return turns


class CustomerIn(BaseModel):
    customer_id: str | None = None
    email: str | None = None


class FlightIn(BaseModel):
    flight_number: str


class BookingIn(BaseModel):
    booking_id: str


class PolicyIn(BaseModel):
    keyword: str


class ScheduleIn(BaseModel):
    origin: str
    destination: str
    date: str


class RegistryIn(BaseModel):
    query: str
    query_type: Literal["bm25", "regex"]
    page: int = 1


def stub(tool_name: str, input_type: type[BaseModel]) -> Tool[Any, Any]:
    class Stub(Tool[input_type, str]):  # type: ignore[valid-type]  # built per log tool
        name = tool_name
        description = f"{tool_name} (stub)"

        def call(self, ctx: ExecutionContext, input: Any) -> ToolResult[str]:
            return ToolResult("ok")

    return Stub()


TOOLS = [
    stub("get_customer_info", CustomerIn),
    stub("get_flight_info", FlightIn),
    stub("get_booking_info", BookingIn),
    stub("search_airline_policy", PolicyIn),
    stub("search_flight_schedule", ScheduleIn),
    stub("tool_registry_search", RegistryIn),
]


TOOLS_BY_NAME = {t.name: t for t in TOOLS}


def go_key(key: str) -> str:
    return key.replace("_", "").lower()


def assert_same_args(parsed: dict[str, object], logged: dict[str, Any]) -> None:
    ours = {go_key(k): v for k, v in parsed.items()}
    logged = {go_key(k): v for k, v in logged.items()}  # map-typed args keep their "_"
    for key, value in logged.items():
        if key in ours:
            assert ours[key] == value, f"{key}: parsed {ours[key]!r}, log {value!r}"
        else:
            assert value in ("", 0, None, False, []), f"{key}={value!r} missing from parse"
    assert set(ours) <= set(logged), f"parsed extra keys {set(ours) - set(logged)}"


def agent_format(chain: JSONToolChain | YAMLToolChain) -> XMLFormat:
    for t in TOOLS:
        chain.register_tool(t)
    return (
        XMLFormat()
        .register_section(Section("thinking"))
        .register_section(chain)
        .register_section(Section("answer"))
    )


@pytest.mark.parametrize(
    ("log", "make_chain", "outputs", "calls"),
    [
        ("LOGS_YAML", YAMLToolChain, 3, 6),
        ("LOGS_JSON", lambda: JSONToolChain(subsection="direct_call"), 4, 10),
    ],
)
def test_every_logged_output_parses_to_the_logged_calls(
    log: str, make_chain: Any, outputs: int, calls: int
) -> None:
    chain = make_chain()
    fmt = agent_format(chain)
    turns = read_turns((CORPUS / log).read_text(encoding="utf-8"))
    assert len(turns) == outputs
    assert sum(len(t.calls) for t in turns) == calls
    for turn in turns:
        sections = fmt.parse(turn.output)
        assert sections.get("thinking"), "every logged output starts with thinking"
        parsed = [
            item
            for content in sections.get("action", [])
            for item in chain.parse_calls(content, fmt)
        ]
        assert all(isinstance(item, ToolCall) for item in parsed)
        assert [c.name for c in parsed if isinstance(c, ToolCall)] == [n for n, _ in turn.calls]
        for call, (_, logged) in zip(parsed, turn.calls, strict=True):
            assert isinstance(call, ToolCall)
            assert_same_args(dict(call.args), logged)
            TOOLS_BY_NAME[call.name].codec.validate(call.args)  # the args also validate
        if not turn.calls:
            assert sections.get("answer"), "an output without calls is the final answer"


def test_the_corpus_is_where_the_tests_expect_it() -> None:
    assert (CORPUS / "LOGS_JSON").is_file()
    assert (CORPUS / "LOGS_YAML").is_file()
