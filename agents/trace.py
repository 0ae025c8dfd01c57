"""Traces of a run, written from the observer events on its context (``ctx.events``).

- `JSONLTraceWriter`: one JSON object per event, for programs: ``{"event":
  "ToolCallFinished", "t": 0.0123, "run": "...", ...}``, where ``t`` is seconds since the
  writer was attached. Media bytes are base64. The last line of a run is its
  ``RunFinished`` (how it stopped, the answer, the limit or error).
- `ConsoleTraceWriter`: the same run as plain text for people, as it happens: each step,
  the model's reply, each tool call with its result or error, rejected replies, and the
  answer or why the run stopped.

Attach either to the context a run uses (``agent.run(task, ctx=ctx)``); both may watch
one run. Every string written (arguments, outputs, messages, answers, exception texts)
goes through `toolchain._redact.redact` first, so a trace never holds an API key, a bearer
token or a value a model adapter sent as a credential; the values of a step's extra HTTP
headers (``GenerateOptions.headers``) are written as ``[REDACTED]`` whatever they look
like, their names kept.
"""

from __future__ import annotations

import dataclasses
import sys
import threading
import time
from collections.abc import Callable
from typing import IO, Any, TypeGuard

import msgspec

from agents.events import (
    AfterModelCall,
    BeforeModelCall,
    OutputRejected,
    RunFinished,
    StepFinished,
    StepReady,
    StepStarted,
)
from agents.models import GenerateOptions
from agents.result import AgentResult
from agents.steps import StepRequest
from toolchain import ExecutionContext, ToolCallFinished, ToolCallParseFailed, ToolCallStarted
from toolchain.runtime import REDACTED, escape_controls, redact, redact_data

__all__ = ["TRACED_EVENTS", "ConsoleTraceWriter", "JSONLTraceWriter"]

TRACED_EVENTS: tuple[type[object], ...] = (
    StepStarted,
    StepReady,
    BeforeModelCall,
    AfterModelCall,
    OutputRejected,
    ToolCallStarted,
    ToolCallFinished,
    ToolCallParseFailed,
    StepFinished,
    RunFinished,
)


def _enc_hook(value: Any) -> Any:
    if isinstance(value, BaseException):
        return f"{type(value).__name__}: {value}"
    return repr(value)


def _without_header_values(options: GenerateOptions) -> GenerateOptions:
    """``options`` with header values blanked: a secret of no known shape escapes `redact`."""
    if not options.headers:
        return options
    return dataclasses.replace(options, headers=dict.fromkeys(options.headers, REDACTED))


def _run_end(event: object) -> TypeGuard[RunFinished[Any]]:
    """Whether ``event`` tells a run's end (of any answer type: a trace takes them all)."""
    return isinstance(event, RunFinished)


def _ending(result: AgentResult[Any]) -> dict[str, object]:
    """How a run ended, without its conversation (the steps traced it already)."""
    return {
        "stopped_by": result.stopped_by,
        "answer": result.answer,
        "limit": result.limit,
        "error": result.error,
        "paused": result.paused,
        "steps": len(result.steps),
        "usage": result.usage,
    }


class JSONLTraceWriter:
    """Writes every traced event of a run to a text stream, one JSON object per line.

    >>> import io
    >>> from toolchain import ExecutionContext
    >>> out, ctx = io.StringIO(), ExecutionContext()
    >>> detach = JSONLTraceWriter(out).attach(ctx)
    >>> ctx.events.emit(StepStarted(ctx, 1))
    >>> detach()
    >>> '"event":"StepStarted"' in out.getvalue()
    True
    """

    def __init__(self, stream: IO[str], *, include_messages: bool = False) -> None:
        self._stream = stream
        self._include_messages = include_messages
        self._encoder = msgspec.json.Encoder(enc_hook=_enc_hook)
        self._lock = threading.Lock()
        self._started = time.perf_counter()

    def attach(self, ctx: ExecutionContext) -> Callable[[], None]:
        """Subscribe to ``ctx``'s events; returns a function that detaches."""
        removers = [ctx.events.subscribe(kind, self._write) for kind in TRACED_EVENTS]

        def detach() -> None:
            for remove in removers:
                remove()

        return detach

    def _write(self, event: object) -> None:
        record: dict[str, Any] = {
            "event": type(event).__name__,
            "t": round(time.perf_counter() - self._started, 6),
        }
        names = (
            [field.name for field in dataclasses.fields(event)]
            if dataclasses.is_dataclass(event) and not isinstance(event, type)
            else list(getattr(event, "__dict__", {}))
        )
        for name in names:
            value = getattr(event, name)
            if isinstance(value, ExecutionContext):
                record["run"] = value.run_id
            elif name == "messages" and not self._include_messages:
                record["messages"] = len(value)
            elif isinstance(value, StepRequest):
                record[name] = self._step(value)
            elif name == "result" and _run_end(event):
                record.update(_ending(event.result))
            else:
                record[name] = value
        # Plain data first (media bytes kept as bytes), so that every string can be
        # redacted before encoding; redacting the JSON text could break its escapes.
        plain = msgspec.to_builtins(record, builtin_types=(bytes,), enc_hook=_enc_hook)
        line = self._encoder.encode(redact_data(plain)).decode("utf-8")
        with self._lock:
            self._stream.write(line + "\n")
            self._stream.flush()

    def _step(self, request: StepRequest) -> dict[str, object]:
        """A step's request: the conversation as a count unless messages are included."""
        whole = self._include_messages
        return {
            "index": request.index,
            "model": request.model.name,
            "tools": list(request.tools),
            "options": _without_header_values(request.options),
            "system_prompt": request.system_prompt if whole else len(request.system_prompt),
            "messages": request.messages if whole else len(request.messages),
            "task_index": request.task_index,
        }


def _json(value: object) -> str:
    if isinstance(value, str):
        return value
    try:
        return msgspec.json.encode(value, enc_hook=repr).decode("utf-8")
    except Exception:  # a value msgspec cannot walk (a cycle, say): its repr will do
        return repr(value)


class ConsoleTraceWriter:
    """Prints a run as it happens, as plain text: each step, the model's reply, each
    tool call with its result or error, replies sent back for a retry, and the answer
    or why the run stopped.

    Text from outside (the model's, tools', servers') is printed literally: redacted,
    its control characters escaped (``\\x1b``), never read as markup, each text cut to
    ``max_chars``. ``show_replies=False`` leaves out the model's own text. The stream
    is ``sys.stdout`` unless given.

    >>> import io
    >>> from agents import ReActAgent, ScriptedModel
    >>> from toolchain import ExecutionContext, JSONToolChain, tool
    >>> @tool
    ... def add(a: int, b: int) -> int:
    ...     \'\'\'Add two numbers.\'\'\'
    ...     return a + b
    >>> model = ScriptedModel(['<action>{"tool": "add", "args": {"a": 2, "b": 2}}</action>',
    ...                        "<answer>[b]4[/b]</answer>"])
    >>> agent = ReActAgent(model, tool_chain=JSONToolChain().register_tool(add))
    >>> out, ctx = io.StringIO(), ExecutionContext()
    >>> detach = ConsoleTraceWriter(out, show_replies=False).attach(ctx)
    >>> agent.run_sync("2 + 2?", ctx=ctx).answer
    '[b]4[/b]'
    >>> print(out.getvalue(), end="")  # doctest: +ELLIPSIS
    step 1
      scripted replied in ... s (... in, ... out tokens)
      -> add {"a":2,"b":2} [call_1]
      <- add ok in ... s: 4
    step 2
      scripted replied in ... s (... in, ... out tokens)
    answer: [b]4[/b]
    (run: 2 steps, ... tokens)
    """

    def __init__(
        self, stream: IO[str] | None = None, *, max_chars: int = 400, show_replies: bool = True
    ) -> None:
        self._stream = stream
        self._max_chars = max_chars
        self._show_replies = show_replies
        self._lock = threading.Lock()

    def attach(self, ctx: ExecutionContext) -> Callable[[], None]:
        """Subscribe to ``ctx``'s events; returns a function that detaches."""
        handlers: list[tuple[type[Any], Callable[[Any], object]]] = [
            (StepStarted, self._step),
            (AfterModelCall, self._reply),
            (OutputRejected, self._rejected),
            (ToolCallStarted, self._call),
            (ToolCallFinished, self._result),
            (RunFinished, self._ended),
        ]
        removers = [ctx.events.subscribe(kind, handler) for kind, handler in handlers]

        def detach() -> None:
            for remove in removers:
                remove()

        return detach

    # -- the lines -------------------------------------------------------------------

    def _step(self, event: StepStarted) -> None:
        self._print(f"step {event.step}")

    def _reply(self, event: AfterModelCall) -> None:
        usage = event.response.usage
        self._print(
            f"  {self._text(event.model)} replied in {event.duration:.3f} s "
            f"({usage.input_tokens} in, {usage.output_tokens} out tokens)"
        )
        if self._show_replies and event.response.text.strip():
            self._print("    " + self._block(event.response.text, "    "))

    def _rejected(self, event: OutputRejected) -> None:
        self._print(f"  ! reply rejected ({event.kind}): {self._block(event.feedback, '    ')}")

    def _call(self, event: ToolCallStarted) -> None:
        where = f" [{self._text(event.id)}]" if event.id else ""
        self._print(f"  -> {self._text(event.name)} {self._text(_json(event.args))}{where}")

    def _result(self, event: ToolCallFinished) -> None:
        name, took = self._text(event.name), f"{event.duration:.3f} s"
        if event.error is not None:
            message = self._block(event.error.message, "    ")
            self._print(f"  <- {name} failed ({event.error.kind}) in {took}: {message}")
            return
        if event.result is None:
            return
        media = event.result.media
        extra = f" (+{len(media)} media)" if media else ""
        output = self._block(_json(event.result.text), "    ")
        self._print(f"  <- {name} ok in {took}: {output}{extra}")

    def _ended(self, event: RunFinished[Any]) -> None:
        result = event.result
        if result.stopped_by == "answer":
            self._print(f"answer: {self._block(_json(result.answer), '  ')}")
        else:
            detail = result.limit or result.error or result.paused or ""
            self._print(f"stopped by {result.stopped_by}: {self._block(detail, '  ')}")
        tokens = result.usage.input_tokens + result.usage.output_tokens
        steps = len(result.steps)
        name = self._text(event.ctx.name)
        self._print(f"({name}: {steps} step{'s' if steps != 1 else ''}, {tokens} tokens)")

    # -- text from outside -------------------------------------------------------------

    def _text(self, text: str) -> str:
        """``text`` safe to print: cut, redacted, control characters escaped."""
        if len(text) > self._max_chars:
            text = f"{text[: self._max_chars]}… [{len(text) - self._max_chars} more characters]"
        return escape_controls(redact(text))

    def _block(self, text: str, indent: str) -> str:
        """``_text`` of a text that may span lines, continuation lines indented."""
        return self._text(text.strip()).replace("\n", "\n" + indent)

    def _print(self, line: str) -> None:
        stream = self._stream if self._stream is not None else sys.stdout
        with self._lock:
            stream.write(line + "\n")
            stream.flush()
