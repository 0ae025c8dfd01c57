"""Wording of call failures, shared by the provider adapters so they read alike.

Messages quote server bodies and base URLs; `ModelError` passes every message through
`toolchain._redact.redact`, so keys and tokens in them never reach the caller. Each adapter
hands its SDK client to `remember_client_secrets` when it is built, so that `redact` also
blanks a key of no known shape that a server or a model repeats.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

from agents.models._errors import ModelCallError, ModelTimeoutError, retryable_status
from agents.models._responses import describe_error
from toolchain.runtime import remember_header_secrets, remember_secret, remember_url_secrets

__all__ = [
    "api_message",
    "connection_failure",
    "malformed_failure",
    "remember_client_secrets",
    "status_failure",
    "timeout_failure",
    "unexpected_failure",
]


def remember_client_secrets(client: object) -> None:
    """Remember what an SDK client sends as credentials (see `toolchain._redact`): its API
    key or auth token, its base URL's user and password, its credential headers."""
    for attribute in ("api_key", "auth_token"):
        value = getattr(client, attribute, None)
        remember_secret(value if isinstance(value, str) else None)
    remember_url_secrets(str(getattr(client, "base_url", "")))
    headers = getattr(client, "default_headers", None)
    if isinstance(headers, Mapping):
        remember_header_secrets(cast("Mapping[str, object]", headers))


def _retries(max_retries: int) -> str:
    return f"{max_retries} retr{'y' if max_retries == 1 else 'ies'}"


def _get(value: object, key: str) -> object:
    """``value[key]`` for a JSON object, else ``None``."""
    return cast("Mapping[object, object]", value).get(key) if isinstance(value, Mapping) else None


def api_message(body: object, fallback: str) -> str:
    """The human message in an error body shaped ``{"error": {"message": ...}}`` or flatter.

    >>> api_message({"error": {"message": "slow down"}}, "HTTP 429")
    'slow down'
    """
    for candidate in (_get(body, "error"), body):
        message = _get(candidate, "message")
        if isinstance(message, str) and message:
            return message
    if isinstance(body, str) and body.strip():
        return body.strip()[:500]
    return fallback


def status_failure(label: str, status: int, message: str, max_retries: int) -> ModelCallError:
    """A `ModelCallError` for an HTTP error status the SDK gave up on."""
    if status < 400:
        # An error event inside a stream that had started fine; the status is moot.
        return ModelCallError(f"{label}: the server reported an error mid-stream: {message}")
    after = ""
    if retryable_status(status):
        # Say why a failure that is usually retried was not.
        after = (
            f" (gave up after {_retries(max_retries)})"
            if max_retries
            else " (not retried: max_retries=0)"
        )
    return ModelCallError(f"{label}: HTTP {status}{after}: {message}", status_code=status)


def timeout_failure(label: str, timeout: float | None, max_retries: int) -> ModelTimeoutError:
    """A `ModelTimeoutError` naming the timeout that ran out."""
    within = f"within {timeout:g} s" if timeout is not None else "in time"
    tries = f", on each of {max_retries + 1} attempts" if max_retries else ""
    return ModelTimeoutError(
        f"{label}: timed out: the server sent nothing {within}{tries}; "
        "raise the model's timeout= or check that the server is up and not overloaded"
    )


_MOVED_LOOP = (
    "the client's connections belong to an event loop that has closed, and a client given "
    "with its own http_client cannot move to another loop; build it on the loop that uses "
    "it, or give the SDK client no http_client"
)


def connection_failure(
    label: str, base_url: str, cause: BaseException, *, moved_loop: bool = False
) -> ModelCallError:
    """A `ModelCallError` for a server that could not be reached or dropped the line.

    ``moved_loop``: the call used a client whose connections belong to an event loop
    that has closed (see `LoopClients.moved_loop`), which is then the reason given.

    >>> str(connection_failure("openai:m", "http://h/v1", ConnectionRefusedError("refused")))
    'openai:m: could not talk to http://h/v1: refused (ConnectionRefusedError)'
    """
    reason = cause.__cause__ or cause
    detail = f"{reason!s} ({type(reason).__name__})"
    if moved_loop:
        detail = f"{_MOVED_LOOP}; the error was: {detail}"
    # A server that could not be reached may be back in a moment; a client tied to a
    # closed event loop fails the same way every time.
    return ModelCallError(
        f"{label}: could not talk to {base_url}: {detail}", transient=not moved_loop
    )


def malformed_failure(label: str, what: str, err: BaseException) -> ModelCallError:
    """A `ModelCallError` for an answer that is not what the API promises.

    ``what`` says what it should have been, ``err`` is what reading it raised.

    >>> str(malformed_failure("openai:m", "the response is not a chat completion",
    ...                       ValueError("bad")))
    'openai:m: the response is not a chat completion: ValueError: bad'
    """
    return ModelCallError(f"{label}: {what}: {describe_error(err)}")


def unexpected_failure(
    label: str, base_url: str, what: str, err: BaseException, *, moved_loop: bool = False
) -> ModelCallError:
    """A `ModelCallError` for an exception the SDK did not turn into one of its own.

    A failure of the connection or of the event loop under it is a `connection_failure`;
    anything else is an answer that could not be read, and ``what`` says what it should
    have been.

    >>> str(unexpected_failure("openai:m", "http://h/v1", "the response is not a chat "
    ...                        "completion", RuntimeError("Event loop is closed")))
    'openai:m: could not talk to http://h/v1: Event loop is closed (RuntimeError)'
    """
    if moved_loop or _transport_error(err):
        return connection_failure(label, base_url, err, moved_loop=moved_loop)
    return malformed_failure(label, what, err)


def _transport_error(err: BaseException) -> bool:
    """A socket, HTTP transport or event-loop failure rather than an unreadable answer."""
    import anyio  # loaded by then: both SDKs run on it
    import httpx2

    transport = (
        OSError,
        httpx2.TransportError,
        anyio.BrokenResourceError,
        anyio.ClosedResourceError,
        anyio.EndOfStream,
    )
    # RuntimeError itself ("Event loop is closed", "the client has been closed"), not
    # its subclasses: a RecursionError comes from reading a deeply nested answer.
    return isinstance(err, transport) or type(err) is RuntimeError
