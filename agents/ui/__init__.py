"""Agents in front of people: a run streamed to a chat page (extra ``[ui]``).

- `ag_ui_app(agent)`: an ASGI app (Starlette) speaking AG-UI: ``POST`` a
  ``RunAgentInput``, read the run as AG-UI events (``_ag_ui``);
- `ai_sdk_app(agent)`: the same run as the Vercel AI SDK's UI message stream, for
  ``useChat`` (``_ai_sdk``);
- `playground_app(agent)`: one static page (``static/playground.html``, no build step,
  nothing from a CDN) that talks AG-UI to the agent: the conversation, each tool call
  with its arguments and result as it happens, approve/deny buttons for held calls,
  and the run's tokens and savings (``_playground``); ``python -m agents web`` serves
  it on the offline demo agent.

Behind them: ``_runs`` (a run as protocol-neutral UI events, within the app's bounds:
request size, runs at once, a run's time; a client that goes away cancels its run),
``_state`` (the conversation handed to the client and back, sealed with the core's
``Seal``), ``_wire`` (what both protocols read and write alike) and ``_http`` (the
body limit and an event stream that notices a disconnect).

Both agents work (``ReActAgent``, ``ToolCallingAgent``). Calls held for approval are the
protocol's interrupt (AG-UI) or tool-approval request (AI SDK), an MCP server's question
an ``input_required`` interrupt or a ``data-elicitation`` part; the next request carries
the decisions or the answer and the run resumes, streamed (``agent.resume_stream``):
paused runs live in the server's process, so serve one process (or route a thread to the
process that paused it).

>>> from agents import ReActAgent, ScriptedModel
>>> from agents.ui import ag_ui_app
>>> app = ag_ui_app(ReActAgent(ScriptedModel(["<answer>hi</answer>"])))
>>> type(app).__name__
'Starlette'
"""

from __future__ import annotations

import secrets
from typing import TypedDict

from typing_extensions import Unpack

from toolchain.runtime import Seal, requires_extra

# The extra's modules are imported first, inside this: without them the error names
# `pip install 'gent-py[ui]'`.
with requires_extra("ui", "agents.ui", "starlette", "ag_ui", "anyio"):
    from starlette.applications import Starlette

    from agents.ui._ag_ui import ag_ui_app_of
    from agents.ui._ai_sdk import ai_sdk_app_of
    from agents.ui._playground import playground_app_of
from agents.ui._runs import Bounds, UIAgent
from agents.ui._state import StateRefused

__all__ = ["StateRefused", "UIOptions", "ag_ui_app", "ai_sdk_app", "playground_app"]


class UIOptions(TypedDict, total=False):
    """The options every app takes (`ag_ui_app`, `ai_sdk_app`, `playground_app`).

    >>> options: UIOptions = {"max_runs": 2, "run_timeout": 60.0}
    """

    secret: bytes
    """Seals the conversation state handed to the client (default: a key of this app,
    so state sealed by one server process is refused by another: give every process
    the same secret behind a load balancer; paused runs still live in the process
    that paused them)."""
    max_body: int
    """A request's body in bytes (default 1,000,000): 413 past it."""
    max_runs: int
    """Runs going at once (default 8): 429 past it."""
    run_timeout: float | None
    """A run's seconds (default 300; None: the agent's own limits only): then it is
    cancelled, and ends with the protocol's error (``run_timeout``)."""
    max_paused: int
    """Paused runs kept for a decision (default 256): the oldest is dropped past it."""


def _parts(options: UIOptions) -> tuple[Bounds, Seal]:
    bounds = Bounds(
        options.get("max_body", 1_000_000),
        options.get("max_runs", 8),
        options.get("run_timeout", 300.0),
        options.get("max_paused", 256),
    )
    secret = options.get("secret")
    return bounds, Seal(secrets.token_bytes(32) if secret is None else secret)


def ag_ui_app(agent: UIAgent, **options: Unpack[UIOptions]) -> Starlette:
    """An ASGI app that runs ``agent`` for AG-UI clients: ``POST /`` with a
    ``RunAgentInput``, the run streamed back as AG-UI events (`UIOptions`: its bounds
    and its key).

    >>> from agents import ReActAgent, ScriptedModel
    >>> app = ag_ui_app(ReActAgent(ScriptedModel(["<answer>hi</answer>"])), max_runs=2)
    >>> [route.path for route in app.routes]
    ['/']
    """
    return ag_ui_app_of(agent, *_parts(options))


def ai_sdk_app(agent: UIAgent, **options: Unpack[UIOptions]) -> Starlette:
    """An ASGI app that runs ``agent`` for the Vercel AI SDK's ``useChat``: ``POST /``
    with ``{"id", "messages"}``, the run streamed back as the UI message stream
    (``x-vercel-ai-ui-message-stream: v1``; `UIOptions` as `ag_ui_app`'s).

    >>> from agents import ReActAgent, ScriptedModel
    >>> app = ai_sdk_app(ReActAgent(ScriptedModel(["<answer>hi</answer>"])))
    >>> [route.path for route in app.routes]
    ['/']
    """
    return ai_sdk_app_of(agent, *_parts(options))


def playground_app(agent: UIAgent, **options: Unpack[UIOptions]) -> Starlette:
    """The playground: ``GET /`` is the chat page, ``POST /agui`` the `ag_ui_app` it
    talks to (`UIOptions` as `ag_ui_app`'s).

    >>> from agents import ReActAgent, ScriptedModel
    >>> app = playground_app(ReActAgent(ScriptedModel(["<answer>hi</answer>"])))
    >>> sorted(route.path for route in app.routes)
    ['/', '/agui']
    """
    return playground_app_of(agent, *_parts(options))
