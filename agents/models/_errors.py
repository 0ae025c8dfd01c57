"""The exceptions model adapters raise, so callers never catch an SDK's own types."""

from __future__ import annotations

from toolchain._redact import redact

__all__ = [
    "ModelCallError",
    "ModelConfigError",
    "ModelError",
    "ModelTimeoutError",
    "ScriptExhaustedError",
    "UnsupportedContentError",
]


class ModelError(Exception):
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

    >>> ModelCallError("HTTP 500", status_code=500).status_code
    500
    """

    def __init__(self, message: str, *, status_code: int | None = None) -> None:
        super().__init__(message)
        self.status_code = status_code


class ModelTimeoutError(ModelCallError):
    """A call to a provider took longer than the adapter's timeout.

    >>> isinstance(ModelTimeoutError("timed out"), ModelCallError)
    True
    """


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
