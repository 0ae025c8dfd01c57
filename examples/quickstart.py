"""Quick start: a typed tool, a chain, a format, one execute, the observation."""

from __future__ import annotations

from pydantic import BaseModel

from formats import MarkdownFormat, XMLFormat
from toolchain import ExecutionContext, Tool, ToolResult, YAMLToolChain


class CityIn(BaseModel):
    city: str
    days: int = 1


class Forecast(Tool[CityIn, dict[str, object]]):
    name = "forecast"
    description = "Weather forecast for a city."

    async def call(self, ctx: ExecutionContext, input: CityIn) -> ToolResult[dict[str, object]]:
        return ToolResult(
            {"city": input.city, "days": input.days, "high_c": [21, 19][: input.days]}
        )


chain = YAMLToolChain().register_tool(Forecast())
action = "- tool: forecast\n  args: {city: Paris, days: 2}\n- tool: forcast\n  args: {city: Oslo}"
for fmt in (MarkdownFormat(), XMLFormat()):
    result = chain.execute_sync(ExecutionContext(), action, fmt)
    print(result.text, end="\n\n")
