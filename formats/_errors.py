"""The root of every error this library raises, and the root of the errors of ``formats``.

``GentError`` lives here, in the package the other two build on, so that ``toolchain``
and ``agents`` can hang their roots under it while ``formats`` imports neither. Each
package has one root under it, and every exception class the package defines is below
its root::

    GentError
    ├── FormatError        formats
    ├── ToolchainError     toolchain (and its extensions: variables, relay, stores, ...)
    └── AgentError         agents (models, durable runs, evals, the CLI)

``except GentError`` means "this library failed". A call with a bad argument (an
invalid section name, a negative limit) still raises Python's own ``ValueError`` or
``TypeError``, as the standard library does. What your own
code raises to tell a run something (``toolchain.ToolError``,
``toolchain.ToolCallRefused``, ``agents.AnswerRejected``) is not a ``GentError``: those
are ``toolchain.ModelFeedback``. ``tests/exception_tree.txt`` draws the whole tree.

>>> from formats import FormatParseError
>>> issubclass(FormatParseError, FormatError) and issubclass(FormatError, GentError)
True
"""

from __future__ import annotations

__all__ = ["FormatError", "GentError"]


class GentError(Exception):
    """Base of every exception class gent-py defines: ``except GentError`` catches any.

    Each package's errors have a root of their own below it: ``formats.FormatError``,
    ``toolchain.ToolchainError``, ``agents.AgentError``. Builtin bases stay where callers
    rely on them (``ArgumentsError`` is still a ``ValueError``).

    >>> from formats import MarkdownFormat, Section
    >>> try:
    ...     MarkdownFormat().register_section(Section("answer")).parse("no sections here")
    ... except GentError as error:
    ...     print(type(error).__name__)
    FormatParseError
    """


class FormatError(GentError):
    """Base of the errors ``formats`` raises.

    >>> issubclass(FormatError, GentError)
    True
    """
