"""What both provider adapters do with the per-call parts of `GenerateOptions`.

- `RetryClients`: the SDK client to call with for a call's ``max_retries``. Both official
  SDKs fix retries on the client, so a per-call value uses a copy made by the SDK's
  ``with_options(max_retries=...)`` (it shares the connection pool), kept for reuse.
- `DroppedOptions`: says once per model, at debug level, that the provider has no
  parameter for an option that was set, instead of failing the call.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Generic, TypeVar

from agents.models._types import GenerateOptions
from toolchain.runtime import logger

__all__ = ["DroppedOptions", "RetryClients"]

_log = logger("agents")

ClientT = TypeVar("ClientT")


class RetryClients(Generic[ClientT]):
    """The client for a call's ``max_retries``, and the retry count it applies.

    >>> clients = RetryClients("client", 3, lambda retries: f"client, {retries} retries")
    >>> clients.pick(None), clients.pick(3), clients.pick(0)
    (('client', 3), ('client', 3), ('client, 0 retries', 0))
    """

    def __init__(self, client: ClientT, retries: int, copy: Callable[[int], ClientT]) -> None:
        self._client = client
        self._retries = retries
        self._copy = copy
        self._copies: dict[int, ClientT] = {}

    def pick(self, max_retries: int | None) -> tuple[ClientT, int]:
        """The client and retry count for a call; the model's own unless overridden."""
        if max_retries is None or max_retries == self._retries:
            return self._client, self._retries
        client = self._copies.get(max_retries)
        if client is None:
            client = self._copies[max_retries] = self._copy(max_retries)
        return client, max_retries


class DroppedOptions:
    """Logs, once per option, that a model ignores an option its provider lacks.

    >>> dropped = DroppedOptions("anthropic:claude")
    >>> dropped.note(GenerateOptions(seed=1), ("seed", "top_k"), "the API has no such parameter")
    """

    def __init__(self, label: str) -> None:
        self._label = label
        self._told: set[str] = set()

    def note(self, options: GenerateOptions, names: Iterable[str], why: str) -> None:
        """Log each of ``names`` set in ``options`` that was not logged before."""
        for name in names:
            if getattr(options, name) is not None and name not in self._told:
                self._told.add(name)
                # Only the option's name: its value is the caller's business.
                _log.debug("%s ignores the option %s: %s", self._label, name, why)
