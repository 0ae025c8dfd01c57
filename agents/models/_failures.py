"""Wording of call failures, shared by the provider adapters so they read alike.

Messages quote server bodies and base URLs; `ModelError` passes every message through
`agents._redact.redact`, so keys and tokens in them never reach the caller. Each adapter
hands its SDK client to `remember_client_secrets` when it is built, so that `redact` also
blanks a key of no known shape that a server or a model repeats.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

from agents._redact import remember_header_secrets, remember_secret, remember_url_secrets
from agents.models._errors import ModelCallError, ModelTimeoutError
from agents.models._responses import describe_error

__all__ = [
    "api_message",
    "connection_failure",
    "malformed_failure",
    "remember_client_secrets",
    "status_failure",
    "timeout_failure",
]


def remember_client_secrets(client: object) -> None:
    """Remember what an SDK client sends as credentials (see `agents._redact`): its API
    key or auth token, its base URL's user and password, its credential headers."""
    for attribute in ("api_key", "auth_token"):
        value = getattr(client, attribute, None)
        remember_secret(value if isinstance(value, str) else None)
    remember_url_secrets(str(getattr(client, "base_url", "")))
    headers = getattr(client, "default_headers", None)
    if isinstance(headers, Mapping):
        remember_header_secrets(cast("Mapping[str, object]", headers))


def _retryable(status: int) -> bool:
    # The policy both official SDKs apply before giving up on a status code.
    return status in (408, 409, 429) or status >= 500


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
    if _retryable(status):
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


def connection_failure(label: str, base_url: str, cause: BaseException) -> ModelCallError:
    """A `ModelCallError` for a server that could not be reached or dropped the line."""
    reason = cause.__cause__ or cause
    return ModelCallError(
        f"{label}: could not talk to {base_url}: {reason!s} ({type(reason).__name__})"
    )


def malformed_failure(label: str, what: str, err: BaseException) -> ModelCallError:
    """A `ModelCallError` for an answer that is not what the API promises.

    ``what`` says what it should have been, ``err`` is what reading it raised.

    >>> str(malformed_failure("openai:m", "the response is not a chat completion",
    ...                       ValueError("bad")))
    'openai:m: the response is not a chat completion: ValueError: bad'
    """
    return ModelCallError(f"{label}: {what}: {describe_error(err)}")
