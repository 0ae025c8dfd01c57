"""Small typed tools the toolchain and agent tests share."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from typing import Any

import msgspec
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from toolchain import ExecutionContext, ImageContent, Tool, ToolError, ToolResult, tool


class CityIn(BaseModel):
    city: str = Field(description="City name, e.g. Paris")
    days: int = 1


class Weather(Tool[CityIn, dict[str, object]]):
    name = "get_weather"
    description = "Current weather for a city."
    policy = "Use only for cities the user named."

    async def call(self, ctx: ExecutionContext, input: CityIn) -> ToolResult[dict[str, object]]:
        return ToolResult({"city": input.city, "temp_c": 21, "days": input.days})


@dataclasses.dataclass
class FlightIn:
    flight_number: str


class Flight(Tool[FlightIn, dict[str, object]]):
    name = "get_flight"
    description = "Flight details by flight number."

    def call(self, ctx: ExecutionContext, input: FlightIn) -> ToolResult[dict[str, object]]:
        if input.flight_number == "XX0":
            raise ToolError(f"no flight {input.flight_number}")
        return ToolResult(
            {
                "flight": input.flight_number,
                "route": {"from": "JFK", "to": "LAX"},
                "legs": [{"dep": "08:00", "arr": "11:30"}, {"dep": "14:00", "arr": "17:30"}],
                "notes": "Gate changes are announced\n30 minutes before boarding.",
            }
        )


class PolicyIn(TypedDict):
    keyword: str


class Policy(Tool[PolicyIn, str]):
    name = "search_policy"
    description = "Search airline policy text."

    def call(self, ctx: ExecutionContext, input: PolicyIn) -> ToolResult[str]:
        return ToolResult(
            f"Policy on {input['keyword']}: changes cost $50.",
            instructions="Tell the customer the fee before changing anything.",
        )


class SeatIn(msgspec.Struct):
    flight_number: str
    row: int


class SeatMap(Tool[SeatIn, str]):
    name = "seat_map"
    description = "A picture of the seat map around a row."

    async def call(self, ctx: ExecutionContext, input: SeatIn) -> ToolResult[str]:
        image = ImageContent(data=b"\x89PNG\r\n\x1a\n-fake-", media_type="image/png")
        return ToolResult(f"Seat map of {input.flight_number} around row {input.row}.", (image,))


class SleepIn(BaseModel):
    seconds: float


class Sleeper(Tool[SleepIn, str]):
    name = "sleep"
    description = "Sleeps (a stand-in for a hung tool)."
    timeout = 0.05

    def call(self, ctx: ExecutionContext, input: SleepIn) -> ToolResult[str]:
        time.sleep(input.seconds)
        return ToolResult("awake")


class AsyncSleeper(Tool[SleepIn, str]):
    name = "async_sleep"
    description = "Sleeps asynchronously."

    async def call(self, ctx: ExecutionContext, input: SleepIn) -> ToolResult[str]:
        await asyncio.sleep(input.seconds)
        return ToolResult("awake")


@tool
def add(a: int, b: int = 0) -> int:
    """Add two integers."""
    return a + b


@tool
def explode(reason: str) -> str:
    """Always fails."""
    raise RuntimeError(reason)


class Stubborn(Tool[CityIn, str]):
    """An async tool with a bare ``except:`` in a retry loop: it swallows cancellation."""

    name = "stubborn"
    description = "Retries forever."

    async def call(self, ctx: ExecutionContext, input: CityIn) -> ToolResult[str]:
        while True:
            with contextlib.suppress(BaseException):
                await asyncio.sleep(0.01)


def all_tools() -> list[Tool[Any, Any]]:
    return [Weather(), Flight(), Policy(), SeatMap(), Sleeper(), AsyncSleeper(), add, explode]
