"""A tool that returns an image: the observation text points at it, the image rides along."""

from __future__ import annotations

import base64

from pydantic import BaseModel

from formats import XMLFormat
from toolchain import ExecutionContext, ImageContent, Tool, ToolResult, YAMLToolChain

# A 1x1 PNG, so the example needs no files.
PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


class ChartIn(BaseModel):
    metric: str


class Chart(Tool[ChartIn, dict[str, object]]):
    name = "chart"
    description = "Plot a metric."

    async def call(self, ctx: ExecutionContext, input: ChartIn) -> ToolResult[dict[str, object]]:
        return ToolResult(
            {"metric": input.metric, "points": 1},
            media=[ImageContent(data=PIXEL, media_type="image/png")],
            instructions="Describe the trend you see in the attached chart.",
        )


chain = YAMLToolChain().register_tool(Chart())
result = chain.execute_sync(
    ExecutionContext(), "- tool: chart\n  args: {metric: latency}", XMLFormat()
)
print(result.text)
for part in result.as_content_parts():
    print(type(part).__name__)
