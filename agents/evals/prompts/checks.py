"""The typed answer and the predicate that the ported airline cases name by import path.

>>> economy_bag_costs_35('{"checked_bag_fee_usd": 35, "carry_on_free": true}')
True
>>> economy_bag_costs_35('{"checked_bag_fee_usd": 50, "carry_on_free": true}')
'a checked bag costs $35 in economy, the answer says $50'
"""

from __future__ import annotations

import json

from pydantic import BaseModel

__all__ = ["BaggageAnswer", "economy_bag_costs_35"]


class BaggageAnswer(BaseModel):
    """What the ``baggage`` case asks for."""

    checked_bag_fee_usd: float
    carry_on_free: bool


def economy_bag_costs_35(answer: str) -> bool | str:
    """The policy's facts: $35 a checked bag in economy, the carry-on free."""
    start, end = answer.find("{"), answer.rfind("}")
    parsed = BaggageAnswer.model_validate(json.loads(answer[start : end + 1]))
    if parsed.checked_bag_fee_usd != 35:
        return (
            f"a checked bag costs $35 in economy, the answer says ${parsed.checked_bag_fee_usd:g}"
        )
    if not parsed.carry_on_free:
        return "the carry-on is free, the answer says it is not"
    return True
