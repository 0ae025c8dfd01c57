"""A JSON-lines trace of a run, written from the observer events on its context.

One line per event: ``{"event": "AfterToolCall", "t": 0.0123, "run": "...", ...}``,
where ``t`` is seconds since the writer was attached. Media bytes are base64. Every
string written (arguments, outputs, messages, exception texts) goes through
`agents._redact.redact` first, so a trace never holds an API key or a bearer token;
the values of a step's extra HTTP headers (``GenerateOptions.headers``) are written as
``[REDACTED]`` whatever they look like, their names kept.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable
from typing import IO, Any, cast

import msgspec

from agents._redact import REDACTED, redact
from agents.events import (
    AfterModelCall,
    BeforeModelCall,
    IterationFinished,
    IterationStarted,
    OutputRejected,
    StepReady,
)
from agents.models import GenerateOptions
from agents.steps import StepRequest
from toolchain import AfterToolCall, BeforeToolCall, ExecutionContext, ToolCallParseFailed

__all__ = ["TRACED_EVENTS", "JSONLTraceWriter"]

TRACED_EVENTS: tuple[type[object], ...] = (
    IterationStarted,
    StepReady,
    BeforeModelCall,
    AfterModelCall,
    OutputRejected,
    BeforeToolCall,
    AfterToolCall,
    ToolCallParseFailed,
    IterationFinished,
)


def _enc_hook(value: Any) -> Any:
    if isinstance(value, BaseException):
        return f"{type(value).__name__}: {value}"
    return repr(value)


def _redacted(value: object) -> object:
    """``value`` (plain JSON-like data) with every string redacted; bytes stay as they are."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        pairs = cast("dict[object, object]", value)
        return {
            redact(key) if isinstance(key, str) else key: _redacted(item)
            for key, item in pairs.items()
        }
    if isinstance(value, list):
        return [_redacted(item) for item in cast("list[object]", value)]
    return value


def _without_header_values(options: GenerateOptions) -> GenerateOptions:
    """``options`` with header values blanked: a secret of no known shape escapes `redact`."""
    if not options.headers:
        return options
    return dataclasses.replace(options, headers=dict.fromkeys(options.headers, REDACTED))


class JSONLTraceWriter:
    """Writes every traced event of a run to a text stream, one JSON object per line.

    >>> import io
    >>> from toolchain import ExecutionContext
    >>> out, ctx = io.StringIO(), ExecutionContext()
    >>> detach = JSONLTraceWriter(out).attach(ctx)
    >>> ctx.events.emit(IterationStarted(ctx, 1))
    >>> detach()
    >>> '"event":"IterationStarted"' in out.getvalue()
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
            else:
                record[name] = value
        # Plain data first (media bytes kept as bytes), so that every string can be
        # redacted before encoding; redacting the JSON text could break its escapes.
        plain = msgspec.to_builtins(record, builtin_types=(bytes,), enc_hook=_enc_hook)
        line = self._encoder.encode(_redacted(plain)).decode("utf-8")
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
