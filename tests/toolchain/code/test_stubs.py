"""Typed stubs from tools: what the model reads and what its program is checked against."""

from __future__ import annotations

import dataclasses
from typing import Literal

import msgspec
from pydantic import BaseModel, Field
from syrupy.assertion import SnapshotAssertion
from typing_extensions import TypedDict

from toolchain import ExecutionContext, Tool, ToolResult, tool
from toolchain.code import PythonToolChain


class Weather(BaseModel):
    city: str
    temp_c: float
    conditions: Literal["sunny", "rain", "snow"] = "sunny"


@tool
def get_weather(city: str, unit: Literal["c", "f"] = "c") -> Weather:
    """Current weather for a city."""
    return Weather(city=city, temp_c=20)


@tool
async def forecast(city: str, days: int = 3) -> list[Weather]:
    """The next days' weather: the same record as get_weather, one a day."""
    return [Weather(city=city, temp_c=20)] * days


class Record(msgspec.Struct):
    id: int
    amount: float
    tags: list[str] = []


class FetchIn(TypedDict):
    id: int


class FetchRecord(Tool[FetchIn, Record]):
    name = "fetch_record"
    description = "Fetch one record by id."
    policy = "Fetch only ids the user named."

    def call(self, ctx: ExecutionContext, input: FetchIn) -> ToolResult[Record]:
        return ToolResult(Record(input["id"], 1.0))


@dataclasses.dataclass
class Query:
    query: str = Field(description="what to look for")
    limit: int = 10
    exact: bool | None = None


@tool
def search(q: Query) -> dict[str, int]:
    """Search the archive; returns counts by kind."""
    return {}


@tool
def ping() -> str:
    """Check the service is up."""
    return "pong"


def test_each_input_and_output_kind_becomes_one_typed_stub(snapshot_md: SnapshotAssertion) -> None:
    """pydantic, msgspec, TypedDict and dataclass inputs and outputs; defaults; literals;
    a structured output two tools return is written once; docstrings and the policy."""
    chain = PythonToolChain()
    for each in (get_weather, forecast, FetchRecord(), search, ping):
        chain.register_tool(each)
    assert chain.available_tools_prompt() == snapshot_md


def test_the_native_tool_carries_the_same_stubs() -> None:
    chain = PythonToolChain().register_tool(get_weather).register_tool(forecast)
    listing = chain.available_tools_prompt()
    (only,) = chain.tools.values()
    assert only.name == "run_python"
    assert listing in only.description
    assert only.input_schema()["required"] == ["code"]
    # A tool registered later is in both at once.
    chain.register_tool(ping)
    assert "async def ping() -> str:" in chain.available_tools_prompt()
    assert "async def ping() -> str:" in next(iter(chain.tools.values())).description


def test_a_listing_of_some_tools_shows_only_their_stubs() -> None:
    chain = PythonToolChain().register_tool(get_weather).register_tool(ping)
    some = chain.available_tools_prompt(["ping"])
    assert "async def ping() -> str:" in some
    assert "get_weather" not in some
    assert chain.available_tools_prompt(["run_python"]) == chain.available_tools_prompt()


def test_the_type_check_alone_answers_without_running_anything() -> None:
    """The function the planted-mistakes measurement reuses (internal, no tool runs)."""
    from toolchain.code._sandbox import type_check
    from toolchain.code._stubs import tool_stubs

    stubs = tool_stubs([get_weather, FetchRecord()])
    assert type_check('w = await get_weather("Oslo")\nw["temp_c"]', stubs) is None
    message = type_check('w = await get_weather("Oslo")\nw["temp"]', stubs)
    assert message is not None
    assert message.startswith('program.py:2:3: error[invalid-key] Unknown key "temp"')
    assert type_check("r = await fetch_record(id='7')", stubs) is not None
