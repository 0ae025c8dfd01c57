"""`ModelRetries`: how a durable run makes a model call again after a passing failure.

A plain run ends with ``stopped_by == "error"`` when its model call fails, after the
adapter's own retries (the SDKs': a few seconds). A durable run is meant to outlive a
provider's bad minute, so its model calls go on retrying transient failures (a
`ModelCallError` with ``transient``: 408, 409, 429, 5xx, no connection, a timeout) with
a growing wait, inside the call's step. What is not transient (a refused request, a bad
key, an answer that is not a chat completion) fails at once, as it would again.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from agents._errors import AgentValueError
from agents.models import ModelCallError

__all__ = ["ModelRetries"]


@dataclass(frozen=True, slots=True)
class ModelRetries:
    """How often, and how far apart, a durable run's model call is made again when it
    fails for a passing reason (a `ModelCallError` whose ``transient`` is true).

    By default a call is made up to 6 times, the waits between them 1, 2, 4, 8 and
    16 s (each cut short at random by up to half, so many workers hit by one outage do
    not all come back at once): about half a minute of outage, on top of the model's
    own retries (the OpenAI and Anthropic adapters': ``max_retries=3``). The waits race
    the run's ``Limits.timeout`` as the call does. ``ModelRetries(attempts=1)`` makes
    each call once.

    >>> ModelRetries().attempts
    6
    >>> ModelRetries(attempts=3, first_delay=0.5).delays()
    (0.5, 1.0)
    """

    attempts: int = 6
    """Tries in all, the first included (at least 1)."""
    first_delay: float = 1.0
    """Seconds before the second try."""
    backoff: float = 2.0
    """Each wait is this many times the one before (at least 1)."""
    max_delay: float = 30.0
    """No wait is longer than this."""

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise AgentValueError(f"ModelRetries(attempts={self.attempts}): give at least 1")
        if self.first_delay < 0 or self.max_delay < 0:
            raise AgentValueError("ModelRetries: delays are seconds, 0 or more")
        if self.backoff < 1:
            raise AgentValueError(f"ModelRetries(backoff={self.backoff}): give 1 or more")

    def delays(self) -> tuple[float, ...]:
        """The longest wait before each try after the first, in seconds."""
        return tuple(
            min(self.max_delay, self.first_delay * self.backoff**step)
            for step in range(self.attempts - 1)
        )

    def delay(self, error: Exception, attempt: int) -> float | None:
        """Seconds to wait before trying again after ``error`` ended try ``attempt``
        (from 1); ``None`` when the error is not transient or the tries are spent."""
        if attempt >= self.attempts or not (isinstance(error, ModelCallError) and error.transient):
            return None
        longest = self.delays()[attempt - 1]
        # Jitter: workers that failed together spread out when they come back.
        return longest * random.uniform(0.5, 1.0)
