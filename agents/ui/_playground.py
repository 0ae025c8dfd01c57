"""The playground: one static chat page, and the AG-UI endpoint it talks to.

``GET /`` is ``static/playground.html`` (shipped in the wheel; plain HTML and JavaScript,
no build step, nothing loaded from elsewhere: it works offline and on a machine with no
internet), ``POST /agui`` the `agents.ui.ag_ui_app` route. The page keeps the sealed
state each run's ``STATE_SNAPSHOT`` gives it and sends it back with the next message,
shows each tool call with its arguments and result as it happens, approve and deny
buttons for held calls (the next request's ``resume``), an MCP server's question as a
form built from its schema (string, number, integer, boolean and enum fields; anything
else as JSON), and the run's tokens and savings.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from html import escape
from importlib.resources import files

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from agents._errors import AgentValueError
from agents.demo import build_demo
from agents.demo.script import demo_native_replies, demo_outputs
from agents.models import Message, ScriptedModel, ScriptedReply
from agents.react import ReActAgent
from agents.tool_calling import ToolCallingAgent
from agents.ui._ag_ui import ag_ui_endpoint
from agents.ui._runs import Bounds, Runner, UIAgent
from toolchain.runtime import Seal

__all__ = ["demo_agent", "load_agent", "playground_app_of"]

# The page forbids every source but this server (no CDN can be reached by mistake).
_POLICY = (
    "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'unsafe-inline'; "
    "connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'"
)


def playground_app_of(agent: UIAgent, bounds: Bounds, seal: Seal) -> Starlette:
    """The Starlette app of `agents.ui.playground_app`."""
    page = files("agents.ui").joinpath("static", "playground.html").read_text(encoding="utf-8")
    title = f"{agent.name} · {agent.model.name}"
    page_html = page.replace("{{title}}", escape(title))

    async def index(request: Request) -> HTMLResponse:
        return HTMLResponse(page_html, headers={"content-security-policy": _POLICY})

    agui = ag_ui_endpoint(Runner(agent, bounds), seal)
    return Starlette(
        routes=[
            Route("/", index, methods=["GET"]),
            Route("/agui", agui.endpoint, methods=["POST"]),
        ]
    )


def demo_agent(*, native: bool = False, model: str | None = None) -> UIAgent:
    """The SkyWings demo agent for the playground: ``reschedule_booking`` waits for a
    person's approval. Offline (``model`` None) its scripted model replays the demo's
    steps for every conversation, not once per process as the CLI demo's does: the
    step it plays is the number of its replies so far in the conversation (modulo the
    script's length)."""
    demo = build_demo(native=native, approvals=True, model=model)
    if model is None:
        agent = demo.agent
        replies = demo_native_replies() if native else demo_outputs(agent.text_format, "yaml")

        def replay(messages: Sequence[Message]) -> str | ScriptedReply:
            said = sum(1 for message in messages if message.role == "assistant")
            return replies[said % len(replies)]

        agent.model = ScriptedModel(replay, name="scripted-demo")
        return agent
    return demo.agent


def _kind(found: object) -> str:
    return f"the class {found.__name__}" if isinstance(found, type) else f"a {type(found).__name__}"


def load_agent(spec: str) -> UIAgent:
    """The agent ``module:attribute`` names: an agent, or a function of no arguments
    that makes one. `AgentValueError` saying what is wrong otherwise."""
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise AgentValueError(f"--agent takes module:attribute, not {spec!r}")
    try:
        found: object = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as error:
        raise AgentValueError(f"--agent {spec}: {error}") from None
    if not isinstance(found, ReActAgent | ToolCallingAgent | type) and callable(found):
        try:
            found = found()
        except Exception as error:
            raise AgentValueError(f"--agent {spec}() failed: {error}") from error
    if not isinstance(found, ReActAgent | ToolCallingAgent):
        raise AgentValueError(
            f"--agent {spec} is {_kind(found)}, not a ReActAgent or "
            "ToolCallingAgent (or a function of no arguments making one)"
        )
    # Any agent serves, whatever its answer type: pyright reads isinstance's Unknown.
    agent: UIAgent = found  # pyright: ignore[reportUnknownVariableType]
    return agent
