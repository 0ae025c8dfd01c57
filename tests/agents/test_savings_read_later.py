"""``AgentResult.savings`` worked out when first read, from what the run noted as it
went (``agents/_savings.py``): the figures are those of what each request showed, even
where the run's state has moved on since (a variable's name dropped or reused, a chain
whose tools may change).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pytest

from agents import AgentResult, Savings
from agents._savings import _only_grows  # pyright: ignore[reportPrivateUsage]  # the rule itself
from agents.events import StepFinished
from agents.models import ScriptedModel
from tests.agents.test_savings import (
    TOPICS,
    Step,
    _topic_tool,  # pyright: ignore[reportPrivateUsage]  # the discovery test's tools
    get_weather,
    player,
)
from tests.support.agent_kinds import KINDS, Kind, agent
from toolchain import ExecutionContext, JSONToolChain, Tool
from toolchain.discovery import ToolSearch
from toolchain.variables import ToolVariables


def _same_name(tool: str, args: Mapping[str, Any], value: object) -> str:
    return "weather"  # every output under one name: each takes it from the last


def _variables_run(
    kind: Kind, variables: ToolVariables
) -> tuple[AgentResult[str], ExecutionContext, dict[str, str | None]]:
    """Two weather calls, then an answer; each call's name as its step ended."""
    steps: list[Step] = [
        lambda seen: ("get_weather", {"city": "Oslo"}),
        lambda seen: ("get_weather", {"city": "Rome"}),
        lambda seen: "Rome is warmer.",
    ]
    ctx = ExecutionContext()
    shown: dict[str, str | None] = {}

    def note(event: StepFinished) -> None:
        for result in event.step.tool_results:
            for seen in result.observations:
                shown[seen.id] = variables.named(event.ctx, seen.id)

    ctx.events.subscribe(StepFinished, note)
    chain = JSONToolChain(extensions=[variables]).register_tool(get_weather)
    model = ScriptedModel(player(kind, steps))
    result = agent(kind, model, chain, extensions=[variables]).run_sync("Go", ctx=ctx)
    assert result.ok, result.stopped_by
    return result, ctx, shown


@KINDS
@pytest.mark.parametrize(
    "make",
    [lambda: ToolVariables(max_variables=1), lambda: ToolVariables(naming=_same_name)],
    ids=["dropped", "reused"],
)
def test_a_name_gone_when_the_savings_are_read_counts_as_it_was_shown(
    kind: Kind, make: Callable[[], ToolVariables], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The first output's name is gone by the run's end (dropped past max_variables, or
    # taken by the second output): the variables no longer name its call, and its
    # output is written again to compare with. The figure is the one counted with the
    # name it was shown with.
    variables = make()
    result, ctx, shown = _variables_run(kind, variables)
    assert len(shown) == 2 and all(shown.values())  # both named as they were shown
    gone = [call_id for call_id, name in shown.items() if variables.named(ctx, call_id) != name]
    assert len(gone) == 1
    read_later = result.savings["tool_variables"]
    assert read_later.cost > 0

    # The same run, read with each call named as it was shown.
    again = make()
    same, _, shown_again = _variables_run(kind, again)

    def as_shown(self: ToolVariables, ctx: ExecutionContext, call_id: str) -> str | None:
        return shown_again.get(call_id)

    monkeypatch.setattr(ToolVariables, "named", as_shown)
    assert same.savings == {"tool_variables": read_later}


@KINDS
def test_names_kept_to_the_end_are_read_as_shown(kind: Kind) -> None:
    variables = ToolVariables()
    result, ctx, shown = _variables_run(kind, variables)
    assert all(variables.named(ctx, call_id) == name for call_id, name in shown.items())
    saved = result.savings["tool_variables"]
    assert saved.cost > 0 and saved.kept_out == 0  # two names, nothing passed by reference


class _ReplacingChain(JSONToolChain):
    """A chain whose own ``register_tool`` may put another tool under a name it has."""

    def register_tool(self, tool: Tool[Any, Any]) -> _ReplacingChain:
        return super().register_tool(tool)


def test_only_a_chain_that_only_gains_tools_is_read_when_the_savings_are() -> None:
    assert _only_grows(JSONToolChain())
    assert _only_grows(JSONToolChain().with_tools([get_weather]))
    assert not _only_grows(_ReplacingChain())


@KINDS
def test_a_chain_read_at_each_step_counts_what_one_read_later_does(kind: Kind) -> None:
    # The step's tools are worked out as the step is told for a chain that may replace
    # them (`_only_grows` False), when the savings are read for one that only gains
    # tools: on the same run, the same figures.
    def searched(chain_type: type[JSONToolChain]) -> Savings:
        tools = [_topic_tool(topic) for topic in TOPICS]
        steps: list[Step] = [
            lambda seen: ("tool_search", {"query": "latest tides figures"}),
            lambda seen: ("lookup_tides", {"query": "Bergen"}),
            lambda seen: "No news.",
        ]
        search = ToolSearch(tools, defer=True)
        chain = chain_type(extensions=[search])
        model = ScriptedModel(player(kind, steps))
        result = agent(kind, model, chain, extensions=[search]).run_sync("Go")
        assert result.ok, result.stopped_by
        return result.savings["tool_search"]

    later = searched(JSONToolChain)
    now = searched(_ReplacingChain)
    assert later == now
    assert later.kept_out > later.cost > 0
