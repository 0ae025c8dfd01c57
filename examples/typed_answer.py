"""A typed answer: the run's result is an ``Order`` (checked by mypy), not a string."""

from __future__ import annotations

from pydantic import BaseModel

from agents import ReActAgent, ScriptedModel, TypedTermination


class Order(BaseModel):
    item: str
    quantity: int


def in_stock(order: Order) -> str | None:
    return None if order.quantity <= 10 else "we only have 10 in stock; order at most 10"


agent = ReActAgent(
    ScriptedModel(
        [
            '<thinking>They want 12.</thinking>\n<answer>{"item": "tea", "quantity": 12}</answer>',
            '<thinking>Only 10 left.</thinking>\n<answer>{"item": "tea", "quantity": 10}</answer>',
        ]
    ),
    termination=TypedTermination(Order, validators=[in_stock]),
)
result = agent.run_sync("Twelve boxes of tea, please.")
order: Order | None = result.answer
print("feedback given:", result.steps[0].feedback)
print("order:", order)
