"""The exceptions model adapters raise, so callers never catch an SDK's own types."""

from __future__ import annotations

from agents._errors import AgentError
from toolchain.runtime import redact

__all__ = [
    "ModelCallError",
    "ModelConfigError",
    "ModelError",
    "ModelTimeoutError",
    "ScriptExhaustedError",
    "UnsupportedContentError",
]


class ModelError(AgentError):
    """Base of every error a model adapter raises.

    The message goes through `toolchain._redact.redact` first, so an error never shows an
    API key, a bearer token or a URL's credentials, whatever server text it quotes.

    >>> issubclass(ModelCallError, ModelError)
    True
    >>> str(ModelError("HTTP 401: Bearer abc123 was refused"))
    'HTTP 401: Bearer [REDACTED] was refused'
    """

    def __init__(self, message: str = "") -> None:
        super().__init__(redact(message))


class ModelConfigError(ModelError):
    """A model cannot be set up: unknown provider, missing key, bad alias.

    The message names the environment variable(s) to set.

    >>> str(ModelConfigError("set OPENAI_API_KEY"))
    'set OPENAI_API_KEY'
    """


class ModelCallError(ModelError):
    """A call to a provider failed: an HTTP error left after retries, a dropped connection.

    ``status_code`` is the HTTP status when the server answered, else ``None``.
    ``transient`` says whether the same call may well work if made again a little later:
    by default, a status the official SDKs retry (408, 409, 429, 5xx); the adapters also
    mark a server that could not be reached and a timeout so. Durable runs retry the
    transient ones (``agents.durable.ModelRetries``).

    >>> ModelCallError("HTTP 500", status_code=500).status_code
    500
    >>> ModelCallError("HTTP 503", status_code=503).transient
    True
    >>> ModelCallError("HTTP 400: bad request", status_code=400).transient
    False
    """

    def __init__(
        self, message: str, *, status_code: int | None = None, transient: bool | None = None
    ) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.transient = retryable_status(status_code) if transient is None else transient


class ModelTimeoutError(ModelCallError):
    """A call to a provider took longer than the adapter's timeout (transient).

    >>> isinstance(ModelTimeoutError("timed out"), ModelCallError)
    True
    >>> ModelTimeoutError("timed out").transient
    True
    """

    # The same parameters as ModelCallError's (a recorded one is rebuilt through them),
    # transient by default.
    def __init__(
        self, message: str, *, status_code: int | None = None, transient: bool | None = True
    ) -> None:
        super().__init__(message, status_code=status_code, transient=transient)


class UnsupportedContentError(ModelError):
    """A message holds a part the provider cannot take (audio for Anthropic, say).

    >>> str(UnsupportedContentError("no audio"))
    'no audio'
    """


class ScriptExhaustedError(ModelError):
    """A `ScriptedModel` was asked for more replies than it was given.

    >>> str(ScriptExhaustedError("all 2 scripted outputs were used"))
    'all 2 scripted outputs were used'
    """


def retryable_status(status: int | None) -> bool:
    """Whether an HTTP status is one the official SDKs retry: 408, 409, 429 and 5xx.

    >>> [retryable_status(code) for code in (429, 503, 400, None)]
    [True, True, False, False]
    """
    # The policy both official SDKs apply before giving up on a status code.
    return status is not None and (status in (408, 409, 429) or status >= 500)
