"""The root of every exception class ``agents`` defines, under the library's ``GentError``.

A module of its own, small as it is: every part of ``agents`` hangs its errors under
``AgentError`` (``agents.models``' ``ModelError``, ``agents.durable``'s
``DurableError``, the evals' file errors, the step engine's own), and ``agents.models``
imports nothing else of ``agents``, so the root must sit below all of them.
"""

from __future__ import annotations

from formats import GentError

__all__ = ["AgentError", "AgentStateError", "AgentTypeError", "AgentValueError"]


class AgentError(GentError):
    """Base of every exception class ``agents`` defines: its models', runs', durable runs',
    evals' and CLI's.

    ``except AgentError`` catches any of them, and none of what your own code raises for
    the model (``AnswerRejected`` is a ``toolchain.ModelFeedback``). A bad argument or a
    call in the wrong state raises one of the usage errors below, each still the builtin
    class it was (``AgentValueError`` is a ``ValueError``).

    >>> from agents.models import ModelCallError
    >>> issubclass(ModelCallError, AgentError)
    True
    """


# The usage errors: a call ``agents`` cannot honour. One per builtin class a caller may
# already catch it by, named for the root and that class, so ``except ValueError``
# written before the tree still works and ``except AgentError`` catches them too.


class AgentValueError(AgentError, ValueError):
    """A call to ``agents`` got a bad argument (a limit below 1, JSON that is not a
    conversation); still a ``ValueError``.

    >>> from agents.models import messages_from_json
    >>> try:
    ...     messages_from_json("{not json")
    ... except AgentError as error:
    ...     print(type(error).__name__, isinstance(error, ValueError))
    AgentValueError True
    """


class AgentTypeError(AgentError, TypeError):
    """A call to ``agents`` got an argument of the wrong type (a string where a list of
    outputs goes); still a ``TypeError``.

    >>> from agents import ScriptedModel
    >>> try:
    ...     ScriptedModel("one reply")  # type: ignore[arg-type]  # the wrong type, on purpose
    ... except AgentError as error:
    ...     print(type(error).__name__, isinstance(error, TypeError))
    AgentTypeError True
    """


class AgentStateError(AgentError, RuntimeError):
    """A call came when it cannot be served: ``agents.durable.launch()`` a second time,
    a run asked for its result after it ended without one. Still a ``RuntimeError``.

    >>> issubclass(AgentStateError, RuntimeError)
    True
    """
