"""``python -m agents web``: what it serves, and what it says when ``--agent`` names
something it cannot serve (the page itself is tested in a browser,
``test_playground_in_browser.py``)."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from agents import ReActAgent, ScriptedModel
from agents.cli import main
from agents.ui._playground import demo_agent, load_agent


def support() -> ReActAgent[str]:
    """A factory ``--agent`` may name."""
    return ReActAgent(ScriptedModel(["<answer>hi</answer>"]), name="support")


@pytest.mark.parametrize(
    ("spec", "said"),
    [
        ("nope", "error: --agent takes module:attribute, not 'nope'"),
        ("tests.agents.ui.no_such_module:agent", "error: --agent tests.agents.ui.no_such"),
        (
            "agents.demo:DEMO_TASK",
            "error: --agent agents.demo:DEMO_TASK is a str, not a ReActAgent or "
            "ToolCallingAgent (or a function of no arguments making one)",
        ),
        (
            "agents:ReActAgent",
            "error: --agent agents:ReActAgent is the class ReActAgent, not a ReActAgent",
        ),
    ],
)
def test_an_agent_it_cannot_serve_is_a_usage_error(spec: str, said: str) -> None:
    out = io.StringIO()
    status = main(["web", "--agent", spec], console=Console(file=out, width=300))
    assert status == 2
    assert out.getvalue().startswith(said)


def test_an_agent_or_a_factory_is_served() -> None:
    assert load_agent("tests.agents.ui.test_web_command:support").name == "support"


def test_the_offline_demo_replays_for_every_conversation() -> None:
    agent = demo_agent()
    first = agent.run_sync("Move my flight")
    assert first.stopped_by == "paused"
    assert [request.tool for request in first.pending] == ["reschedule_booking"]
    again = agent.run_sync("Move my flight")  # another conversation: the script again
    assert again.stopped_by == "paused" and again.stats["model_calls"] == 4
