"""The offline demo: a SkyWings customer-service agent over an in-memory data set.

Its data (``data``), tools (``tools``) and the scripted model's replies (``script``)
live here; it may import the agents (``agents.react``, ``agents.tool_calling``,
``agents.models``), ``toolchain`` and ``formats``. The CLI and the evals' ``airline``
toolset import it.

>>> from agents.demo import build_demo
>>> demo = build_demo()
>>> result = demo.agent.run_sync(demo.task)
>>> result.stopped_by, demo.data.bookings["BK001"].flight_number
('answer', 'AA102')

``build_demo(native=True)`` runs the same steps through ``ToolCallingAgent``, the
model calling the tools through its API's tool calling:

>>> demo = build_demo(native=True)
>>> result = demo.agent.run_sync(demo.task)
>>> result.stopped_by, demo.data.bookings["BK001"].flight_number
('answer', 'AA102')
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Literal

from agents.demo.data import DEMO_TODAY, AirlineData
from agents.demo.script import DEMO_TASK, demo_native_replies, demo_outputs
from agents.demo.tools import airline_tools
from agents.models import Model, ScriptedModel
from agents.react import ReActAgent
from agents.tool_calling import ToolCallingAgent
from formats import MarkdownFormat, TextFormat, XMLFormat
from toolchain import JSONToolChain, ToolChain, YAMLToolChain

__all__ = ["DEMO_TASK", "DEMO_TODAY", "AirlineData", "Demo", "build_demo"]

BEHAVIOR = """\
You are a customer service agent for SkyWings Airlines. You help customers with their
bookings: flight information, rescheduling and policy questions.

Before changing a booking: verify the customer and the booking, read the change policy,
find the alternatives, and only change it if the customer agreed to the fees."""

CRITICAL_RULES = """\
- Every fact in your answer must come from a tool result or from the customer.
- Never invent IDs, prices, times or seat numbers.
- If something is missing, say so."""


@dataclass(frozen=True, slots=True)
class Demo:
    agent: ReActAgent[str] | ToolCallingAgent[str]
    data: AirlineData
    task: str


def build_demo(
    *,
    text_format: Literal["markdown", "xml"] = "xml",
    calls: Literal["json", "yaml"] = "yaml",
    model: Model | str | None = None,
    native: bool = False,
    approvals: bool = False,
) -> Demo:
    """The demo agent, on ``ScriptedModel`` unless a model (or model string) is given.

    ``native`` builds a ``ToolCallingAgent`` (tools as API tool specs, each call answered
    by its own tool message) instead of a ``ReActAgent``; ``calls`` is then how tool
    outputs are serialised, and ``text_format`` shapes the system prompt. ``approvals``
    makes ``reschedule_booking`` wait for a person (``requires_approval``): the run
    pauses before the change, as the playground (``python -m agents web``) shows.
    """
    fmt: TextFormat = MarkdownFormat() if text_format == "markdown" else XMLFormat()
    chain: ToolChain = JSONToolChain() if calls == "json" else YAMLToolChain()
    data = AirlineData.fresh()
    for tool in airline_tools(data):
        if approvals and tool.name == "reschedule_booking":
            tool.requires_approval = True
        chain.register_tool(tool)
    if native:
        scripted = ScriptedModel(demo_native_replies(), name="scripted-demo")
    else:
        scripted = ScriptedModel(demo_outputs(fmt, calls), name="scripted-demo")
    agent_class = ToolCallingAgent if native else ReActAgent
    agent = agent_class(
        model if model is not None else scripted,
        tool_chain=chain,
        text_format=fmt,
        behavior=BEHAVIOR,
        critical_rules=CRITICAL_RULES,
        clock=lambda: DEMO_TODAY if model is None else dt.date.today(),
        name="skywings",
    )
    return Demo(agent, data, DEMO_TASK)
