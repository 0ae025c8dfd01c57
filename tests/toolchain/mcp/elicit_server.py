"""An MCP server whose tools ask the client for input (elicitation), for the tests of
``toolchain.mcp``, built on the SDK's ``MCPServer`` and its resolvers: on a 2026-07-28
connection the questions come back as an "input required" result; on an older one as
``elicitation/create`` requests the server waits on mid-call.

    python tests/toolchain/mcp/elicit_server.py

Its tools: ``refund(order)`` asks "Refund order <order>?" for ``{"ok": boolean}`` and
says what it did; ``ship(order)`` asks for the missing address (``{"street", "city"}``,
both required) and ships there; ``refunds()`` says how many refunds it made (a refund
runs once, whatever the rounds). With ``SHOP_LOG`` set, each refund is also a line in
that file: the durable tests count refunds across the processes that ran one run.
"""

from __future__ import annotations

import os
from typing import Annotated

from mcp.server.mcpserver import (
    AcceptedElicitation,
    Elicit,
    ElicitationResult,
    MCPServer,
    Resolve,
)
from pydantic import BaseModel

app = MCPServer("shop")
made: list[str] = []


class Confirm(BaseModel):
    ok: bool


class Address(BaseModel):
    street: str
    city: str


def ask_refund(order: str) -> Elicit[Confirm]:
    return Elicit(f"Refund order {order}?", Confirm)


def ask_address(order: str) -> Elicit[Address]:
    return Elicit(f"Where should order {order} go?", Address)


@app.tool()
def refund(order: str, answer: Annotated[ElicitationResult[Confirm], Resolve(ask_refund)]) -> str:
    """Refund an order (asks the customer first)."""
    if isinstance(answer, AcceptedElicitation) and answer.data.ok:
        made.append(order)
        log = os.environ.get("SHOP_LOG")
        if log:
            with open(log, "a", encoding="utf-8") as file:
                file.write(order + "\n")
        return f"refunded {order}"
    if isinstance(answer, AcceptedElicitation):
        return f"kept {order}: the customer said no"
    return f"kept {order}: the customer answered {answer.action}"


@app.tool()
def ship(order: str, to: Annotated[Address, Resolve(ask_address)]) -> str:
    """Ship an order (asks where to)."""
    return f"shipped {order} to {to.street}, {to.city}"


@app.tool()
def refunds() -> int:
    """How many refunds were made."""
    return len(made)


if __name__ == "__main__":
    app.run("stdio")
