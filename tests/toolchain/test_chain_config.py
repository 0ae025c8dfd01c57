"""An action runs with the chain as it was when the action started (``ChainConfig``).

The stages read one frozen configuration, made when the chain changed, and an action
takes it once: a tool registered, or an option set, while an action runs (by one of
its own tools, say) is the next action's, never this one's.
"""

from __future__ import annotations

from pydantic import BaseModel

from formats import XMLFormat
from toolchain import ExecutionContext, JSONToolChain, Tool, ToolResult, tool


@tool
def late(text: str) -> str:
    """A tool registered while an action runs."""
    return f"late: {text}"


class NoInput(BaseModel):
    pass


class Registrar(Tool[NoInput, str]):
    """Registers ``late`` on the chain when called, and returns at once (no suspension:
    the action's next call is checked right after it)."""

    name = "registrar"
    description = "Registers another tool."

    def __init__(self, chain: JSONToolChain) -> None:
        self.chain = chain

    async def call(self, ctx: ExecutionContext, input: NoInput) -> ToolResult[str]:
        self.chain.register_tool(late)
        self.chain.max_output_chars = 3  # an option set mid-action: the next action's too
        return ToolResult("registered late")


ACTION = '[{"tool": "registrar", "args": {}}, {"tool": "late", "args": {"text": "hi"}}]'


def test_a_tool_registered_while_an_action_runs_is_the_next_actions() -> None:
    chain = JSONToolChain()
    chain.register_tool(Registrar(chain))
    ctx = ExecutionContext()
    first = chain.execute_sync(ctx, ACTION, XMLFormat())
    assert first.observations[0].text == "registered late"  # 3 characters came later
    error = first.raw.errors[1]
    assert error is not None and error.kind == "unknown_tool"
    assert error.message == "unknown tool 'late'. Available tools: registrar"
    assert first.raw.results[1] is None  # late never ran in the action that registered it
    again = chain.execute_sync(ctx, '{"tool": "late", "args": {"text": "hi"}}', XMLFormat())
    assert again.raw.errors == (None,)
    assert again.observations[0].text.startswith("lat\n[output truncated: 3 of 8 characters")


def test_a_view_made_before_a_registration_offers_the_new_tool_from_its_next_action() -> None:
    chain = JSONToolChain()
    view = chain.with_tools([late])
    chain.register_tool(echo)
    assert list(view.tools) == ["echo", "late"]
    assert list(view.narrowed(["echo"]).tools) == ["echo"]
    assert list(chain.tools) == ["echo"]


@tool
def echo(text: str) -> str:
    """Return the text as it is."""
    return text
