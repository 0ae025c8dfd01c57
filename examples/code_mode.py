"""Code mode: the model writes one typed Python program that calls the tools.

Run: python examples/code_mode.py                       # offline, on a scripted stand-in model
     python examples/code_mode.py openai:gpt-4o-mini    # a real model (OPENAI_API_KEY set)

Needs the ``[code]`` extra (``pydantic-monty``). Both agents run the same task, 20
orders fetched, filtered and summed: ``ReActAgent`` reads the program from its action
section, ``ToolCallingAgent`` from the ``code`` of its one native tool ``run_python``.
The program runs in the Monty sandbox; the 20 orders stay there, and the model reads
only the line the program prints. A first program with a mistake (a misspelt key of
the order's type) is refused by the type check before any tool runs.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from collections.abc import Sequence

from typing_extensions import TypedDict

from agents import Message, ModelError, ReActAgent, ScriptedModel, ToolCallingAgent
from agents.models import ScriptedReply
from toolchain import tool
from toolchain.code import PROGRAM_TOOL, PythonToolChain

runs: Counter[str] = Counter()


class Order(TypedDict):
    id: str
    region: str
    status: str
    amount: float


ORDERS = [
    Order(id=f"ORD-{n}", region=("EU", "US")[n % 2], status=("paid", "refunded")[n % 3 == 0],
          amount=10.0 + n)
    for n in range(20)
]  # fmt: skip


@tool
def list_orders(week: str) -> list[str]:
    """The ids of the orders placed in an ISO week (e.g. 2026-W47)."""
    runs["list_orders"] += 1
    return [order["id"] for order in ORDERS]


@tool
def get_order(order_id: str) -> Order:
    """One order by its id: region, status and amount in EUR."""
    runs["get_order"] += 1
    return next(order for order in ORDERS if order["id"] == order_id)


WRONG = (
    'ids = await list_orders(week="2026-W47")\nprint((await get_order(order_id=ids[0]))["total"])'
)
PROGRAM = """import asyncio
ids = await list_orders(week="2026-W47")
orders = await asyncio.gather(*[get_order(order_id=i) for i in ids])
paid = [o for o in orders if o["status"] == "paid" and o["region"] == "EU"]
print(len(paid), "paid EU orders, total", sum(o["amount"] for o in paid))"""


def offline_model(native: bool) -> ScriptedModel:
    """Stands in for a real model: a program with a mistake, the fixed one, the answer."""

    def reply(messages: Sequence[Message]) -> str | ScriptedReply:
        written = sum(m.role == "assistant" for m in messages)
        if written < 2:
            program = (WRONG, PROGRAM)[written]
            if native:
                return ScriptedModel.call(PROGRAM_TOOL, code=program)
            return f"<action>\n{program}\n</action>"
        printed = re.search(r"(\d+) paid EU orders, total ([0-9.]+)", messages[-1].text_content())
        answer = (
            f"{printed[1]} paid EU orders, {printed[2]} EUR." if printed else "I could not tell."
        )
        return answer if native else f"<answer>{answer}</answer>"

    return ScriptedModel(reply, name="offline")


def main() -> None:
    chain = PythonToolChain().register_tool(list_orders).register_tool(get_order)
    task = "Of the orders of week 2026-W47, what is the total of the paid ones in the EU?"
    for native in (False, True):
        model = sys.argv[1] if len(sys.argv) > 1 else offline_model(native)
        try:
            agent = (ToolCallingAgent if native else ReActAgent)(model, tool_chain=chain)
        except ModelError as error:  # e.g. the provider's API key is not set
            sys.exit(str(error))
        runs.clear()
        result = agent.run_sync(task)
        print(f"== {type(agent).__name__} ==")
        for step in result.steps:
            for each in step.tool_results:
                for seen in each.observations:  # the refusal's first two lines, or the print
                    print("the model read:", "\n  ".join(seen.text.splitlines()[:2]))
        print(f"answer: {result.answer if result.ok else result.error}")
        print(f"tool runs: {dict(runs)}\n")


if __name__ == "__main__":
    main()
