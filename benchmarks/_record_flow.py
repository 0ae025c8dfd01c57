"""A ~5 KB record through three tools: the flow where passing by name should pay.

``fetch_customer`` returns a CRM record (contact, addresses, preferences, 19 orders with
their items: about 5 KB of compact JSON), ``enrich_customer`` takes that record and
returns what it derives from it (lifetime value, segment, churn risk …, as enrichment
services answer: the new fields, not the record again), and ``send_to_crm`` takes the
record and the enrichment and upserts them. The model then answers with the contact id.

By value, the model copies what it read: the record, parsed from the observation it
was shown, into ``enrich_customer`` and again into ``send_to_crm`` (with the
enrichment), written as compact JSON (the fewest tokens a model could write it in). By
reference, it passes the names it was shown beside the results (``$fetch_customer_1``,
``$enrich_customer_1``). The tools receive the same values either way (checked).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from toolchain import Tool, tool

__all__ = ["RECORD", "RecordWorld", "Recorded", "ScriptError", "record_flow"]

_PRODUCTS = (
    "Trail running shoes",
    "Merino base layer",
    "Insulated bottle 750 ml",
    "Headlamp 400 lm",
    "Rain shell jacket",
    "Trekking poles (pair)",
    "Wool socks, 3 pack",
)
_STATUS = ("delivered", "delivered", "returned", "shipped")


def _order(i: int) -> dict[str, object]:
    items: list[dict[str, object]] = [
        {
            "sku": f"SKU-{3100 + (i * 13 + j * 7) % 900}",
            "name": _PRODUCTS[(i + j) % len(_PRODUCTS)],
            "qty": 1 + (i + j) % 3,
            "unit_price": round(4.5 + ((i * 31 + j * 17) % 90) * 1.25, 2),
        }
        for j in range(1 + i % 3)
    ]
    total = sum(float(str(item["unit_price"])) * int(str(item["qty"])) for item in items)
    return {
        "order_id": f"SO-{20417 + i * 37}",
        "placed": f"2025-{1 + i % 12:02d}-{3 + (i * 7) % 25:02d}",
        "status": _STATUS[i % len(_STATUS)],
        "items": items,
        "total": round(total, 2),
    }


RECORD: dict[str, object] = {
    "customer_id": "C-1042",
    "name": "Ingrid Solberg",
    "email": "ingrid.solberg@example.com",
    "phone": "+47 412 55 019",
    "since": "2019-04-17",
    "tier": "gold",
    "addresses": [
        {"kind": "billing", "street": "Thorvald Meyers gate 54", "city": "Oslo", "zip": "0555"},
        {"kind": "shipping", "street": "Markveien 35B", "city": "Oslo", "zip": "0554"},
    ],
    "preferences": {"newsletter": True, "sms": False, "language": "nb", "size": "M"},
    "tags": ["outdoor", "repeat-buyer", "returns-checked"],
    "notes": "Prefers pickup points; asked twice about waterproof ratings of jackets.",
    "orders": [_order(i) for i in range(19)],
}
"""The customer record ``fetch_customer`` returns (about 5 KB of compact JSON)."""


def _enrichment(record: dict[str, Any]) -> dict[str, object]:
    orders: list[dict[str, Any]] = record["orders"]
    value = round(sum(float(o["total"]) for o in orders), 2)
    returned = sum(1 for o in orders if o["status"] == "returned")
    return {
        "customer_id": record["customer_id"],
        "lifetime_value": value,
        "order_count": len(orders),
        "return_rate": round(returned / len(orders), 3),
        "segment": "loyal-high-value" if value > 1000 else "regular",
        "churn_risk": "low" if returned * 4 < len(orders) + 1 else "medium",
        "next_best_offer": "Rain shell jacket care kit",
    }


@dataclass
class Recorded:
    """What a benchmark world's tools received, by tool (as ``RelayWorld`` keeps it)."""

    received: dict[str, list[dict[str, object]]] = field(default_factory=lambda: {})

    def record(self, name: str, **args: object) -> None:
        self.received.setdefault(name, []).append(args)


@dataclass
class RecordWorld(Recorded):
    """The three tools, recording what they received."""

    def tools(self) -> tuple[Tool[Any, Any], ...]:
        world = self

        @tool
        def fetch_customer(customer_id: str) -> dict[str, object]:
            """The full CRM record of a customer: contact, addresses, preferences, orders."""
            world.record("fetch_customer", customer_id=customer_id)
            return RECORD

        @tool
        def enrich_customer(record: dict[str, Any]) -> dict[str, object]:
            """Derived fields for a customer record: lifetime value, order count, return
            rate, segment, churn risk and the next best offer."""
            world.record("enrich_customer", record=record)
            return _enrichment(record)

        @tool
        def send_to_crm(record: dict[str, Any], enrichment: dict[str, Any]) -> str:
            """Upsert a customer record with its enrichment into the marketing CRM."""
            world.record("send_to_crm", record=record, enrichment=enrichment)
            return (
                f"Upserted {record['customer_id']} as contact crm-58120 "
                f"({len(record['orders'])} orders, segment {enrichment['segment']})."
            )

        return (fetch_customer, enrich_customer, send_to_crm)


Calls = list[tuple[str, dict[str, object]]]
_NAMED = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*) = ")


class ScriptError(RuntimeError):
    """A scripted run did not go as planned: its figures would mean nothing."""


def _read_object(seen: str, starts: str) -> dict[str, object]:
    """The JSON object the model was shown that starts with ``starts`` (what it copies)."""
    at = seen.rfind(starts)
    if at < 0:
        raise ScriptError(f"{starts!r} is not in what the model saw: {seen[:300]!r}")
    value, _ = json.JSONDecoder().raw_decode(seen, at)
    if not isinstance(value, dict):
        raise ScriptError(f"not an object at {starts!r}")
    return dict(value)  # pyright: ignore[reportUnknownArgumentType] (JSON from the observation)


def _last_name(seen: str) -> str:
    names = _NAMED.findall(seen)
    if not names:
        raise ScriptError(f"no variable name in what the model saw: {seen[:300]!r}")
    return "$" + str(names[-1])


def record_flow(by_reference: bool) -> list[Callable[[str], Calls | str]]:
    """The model's four replies: fetch, enrich, send, answer."""
    box: dict[str, object] = {}

    def enrich(seen: str) -> Calls:
        if by_reference:
            box["record"] = _last_name(seen)
        else:
            box["record"] = _read_object(seen, '{"customer_id":"C-1042","name"')
        return [("enrich_customer", {"record": box["record"]})]

    def send(seen: str) -> Calls:
        if by_reference:
            enrichment: object = _last_name(seen)
        else:
            enrichment = _read_object(seen, '{"customer_id":"C-1042","lifetime_value"')
        return [("send_to_crm", {"record": box["record"], "enrichment": enrichment})]

    def answer(seen: str) -> str:
        found = re.search(r"contact (crm-[0-9]+)", seen)
        if found is None:
            raise ScriptError(f"no contact id in what the model saw: {seen[-300:]!r}")
        return f"C-1042 is in the CRM as {found.group(1)}."

    return [lambda seen: [("fetch_customer", {"customer_id": "C-1042"})], enrich, send, answer]
