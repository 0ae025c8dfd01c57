# agents.otel: runs as OpenTelemetry spans by the GenAI semantic conventions (extra [otel]).
#
# What lives here, one job a module (each imports only those listed before it):
#   _seam         the watchers the engine tells when a run starts (imports no OpenTelemetry)
#   _conventions  the conventions' span and attribute names, and our values in them
#   _ending       the thread spans end on, off every run's event loop
#   _content      messages, arguments and results as the opt-in content attributes, redacted
#   _extensions   extension events (relay, discovery, variables, MCP) as notes on spans
#   _calls        CallSpans: the spans of a run's tool calls, and extensions' notes on them
#   _run          RunSpans: one run's spans, made from the events on its context
#   _instrument   the watcher that starts each run's spans; instrument and uninstrument
#
# May import: agents' events, models and steps; toolchain's public names, its extensions'
# events (only once their package is loaded) and its redactor; OpenTelemetry's API (from
# _calls on). The engine imports _seam, so importing agents imports this package but
# never OpenTelemetry: instrument() loads it.
"""Every run as OpenTelemetry spans, by the GenAI semantic conventions (extra ``[otel]``).

One call, and every run from then on (both agents, ``run_prompt``, sub-agents,
composite sub-calls, MCP calls) emits spans::

    from agents.otel import instrument

    instrument()  # the global tracer provider; or instrument(provider)

- ``invoke_agent {name}`` (INTERNAL): one per run, with ``gen_ai.agent.name``,
  ``gen_ai.provider.name``, ``gen_ai.request.model``, the run's tokens
  (``gen_ai.usage.input_tokens`` / ``output_tokens``) and how it stopped
  (``gent.run.stopped_by``, ``gent.run.steps``).
- ``chat {model}`` (CLIENT): one per model call, with the request options
  (``gen_ai.request.temperature``, ``max_tokens``, ``top_p``, ``stop_sequences`` …),
  ``gen_ai.request.stream``, ``gen_ai.response.model``, ``gen_ai.response.id``,
  ``gen_ai.response.finish_reasons``, the call's tokens, and ``server.address`` and
  ``server.port`` of the endpoint (a model with a ``base_url``: the OpenAI and Anthropic
  adapters; a ``ScriptedModel`` has none).
- ``execute_tool {name}`` (INTERNAL): one per tool call, with ``gen_ai.tool.name``,
  ``gen_ai.tool.call.id`` and ``gen_ai.tool.description``. A composite's sub-calls are
  its children, and so is a sub-agent's ``invoke_agent`` span; an MCP tool's request
  is a child ``tools/call {tool}`` span (CLIENT) with ``mcp.method.name``,
  ``network.transport`` and the server's address.

A span that failed has status ERROR, a message (redacted) and ``error.type``; a failed
tool call's message (or an MCP request's) says only the tool and the kind unless
content is captured, as the error's own text may quote the arguments:

- ``chat``: the HTTP status (``401``, ``429``, ``500`` …) when the server answered
  one, else the ``ModelError`` class (``ModelCallError``, ``ModelTimeoutError`` …),
  ``timeout`` (the run's time limit), ``cancelled``, or the class a broken model raised;
- ``execute_tool``: the call's ``ToolCallError`` kind (``tool_error``,
  ``invalid_arguments``, ``unknown_tool``, ``timeout``, ``cancelled``, ``refused``,
  ``hook_error``, ``output_error``, ``parse``, ``limit``);
- ``invoke_agent``: the limit that ended the run (``max_steps``, ``timeout``,
  ``max_tool_calls`` …), ``cancelled``, the failed model call's ``error.type``, or
  ``_OTHER``; a run that paused for a person is no error;
- ``tools/call``: ``tool_error`` (the server or the connection failed the call),
  ``cancelled``;
- any of them, ``abandoned``: the run's context was dropped before its end was told.

Extensions add what they know: ``gent.relay.tokens_kept`` (o200k tokens an output the
relay boxed kept out of each later request; summed on the run), ``gent.tool_search.found``
and ``activated`` on a ``tool_search`` call, ``gent.tool_search.deferred_tools`` and
``tokens_kept`` on each model call whose request left deferred tool definitions out,
``gent.variables.resolved`` on a call whose arguments named variables, and
``gent.approval.outcome`` (``held``, ``approved``, ``denied``) and ``decided_by`` on a
call that needed approval.

Contents (messages, system instructions, tool definitions, arguments, results, the
answer) are recorded only with ``capture_content=True``: the conventions' opt-in
``gen_ai.input.messages``, ``gen_ai.output.messages``, ``gen_ai.system_instructions``,
``gen_ai.tool.definitions``, ``gen_ai.tool.call.arguments`` and
``gen_ai.tool.call.result``, as JSON text. Credentials never are, whatever the switch:
every string is redacted first (``toolchain._redact.redact``), the value of a field
named like a credential (``password``, ``x-api-key``, ``token`` …) is blanked at any
depth, and request headers are never recorded. A ``chat`` span records only the
messages new to it (``gent.chat.earlier_messages`` counts those an earlier one did),
and each content attribute holds at most 32 KiB of JSON (what was cut is noted:
``gent.content.cut_chars``), so a run's spans grow linearly with its steps.

It rides on the observer channel (``ctx.events``): it never changes a run, and a span
or exporter that fails is logged (``agents.otel``, or the SDK's own logger) while the
run goes on. Spans end on a thread of their own: an exporter that blocks never holds
a run's event loop, and a run waits for its spans as it ends until its deadline at
most (5 s without one). Before ``instrument()`` a run pays one check, and ``import agents`` does
not import OpenTelemetry.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolchain.runtime import requires_extra

if TYPE_CHECKING:
    from opentelemetry.trace import TracerProvider

__all__ = ["instrument", "uninstrument"]


def instrument(
    tracer_provider: TracerProvider | None = None, capture_content: bool = False
) -> None:
    """Make every run from now on emit spans (see the module text).

    ``tracer_provider``: where the spans go (None: OpenTelemetry's global provider,
    ``opentelemetry.trace.set_tracer_provider``). ``capture_content``: record what was
    said too (messages, arguments, results), redacted. Calling it again replaces the
    earlier settings. Needs the ``[otel]`` extra (``opentelemetry-api``).
    """
    with requires_extra("otel", "agents.otel", "opentelemetry"):
        from agents.otel._instrument import start
    start(tracer_provider, capture_content=capture_content)


def uninstrument() -> None:
    """Stop: runs that start from now on emit no spans (those running finish theirs).
    Spans that ended are exported first (waiting 5 s at most)."""
    from agents.otel._seam import WATCHERS

    if WATCHERS:
        from agents.otel._instrument import stop

        stop()
