"""Hooks change calls, observers only watch: refuse a call, time every call.

Run: python examples/hooks.py
"""

from __future__ import annotations

from formats import XMLFormat
from toolchain import (
    ExecutionContext,
    JSONToolChain,
    ToolCall,
    ToolCallFinished,
    ToolCallRefused,
    ToolHook,
    tool,
)


class NoDeletes(ToolHook):
    def before_tool_call(self, ctx: ExecutionContext, call: ToolCall) -> ToolCall | None:
        if call.name.startswith("delete_"):
            raise ToolCallRefused("deleting needs a human's approval")
        return None  # keep the call as it is (or return a rewritten ToolCall)


@tool
def delete_booking(booking_id: str) -> str:
    """Delete a booking."""
    return f"deleted {booking_id}"


@tool
def get_booking(booking_id: str) -> dict[str, str]:
    """Look a booking up."""
    return {"booking": booking_id, "flight": "AA102"}


def main() -> None:
    ctx = ExecutionContext()
    ctx.hooks.add(NoDeletes())  # ordered; may rewrite arguments, refuse, replace results
    ctx.events.subscribe(ToolCallFinished, lambda event: print("observed:", event.name))
    chain = JSONToolChain().register_tool(delete_booking).register_tool(get_booking)
    action = (
        '[{"tool": "delete_booking", "args": {"booking_id": "BK001"}},'
        ' {"tool": "get_booking", "args": {"booking_id": "BK001"}}]'
    )
    result = chain.execute_sync(ctx, action, XMLFormat())
    print(result.text)
    error = result.raw.errors[0]
    print("refused:", error is not None and error.kind == "refused")
    print("flight:", result.raw.output(1, dict)["flight"])


if __name__ == "__main__":
    main()
