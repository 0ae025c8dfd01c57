"""The playground: one static chat page, and the AG-UI endpoint it talks to.

``GET /`` is ``static/playground.html`` (shipped in the wheel; plain HTML and JavaScript,
no build step, nothing loaded from elsewhere: it works offline and on a machine with no
internet), ``POST /agui`` the `agents.ui.ag_ui_app` route. The page keeps the sealed
state each run's ``STATE_SNAPSHOT`` gives it and sends it back with the next message,
shows each tool call with its arguments and result as it happens, approve and deny
buttons for held calls (the next request's ``resume``), and the run's tokens and
savings.
"""

from __future__ import annotations

from html import escape
from importlib.resources import files

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from agents.ui._ag_ui import ag_ui_endpoint
from agents.ui._runs import Bounds, Runner, UIAgent
from toolchain.runtime import Seal

__all__ = ["playground_app_of"]

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
