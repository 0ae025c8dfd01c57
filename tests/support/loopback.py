"""A scriptable HTTP server on 127.0.0.1 that speaks the OpenAI and Anthropic wire protocols.

Point the official SDKs at it to test model adapters, or a whole agent run, with no
network and no mocks. Each request takes the next queued `Reply` (or, once the queue
is empty, whatever ``respond_with``'s handler returns) and is recorded, so a test can
assert what the SDK really sent.

Server
------
``LoopbackServer()``
    A context manager (or ``start()`` / ``close()``) serving HTTP/1.1 on an ephemeral
    port in a background thread. ``close()`` cuts open connections and wakes every delay.
``.base_url``
    ``http://127.0.0.1:<port>``: the ``base_url`` for the Anthropic SDK.
``.openai_base_url``
    ``.base_url + "/v1"``: the ``base_url`` for the OpenAI SDK.
``.enqueue(*replies)``
    Queue replies; requests take them first in, first out, whatever their path.
``.respond_with(handler)``
    ``handler(request) -> Reply`` answers once the queue is empty (``None`` removes it).
``.requests`` / ``.last_request`` / ``.pending``
    The `RecordedRequest` list so far, its last item, the count of unused queued replies.
With neither a queued reply nor a handler the server answers 400 with
``x-should-retry: false`` (so no SDK retries) and says so in the error message.

Data
----
``RecordedRequest(method, path, headers, body)``
    ``headers`` has lower-case names; ``.json()`` parses ``body`` as a JSON object.
``Reply(status=200, headers=(), body=b"", chunks=None, delay=0.0, chunk_delay=0.0)``
    ``delay`` seconds pass before the status line; ``chunks`` (if given) are sent one
    by one with chunked transfer encoding, ``chunk_delay`` seconds apart, in place of
    ``body``. ``reply.delayed(seconds)`` is a copy with another ``delay``.

Reply builders
--------------
``json_reply(obj, status=200, headers=())``, ``sse_reply(events, headers=())``
    Raw JSON, and server-sent events from ``(event name or None, JSON object or str)``.
``openai_completion(text, ...)`` / ``openai_stream(deltas, ...)``
    A chat completion, whole or as ``chat.completion.chunk`` events (one per delta, a
    finish chunk, a usage chunk with empty ``choices``, then ``data: [DONE]``).
``anthropic_message(text, ...)`` / ``anthropic_stream(deltas, ...)``
    A message, whole or as message_start, content_block_start, ping,
    content_block_delta per delta, content_block_stop, message_delta, message_stop.
``openai_error(status, message, ...)`` / ``anthropic_error(status, message, ...)``
    Each provider's error body. ``retry_after_ms`` (1 by default) sets the
    ``retry-after-ms`` header both SDKs honour, so retries happen at once.
``scripted_handler(outputs, chunk_size=5)``
    A handler for ``respond_with`` that answers each request with the next output in
    the format the request asks for: OpenAI or Anthropic by path, streamed or not by
    the body's ``stream`` flag. Handy for driving a multi-step agent run.

Example::

    with LoopbackServer() as server:
        server.enqueue(openai_error(429, "slow down"), openai_completion("42"))
        model = OpenAIChatModel("gpt-test", api_key="k", base_url=server.openai_base_url)
        ...  # await model.generate(...), then inspect server.requests[-1].json()
"""

from __future__ import annotations

import contextlib
import json
import socket
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

__all__ = [
    "Handler",
    "LoopbackServer",
    "RecordedRequest",
    "Reply",
    "anthropic_error",
    "anthropic_message",
    "anthropic_stream",
    "json_reply",
    "openai_completion",
    "openai_error",
    "openai_stream",
    "scripted_handler",
    "sse_reply",
]

_OPENAI_MODEL = "gpt-loopback"
_ANTHROPIC_MODEL = "claude-loopback"


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One request the server received, as it arrived."""

    method: str
    path: str
    headers: Mapping[str, str]
    body: bytes

    def json(self) -> dict[str, Any]:
        """The body as a JSON object; ``Any`` because tests index into it freely."""
        parsed = json.loads(self.body)
        if not isinstance(parsed, dict):
            raise ValueError(f"request body is not a JSON object: {self.body[:200]!r}")
        return parsed


@dataclass(frozen=True, slots=True)
class Reply:
    """What the server sends back for one request."""

    status: int = 200
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""
    chunks: tuple[bytes, ...] | None = None
    delay: float = 0.0
    chunk_delay: float = 0.0

    def delayed(self, seconds: float) -> Reply:
        """This reply, sent only after ``seconds``."""
        return replace(self, delay=seconds)


Handler = Callable[[RecordedRequest], Reply]


class LoopbackServer:
    """A threaded HTTP server on 127.0.0.1 with a queue of replies; see the module doc."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queue: deque[Reply] = deque()
        self._handler: Handler | None = None
        self._requests: list[RecordedRequest] = []
        self._connections: set[socket.socket] = set()
        self._stopping = threading.Event()
        self._httpd = _Server(self)
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def openai_base_url(self) -> str:
        """The OpenAI SDK's base URL: `base_url` plus ``/v1``."""
        return f"{self.base_url}/v1"

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, oldest first (a copy)."""
        with self._lock:
            return list(self._requests)

    @property
    def last_request(self) -> RecordedRequest:
        """The latest request; `AssertionError` when there is none."""
        requests = self.requests
        assert requests, "the loopback server has received no request"
        return requests[-1]

    @property
    def pending(self) -> int:
        """How many queued replies are still unused."""
        with self._lock:
            return len(self._queue)

    def enqueue(self, *replies: Reply) -> None:
        """Queue replies for the next requests, in order."""
        with self._lock:
            self._queue.extend(replies)

    def respond_with(self, handler: Handler | None) -> None:
        """Answer with ``handler(request)`` whenever the queue is empty."""
        with self._lock:
            self._handler = handler

    def start(self) -> LoopbackServer:
        """Start serving in a daemon thread; returns the server."""
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
            )
            self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving, wake delayed replies and cut open connections."""
        self._stopping.set()
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join(timeout=5)
        with self._lock:
            connections = list(self._connections)
        for connection in connections:
            # Idle keep-alive connections would otherwise hold their threads forever.
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
        self._httpd.server_close()

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _take(self, request: RecordedRequest) -> Reply:
        with self._lock:
            self._requests.append(request)
            if self._queue:
                return self._queue.popleft()
            handler = self._handler
        if handler is None:
            return _refusal(f"no reply queued for {request.method} {request.path}")
        try:
            return handler(request)
        except Exception as err:
            return _refusal(f"the respond_with handler raised {err!r}")

    def _wait(self, seconds: float) -> bool:
        """Sleep ``seconds``; True when the server is closing instead."""
        return seconds > 0 and self._stopping.wait(seconds)

    def _track(self, connection: socket.socket, *, open_: bool) -> None:
        with self._lock:
            if open_:
                self._connections.add(connection)
            else:
                self._connections.discard(connection)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, loopback: LoopbackServer) -> None:
        super().__init__(("127.0.0.1", 0), _RequestHandler)
        self.loopback = loopback

    def handle_error(
        self, request: socket.socket | tuple[bytes, socket.socket], client_address: Any
    ) -> None:
        """Stay quiet when a client drops its connection (as SDKs do after a bad stream)."""
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class _RequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def setup(self) -> None:
        super().setup()
        self.server.loopback._track(self.connection, open_=True)

    def finish(self) -> None:
        self.server.loopback._track(self.connection, open_=False)
        with contextlib.suppress(OSError):
            super().finish()

    def do_POST(self) -> None:
        self._answer()

    def do_GET(self) -> None:
        self._answer()

    def log_message(self, format: str, *args: object) -> None:
        """Keep test output quiet."""

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        headers = {name.lower(): value for name, value in self.headers.items()}
        loopback = self.server.loopback
        reply = loopback._take(RecordedRequest(self.command, self.path, headers, body))
        try:
            self._send(reply, loopback)
        except OSError:
            # The client gave up (a timeout test, say) before the reply was written.
            self.close_connection = True

    def _send(self, reply: Reply, loopback: LoopbackServer) -> None:
        if loopback._wait(reply.delay):
            self.close_connection = True
            return
        self.send_response(reply.status)
        for name, value in reply.headers:
            self.send_header(name, value)
        if reply.chunks is None:
            self.send_header("Content-Length", str(len(reply.body)))
            self.end_headers()
            self.wfile.write(reply.body)
            self.wfile.flush()
            return
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for index, chunk in enumerate(reply.chunks):
            if index and loopback._wait(reply.chunk_delay):
                self.close_connection = True
                return
            self.wfile.write(b"%X\r\n%s\r\n" % (len(chunk), chunk))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


def _refusal(message: str) -> Reply:
    body = {"error": {"message": f"loopback: {message}", "type": "invalid_request_error"}}
    return json_reply(body, status=400, headers=(("x-should-retry", "false"),))


def json_reply(obj: object, *, status: int = 200, headers: Iterable[tuple[str, str]] = ()) -> Reply:
    """``obj`` as an ``application/json`` body."""
    return Reply(
        status=status,
        headers=(("Content-Type", "application/json"), *headers),
        body=json.dumps(obj).encode(),
    )


def sse_reply(
    events: Iterable[tuple[str | None, object]], *, headers: Iterable[tuple[str, str]] = ()
) -> Reply:
    """Server-sent events, one chunk each: ``(event name or None, data)``.

    ``data`` is JSON-encoded unless it is already a string (such as ``[DONE]``).
    """
    chunks: list[bytes] = []
    for event, data in events:
        text = data if isinstance(data, str) else json.dumps(data)
        head = f"event: {event}\n" if event is not None else ""
        chunks.append(f"{head}data: {text}\n\n".encode())
    return Reply(
        headers=(("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache"), *headers),
        chunks=tuple(chunks),
    )


def _tokens(text: str) -> int:
    return max(1, len(text) // 4)


def openai_completion(
    text: str,
    *,
    finish_reason: str = "stop",
    prompt_tokens: int = 10,
    completion_tokens: int | None = None,
    model: str = _OPENAI_MODEL,
    choice_extra: Mapping[str, object] | None = None,
) -> Reply:
    """A ``chat.completion`` body with one choice; ``choice_extra`` adds fields to it."""
    completion = completion_tokens if completion_tokens is not None else _tokens(text)
    choice = {
        "index": 0,
        "message": {"role": "assistant", "content": text, "refusal": None},
        "logprobs": None,
        "finish_reason": finish_reason,
        **(choice_extra or {}),
    }
    return json_reply(
        {
            "id": "chatcmpl-loopback",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": model,
            "choices": [choice],
            "usage": _openai_usage(prompt_tokens, completion),
        }
    )


def openai_stream(
    deltas: Sequence[str],
    *,
    finish_reason: str = "stop",
    prompt_tokens: int = 10,
    completion_tokens: int | None = None,
    model: str = _OPENAI_MODEL,
    include_usage: bool = True,
) -> Reply:
    """``chat.completion.chunk`` events for ``deltas``, a finish chunk, usage, ``[DONE]``."""
    completion = completion_tokens if completion_tokens is not None else _tokens("".join(deltas))

    def chunk(choices: list[object], usage: object = None) -> dict[str, object]:
        return {
            "id": "chatcmpl-loopback",
            "object": "chat.completion.chunk",
            "created": 1_700_000_000,
            "model": model,
            "choices": choices,
            "usage": usage,
        }

    def choice(delta: Mapping[str, object], finish: str | None = None) -> dict[str, object]:
        return {"index": 0, "delta": dict(delta), "logprobs": None, "finish_reason": finish}

    events: list[tuple[str | None, object]] = [
        (None, chunk([choice({"role": "assistant", "content": ""})]))
    ]
    events += [(None, chunk([choice({"content": delta})])) for delta in deltas]
    events.append((None, chunk([choice({}, finish_reason)])))
    if include_usage:
        events.append((None, chunk([], _openai_usage(prompt_tokens, completion))))
    events.append((None, "[DONE]"))
    return sse_reply(events)


def _openai_usage(prompt: int, completion: int) -> dict[str, int]:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def anthropic_message(
    text: str,
    *,
    stop_reason: str = "end_turn",
    stop_sequence: str | None = None,
    input_tokens: int = 10,
    output_tokens: int | None = None,
    model: str = _ANTHROPIC_MODEL,
) -> Reply:
    """A Messages API ``message`` body with one text block."""
    return json_reply(
        {
            "id": "msg_loopback",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [{"type": "text", "text": text}],
            "stop_reason": stop_reason,
            "stop_sequence": stop_sequence,
            "usage": {
                "input_tokens": input_tokens,
                "output_tokens": output_tokens if output_tokens is not None else _tokens(text),
            },
        }
    )


def anthropic_stream(
    deltas: Sequence[str],
    *,
    stop_reason: str = "end_turn",
    stop_sequence: str | None = None,
    input_tokens: int = 10,
    output_tokens: int | None = None,
    model: str = _ANTHROPIC_MODEL,
) -> Reply:
    """The Messages API event sequence streaming ``deltas`` as one text block."""
    output = output_tokens if output_tokens is not None else _tokens("".join(deltas))
    message: dict[str, object] = {
        "id": "msg_loopback",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": 1},
    }
    events: list[tuple[str | None, object]] = [
        ("message_start", {"type": "message_start", "message": message}),
        (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        ),
        ("ping", {"type": "ping"}),
    ]
    events += [
        (
            "content_block_delta",
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": d}},
        )
        for d in deltas
    ]
    events += [
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": stop_sequence},
                "usage": {"output_tokens": output},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return sse_reply(events)


def _retry_headers(retry_after_ms: int | None) -> tuple[tuple[str, str], ...]:
    return (("retry-after-ms", str(retry_after_ms)),) if retry_after_ms is not None else ()


def openai_error(
    status: int,
    message: str,
    *,
    error_type: str = "server_error",
    retry_after_ms: int | None = 1,
) -> Reply:
    """An OpenAI-style error: ``{"error": {"message", "type", "param", "code"}}``."""
    body = {"error": {"message": message, "type": error_type, "param": None, "code": None}}
    return json_reply(body, status=status, headers=_retry_headers(retry_after_ms))


def anthropic_error(
    status: int,
    message: str,
    *,
    error_type: str = "api_error",
    retry_after_ms: int | None = 1,
) -> Reply:
    """An Anthropic-style error: ``{"type": "error", "error": {"type", "message"}}``."""
    body = {"type": "error", "error": {"type": error_type, "message": message}}
    return json_reply(body, status=status, headers=_retry_headers(retry_after_ms))


def scripted_handler(outputs: Sequence[str], *, chunk_size: int = 5) -> Handler:
    """A ``respond_with`` handler replying with ``outputs`` in turn, in the asked-for format.

    Past the last output it answers 400 (not retried) saying the script ran out.
    """
    remaining = deque(outputs)
    lock = threading.Lock()

    def handle(request: RecordedRequest) -> Reply:
        with lock:
            if not remaining:
                return _refusal(f"all {len(outputs)} scripted outputs were used")
            text = remaining.popleft()
        streamed = bool(request.json().get("stream"))
        pieces = [text[i : i + chunk_size] for i in range(0, len(text), chunk_size)]
        if request.path.partition("?")[0].endswith("/messages"):
            return anthropic_stream(pieces) if streamed else anthropic_message(text)
        return openai_stream(pieces) if streamed else openai_completion(text)

    return handle
