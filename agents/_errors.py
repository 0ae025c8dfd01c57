"""The root of every exception class ``agents`` defines, under the library's ``GentError``.

A module of its own, small as it is: every part of ``agents`` hangs its errors under
``AgentError`` (``agents.models``' ``ModelError``, ``agents.durable``'s
``DurableError``, the evals' file errors, the step engine's own), and ``agents.models``
imports nothing else of ``agents``, so the root must sit below all of them.
"""

from __future__ import annotations

from formats import GentError

__all__ = ["AgentError"]


class AgentError(GentError):
    """Base of every exception class ``agents`` defines: its models', runs', durable runs',
    evals' and CLI's.

    ``except AgentError`` catches any of them, and none of what your own code raises for
    the model (``AnswerRejected`` is a ``toolchain.ModelFeedback``). A bad argument is
    still Python's own ``ValueError`` or ``TypeError``.

    >>> from agents.models import ModelCallError
    >>> issubclass(ModelCallError, AgentError)
    True
    """
