"""Thirty programs with a planted mistake each, written against real tools' stubs, and
the share the type check catches before any tool runs.

Each program is what a model might write for a small task on a shop's tools (orders,
refunds, weather), with one mistake of a kind the issue names: a wrong argument name,
a wrong argument type, a wrong key of a result, a missing ``await``, a wrong number of
arguments, plus a misspelt tool name and a misuse of a result's type. Each has its
``fixed`` twin, the same program without the mistake, which must type-check and run
(so what is caught is the mistake, not something else in the program).

A program is *caught* when ``PythonToolChain`` answers it with the type checker's
message (error kind ``invalid_arguments``, "the program was not run") and none of the
tools ran (each tool counts its runs). Anything else is a miss, listed with what
happened instead.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Annotated, Any

import pydantic
from typing_extensions import TypedDict

from formats import XMLFormat
from toolchain import ExecutionContext, Tool, tool
from toolchain.code import PythonToolChain

__all__ = ["BLIND_SPOTS", "MISTAKES", "Checked", "Mistake", "check_all", "mistake_tools"]


class Item(TypedDict):
    sku: str
    quantity: int
    unit_price: float


class Order(TypedDict):
    """An order of the shop."""

    id: str
    customer: str
    status: str
    amount: float
    items: list[Item]


class Refund(TypedDict):
    refund_id: str
    amount: float


class Weather(TypedDict):
    temperature: float
    conditions: str


_ORDER = Order(
    id="ORD-1000",
    customer="Ada",
    status="paid",
    amount=123.0,
    items=[Item(sku="KB-101", quantity=1, unit_price=123.0)],
)


def mistake_tools(runs: Counter[str]) -> list[Tool[Any, Any]]:
    """The tools the programs are written against; each run is counted in ``runs``."""

    @tool
    def list_orders(week: str) -> list[str]:
        """The ids of the orders placed in an ISO week (e.g. 2026-W47)."""
        runs["list_orders"] += 1
        return ["ORD-1000"]

    @tool
    def get_order(order_id: str) -> Order:
        """One order by its id."""
        runs["get_order"] += 1
        return _ORDER

    @tool
    def search_orders(customer: str, limit: int = 10) -> list[Order]:
        """The customer's orders, newest first."""
        runs["search_orders"] += 1
        return [_ORDER][:limit]

    @tool
    def refund_order(order_id: str, amount: float, reason: str) -> Refund:
        """Refund part or all of an order."""
        runs["refund_order"] += 1
        return Refund(refund_id="RF-1", amount=amount)

    @tool
    def get_weather(location: str) -> Weather:
        """The current weather at a location."""
        runs["get_weather"] += 1
        return Weather(temperature=21.5, conditions="sunny")

    @tool
    def get_profile(user: str) -> dict[str, object]:
        """A user's profile (its fields vary by account type)."""
        runs["get_profile"] += 1
        return {"name": user, "plan": "pro"}

    @tool
    def top_orders(limit: Annotated[int, pydantic.Field(ge=1, le=100)] = 10) -> list[str]:
        """The best-selling orders, 1 to 100 of them."""
        runs["top_orders"] += 1
        return ["ORD-1000"][:limit]

    return [
        list_orders,
        get_order,
        search_orders,
        refund_order,
        get_weather,
        get_profile,
        top_orders,
    ]


@dataclass(frozen=True, slots=True)
class Mistake:
    """A program with one planted mistake, and the same program without it."""

    kind: str
    planted: str
    fixed: str


_G = 'o = await get_order(order_id="ORD-1000")\n'
_R = 'r = await refund_order(order_id="ORD-1000", amount=5.0, reason="damaged")\n'
_W = 'w = await get_weather(location="Paris")\n'
MISTAKES: tuple[Mistake, ...] = (
    # wrong argument names
    Mistake(
        "argument name",
        'o = await get_order(id="ORD-1000")\nprint(o["amount"])',
        _G + 'print(o["amount"])',
    ),
    Mistake(
        "argument name",
        'ids = await list_orders(iso_week="2026-W47")\nprint(len(ids))',
        'ids = await list_orders(week="2026-W47")\nprint(len(ids))',
    ),
    Mistake(
        "argument name",
        'found = await search_orders(name="Ada")\nprint(len(found))',
        'found = await search_orders(customer="Ada")\nprint(len(found))',
    ),
    Mistake(
        "argument name",
        'r = await refund_order(order_id="ORD-1000", amount=5.0, why="damaged")\n'
        'print(r["refund_id"])',
        _R + 'print(r["refund_id"])',
    ),
    Mistake(
        "argument name",
        'w = await get_weather(city="Paris")\nprint(w["temperature"])',
        _W + 'print(w["temperature"])',
    ),
    Mistake(
        "argument name",
        'found = await search_orders(customer="Ada", max=5)\nprint(len(found))',
        'found = await search_orders(customer="Ada", limit=5)\nprint(len(found))',
    ),
    # wrong argument types
    Mistake(
        "argument type",
        'o = await get_order(order_id=1000)\nprint(o["amount"])',
        _G + 'print(o["amount"])',
    ),
    Mistake(
        "argument type",
        "ids = await list_orders(week=47)\nprint(len(ids))",
        'ids = await list_orders(week="2026-W47")\nprint(len(ids))',
    ),
    Mistake(
        "argument type",
        'found = await search_orders(customer="Ada", limit="5")\nprint(len(found))',
        'found = await search_orders(customer="Ada", limit=5)\nprint(len(found))',
    ),
    Mistake(
        "argument type",
        'r = await refund_order(order_id="ORD-1000", amount="5.00", reason="damaged")\n'
        'print(r["refund_id"])',
        _R + 'print(r["refund_id"])',
    ),
    Mistake(
        "argument type",
        'w = await get_weather(location=["Paris"])\nprint(w["temperature"])',
        _W + 'print(w["temperature"])',
    ),
    Mistake(
        "argument type",
        _G + 'r = await refund_order(order_id=o, amount=5.0, reason="damaged")\n'
        'print(r["refund_id"])',
        _G + 'r = await refund_order(order_id=o["id"], amount=5.0, reason="damaged")\n'
        'print(r["refund_id"])',
    ),
    # wrong keys of a result
    Mistake("result key", _G + 'print(o["total"])', _G + 'print(o["amount"])'),
    Mistake("result key", _G + 'print(len(o["item"]))', _G + 'print(len(o["items"]))'),
    Mistake("result key", _W + 'print(w["temp"])', _W + 'print(w["temperature"])'),
    Mistake("result key", _R + 'print(r["id"])', _R + 'print(r["refund_id"])'),
    Mistake(
        "result key",
        'found = await search_orders(customer="Ada")\nprint(found[0]["price"])',
        'found = await search_orders(customer="Ada")\nprint(found[0]["amount"])',
    ),
    Mistake(
        "result key",
        _G + 'print(o["items"][0]["price"])',
        _G + 'print(o["items"][0]["unit_price"])',
    ),
    # missing awaits
    Mistake(
        "missing await",
        'o = get_order(order_id="ORD-1000")\nprint(o["amount"])',
        _G + 'print(o["amount"])',
    ),
    Mistake(
        "missing await",
        'ids = list_orders(week="2026-W47")\nfor i in ids:\n    print(i)',
        'ids = await list_orders(week="2026-W47")\nfor i in ids:\n    print(i)',
    ),
    Mistake(
        "missing await",
        'w = get_weather(location="Paris")\nprint(w["temperature"] + 1)',
        _W + 'print(w["temperature"] + 1)',
    ),
    Mistake(
        "missing await",
        'print(sum(o["amount"] for o in search_orders(customer="Ada")))',
        'print(sum(o["amount"] for o in await search_orders(customer="Ada")))',
    ),
    Mistake(
        "missing await",
        'refund_order(order_id="ORD-1000", amount=5.0, reason="damaged")\nprint("refunded")',
        'await refund_order(order_id="ORD-1000", amount=5.0, reason="damaged")\nprint("refunded")',
    ),
    # wrong arity
    Mistake("arity", 'o = await get_order()\nprint(o["amount"])', _G + 'print(o["amount"])'),
    Mistake(
        "arity",
        'o = await get_order("ORD-1000", "EUR")\nprint(o["amount"])',
        _G + 'print(o["amount"])',
    ),
    Mistake(
        "arity",
        'r = await refund_order("ORD-1000", 5.0)\nprint(r["refund_id"])',
        _R + 'print(r["refund_id"])',
    ),
    Mistake(
        "arity",
        "ids = await list_orders()\nprint(len(ids))",
        'ids = await list_orders(week="2026-W47")\nprint(len(ids))',
    ),
    Mistake(
        "arity",
        'w = await get_weather("Paris", "celsius")\nprint(w["temperature"])',
        _W + 'print(w["temperature"])',
    ),
    # a misspelt tool, a result used as the wrong type
    Mistake(
        "unknown tool",
        'o = await get_orders(order_id="ORD-1000")\nprint(o["amount"])',
        _G + 'print(o["amount"])',
    ),
    Mistake(
        "result type", _G + 'print(o["amount"] + " EUR")', _G + 'print(str(o["amount"]) + " EUR")'
    ),
)


BLIND_SPOTS: tuple[Mistake, ...] = (
    # Outside the 30: what the stubs cannot say, so the checker cannot see.
    Mistake(
        "key of an untyped result (dict[str, Any])",
        'p = await get_profile(user="ada")\nprint(p["plann"])',
        'p = await get_profile(user="ada")\nprint(p["plan"])',
    ),
    Mistake(
        "a bound only the input schema holds (1 to 100)",
        "print(await top_orders(limit=500))",
        "print(await top_orders(limit=50))",
    ),
)
"""Mistakes the type check cannot catch (reported apart, not counted in the share)."""


@dataclass(frozen=True, slots=True)
class Checked:
    """What became of one program: caught before any tool ran, or what happened."""

    mistake: Mistake
    caught: bool
    runs: int
    """Tool runs the program made."""
    said: str
    """What the model read (the checker's message, or the program's output)."""


def check(chain: PythonToolChain, runs: Counter[str], program: str) -> Checked:
    """Run ``program`` through ``chain`` and see whether the checker stopped it."""
    runs.clear()
    result = chain.execute_sync(ExecutionContext(), program, XMLFormat())
    (error,) = result.raw.errors[-1:]
    caught = (
        error is not None
        and error.kind == "invalid_arguments"
        and "the program was not run" in error.message
        and not runs
    )
    said = error.message if error is not None else result.text
    return Checked(Mistake("", program, ""), caught, sum(runs.values()), said)


def check_all(
    mistakes: tuple[Mistake, ...] = MISTAKES,
) -> tuple[list[Checked], list[Checked]]:
    """Every planted program, and every fixed twin, through one chain."""
    runs: Counter[str] = Counter()
    chain = PythonToolChain()
    for each in mistake_tools(runs):
        chain.register_tool(each)
    planted: list[Checked] = []
    fixed: list[Checked] = []
    for mistake in mistakes:
        found = check(chain, runs, mistake.planted)
        planted.append(Checked(mistake, found.caught, found.runs, found.said))
        twin = check(chain, runs, mistake.fixed)
        fixed.append(Checked(mistake, twin.caught, twin.runs, twin.said))
    return planted, fixed
