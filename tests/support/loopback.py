"""A scriptable HTTP server on 127.0.0.1 for the provider SDKs, and its raw replies.

Point the official SDKs at it to test model adapters, or a whole agent run, with no
network and no mocks. Each request takes the next queued `Reply` (or, once the queue
is empty, whatever ``respond_with``'s handler returns) and is recorded, so a test can
assert what the SDK really sent. The replies in each provider's shape are built in
`tests.support.openai_replies` and `tests.support.anthropic_replies`; a handler playing
a script of turns is `tests.support.chat_script.chat_script`.

Server
------
``LoopbackServer()``
    A context manager (or ``start()`` / ``close()``) serving HTTP/1.1 on an ephemeral
    port in a background thread. ``close()`` cuts open connections and wakes every delay.
    The ``loopback`` fixture (``tests/conftest.py``) gives a test one, running.
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

Raw replies
-----------
``json_reply(obj, status=200, headers=())``
    ``obj`` as a JSON body.
``sse_reply(events, headers=(), split_every=None)``
    Server-sent events from ``(event name or None, JSON object or str)``, one chunk
    each, or cut every ``split_every`` bytes wherever that falls.
``refusal(message)``
    A 400 no SDK retries, saying ``loopback: <message>``.

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
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

__all__ = [
    "Handler",
    "LoopbackServer",
    "RecordedRequest",
    "Reply",
    "json_reply",
    "refusal",
    "sse_reply",
]


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
        self._opened = 0
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
    def connections_opened(self) -> int:
        """How many connections clients have opened so far (keep-alive reuses one)."""
        with self._lock:
            return self._opened

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
            return refusal(f"no reply queued for {request.method} {request.path}")
        try:
            return handler(request)
        except Exception as err:
            return refusal(f"the respond_with handler raised {err!r}")

    def _wait(self, seconds: float) -> bool:
        """Sleep ``seconds``; True when the server is closing instead."""
        return seconds > 0 and self._stopping.wait(seconds)

    def _track(self, connection: socket.socket, *, open_: bool) -> None:
        with self._lock:
            if open_:
                self._connections.add(connection)
                self._opened += 1
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


def refusal(message: str) -> Reply:
    """A 400 that no SDK retries, its error message ``loopback: <message>``."""
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
    events: Iterable[tuple[str | None, object]],
    *,
    headers: Iterable[tuple[str, str]] = (),
    split_every: int | None = None,
) -> Reply:
    """Server-sent events, one chunk each: ``(event name or None, data)``.

    ``data`` is JSON-encoded unless it is already a string (such as ``[DONE]``); text
    goes as UTF-8, as the providers send it, not as ``\\u`` escapes. With ``split_every``
    the body goes in chunks of that many bytes, whatever they cut: event lines, JSON,
    and the bytes of one multi-byte character.
    """
    frames: list[bytes] = []
    for event, data in events:
        text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
        head = f"event: {event}\n" if event is not None else ""
        frames.append(f"{head}data: {text}\n\n".encode())
    chunks = tuple(frames)
    if split_every is not None:
        whole = b"".join(frames)
        chunks = tuple(whole[i : i + split_every] for i in range(0, len(whole), split_every))
    return Reply(
        headers=(("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache"), *headers),
        chunks=chunks,
    )
