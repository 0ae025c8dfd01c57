"""``chain.with_tools``: a chain offering more tools, the chain itself unchanged.

A view shares the chain's options and tools (those registered later too), runs its
added tools through the same stages, and never writes to the chain; what a view
registers goes to the chain; an added tool keeps its name against a chain tool
registered later under it.
"""

from __future__ import annotations

import pytest

from formats import XMLFormat
from toolchain import DuplicateToolError, ExecutionContext, JSONToolChain, YAMLToolChain, tool


@tool
def ping() -> str:
    """Check the service is up."""
    return "pong"


@tool
def restart(service: str) -> str:
    """Restart a service."""
    return f"restarted {service}"


@tool
def status() -> str:
    """The service's status."""
    return "up"


def _run(chain: JSONToolChain | YAMLToolChain, action: str) -> list[str]:
    result = chain.execute_sync(ExecutionContext(), action, XMLFormat())
    shown: list[str] = []
    for found, error in zip(result.raw.results, result.raw.errors, strict=True):
        shown.append(str(found.output) if found is not None else str(error and error.message))
    return shown


def test_a_view_runs_its_tools_with_the_chains_options_and_leaves_the_chain_as_it_was() -> None:
    chain = YAMLToolChain(max_output_chars=5).register_tool(ping)
    view = chain.with_tools([restart])
    assert type(view) is YAMLToolChain and view.max_output_chars == 5
    action = "- tool: ping\n- tool: restart\n  args: {service: web}"
    shown = view.execute_sync(ExecutionContext(), action, XMLFormat()).text
    assert "<restart>\nresta\n[output truncated" in shown  # the chain's limit applies
    assert _run(chain, "- tool: restart\n  args: {service: web}") == [
        "unknown tool 'restart'. Available tools: ping"
    ]
    assert "restart" not in chain.available_tools_prompt()
    assert "- restart:" in view.available_tools_prompt()


def test_a_view_follows_the_chain_and_registers_on_it() -> None:
    chain = JSONToolChain().register_tool(ping)
    view = chain.with_tools([restart])
    view.register_tool(status)  # on the chain it views
    assert list(chain.tools) == ["ping", "status"]
    assert list(view.tools) == ["ping", "status", "restart"]
    with pytest.raises(DuplicateToolError):
        view.register_tool(restart)  # the view's own name is taken in the view
    # A view of a view adds to both, and follows the chain too.
    wider = JSONToolChain().register_tool(ping)
    narrow = wider.with_tools([restart])
    widest = narrow.with_tools([status])
    assert narrow.with_tools([restart]) is narrow
    wider.register_tool(tool(name="later", description="Registered later.")(lambda: "x"))
    assert list(widest.tools) == ["ping", "later", "restart", "status"]
    assert list(narrow.tools) == ["ping", "later", "restart"]


def test_an_added_tool_keeps_its_name_against_a_later_chain_tool() -> None:
    chain = JSONToolChain().register_tool(ping)
    view = chain.with_tools([restart])

    @tool(name="restart")
    def other_restart(service: str) -> str:
        """Restart a service the other way."""
        return f"other {service}"

    chain.register_tool(other_restart)  # the chain does not know the view's tools
    action = '{"tool": "restart", "args": {"service": "db"}}'
    assert _run(view, action) == ["restarted db"]
    assert _run(chain, action) == ["other db"]
    assert list(view.tools) == ["ping", "restart"] and view.tools["restart"] is restart


def test_offering_tools_the_chain_has_gives_the_chain_and_a_clash_is_refused() -> None:
    chain = JSONToolChain().register_tool(ping)
    assert chain.with_tools([]) is chain and chain.with_tools([ping]) is chain

    @tool(name="ping")
    def other_ping() -> str:
        """Another ping."""
        return "pong?"

    with pytest.raises(DuplicateToolError, match="a tool named 'ping' is already registered"):
        chain.with_tools([other_ping])

    @tool(name="restart")
    def restart_again(service: str) -> str:
        """Restart a service again."""
        return service

    with pytest.raises(DuplicateToolError, match="a tool named 'restart' is already registered"):
        chain.with_tools([restart, restart_again])


# -- narrowed: fewer tools callable, the chain unchanged ----------------------------------


def test_a_narrowed_view_refuses_a_tool_it_left_out_and_never_runs_it() -> None:
    chain = JSONToolChain().register_tool(ping).register_tool(restart)
    step = chain.narrowed(["ping"])
    action = '[{"tool": "restart", "args": {"service": "web"}}, {"tool": "ping"}]'
    assert _run(step, action) == [
        "the tool 'restart' is not available now. Available tools: ping",
        "pong",
    ]
    assert _run(step, '{"tool": "reboot"}') == ["unknown tool 'reboot'. Available tools: ping"]
    assert list(step.tools) == ["ping"]
    assert "- restart:" not in step.available_tools_prompt()
    # The chain itself is untouched: it runs both, and lists both.
    assert _run(chain, action) == ["restarted web", "pong"]
    assert list(chain.tools) == ["ping", "restart"]


def test_narrowing_to_every_tool_is_the_chain_itself_and_views_narrow_further() -> None:
    chain = JSONToolChain().register_tool(ping).register_tool(restart)
    assert chain.narrowed(["ping", "restart"]) is chain
    assert chain.narrowed(["restart", "ping", "extra"]) is chain
    admin = chain.with_tools([status])
    step = admin.narrowed(["status", "ping"])
    assert list(step.tools) == ["ping", "status"]
    assert list(step.narrowed(["status"]).tools) == ["status"]
    assert _run(step, '{"tool": "status"}') == ["up"]


def test_a_narrowed_view_follows_the_chain_and_registers_on_it() -> None:
    chain = JSONToolChain().register_tool(ping)
    step = chain.narrowed([])
    step.register_tool(status)  # on the chain it views, and not active in the view
    assert list(chain.tools) == ["ping", "status"]
    assert list(step.tools) == []
    assert _run(step, '{"tool": "status"}') == [
        "the tool 'status' is not available now. Available tools: (none)"
    ]
