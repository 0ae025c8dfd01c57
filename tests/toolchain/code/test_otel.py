"""A program's trace: one ``execute_code`` span, the spans of the calls it made under it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agents import ReActAgent, ScriptedModel
from tests.agents.otel.tracing import Traced, traced
from toolchain import tool
from toolchain.code import PythonToolChain


@pytest.fixture
def spans() -> Iterator[Traced]:
    yield from traced()


@tool
async def get_weather(city: str) -> dict[str, object]:
    """Current weather for a city."""
    return {"city": city, "temp_c": 20.0}


async def test_the_calls_of_a_program_are_children_of_its_execute_code_span(
    spans: Traced,
) -> None:
    program = (
        "import asyncio\n"
        'a, b = await asyncio.gather(get_weather("Paris"), get_weather("Oslo"))\n'
        'c = await get_weather("Rome")\n'
        'print(a["city"], b["city"], c["city"])'
    )
    model = ScriptedModel([f"<action>{program}</action>", "<answer>done</answer>"])
    chain = PythonToolChain().register_tool(get_weather)
    result = await ReActAgent(model, tool_chain=chain).run("Weather?")
    assert result.answer == "done"
    tree = spans.tree("gen_ai.operation.name").splitlines()
    code = [line for line in tree if line.lstrip().startswith("execute_code")]
    assert len(code) == 1
    depth = len(code[0]) - len(code[0].lstrip())
    start = tree.index(code[0])
    children = tree[start + 1 : start + 4]
    assert [line.strip() for line in children] == [
        "execute_tool get_weather gen_ai.operation.name=execute_tool"
    ] * 3
    assert all(len(line) - len(line.lstrip()) == depth + 2 for line in children)
    assert code[0].strip() == "execute_code gen_ai.operation.name=execute_code"
