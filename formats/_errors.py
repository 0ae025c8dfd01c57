"""The root of every error this library raises, and the root of the errors of ``formats``.

``GentError`` lives here, in the package the other two build on, so that ``toolchain``
and ``agents`` can hang their roots under it while ``formats`` imports neither. Each
package has one root under it, and every exception class the package defines is below
its root::

    GentError
    ├── FormatError        formats
    ├── ToolchainError     toolchain (and its extensions: variables, relay, stores, ...)
    └── AgentError         agents (models, durable runs, evals, the CLI)

``except GentError`` means "this library failed", a call with a bad argument too: it
raises the package's usage error, which keeps the builtin class callers catch it by
(``formats.FormatValueError`` is a ``ValueError``). What your own
code raises to tell a run something (``toolchain.ToolError``,
``toolchain.ToolCallRefused``, ``agents.AnswerRejected``) is not a ``GentError``: those
are ``toolchain.ModelFeedback``. ``tests/exception_tree.txt`` draws the whole tree.

>>> from formats import FormatParseError
>>> issubclass(FormatParseError, FormatError) and issubclass(FormatError, GentError)
True
"""

from __future__ import annotations

__all__ = ["FormatError", "FormatValueError", "GentError"]


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


# The usage errors: a call this package cannot honour (a bad argument, a wrong type, a
# call in the wrong state, a name not there). Each package has its own, named for its
# root and the builtin class it keeps as a mixin, so ``except ValueError`` written before
# the tree still catches what it caught, and the name says both roots it is under.


class FormatValueError(FormatError, ValueError):
    """A call to ``formats`` got a bad argument (a section registered twice, an invalid
    section name); still a ``ValueError``.

    >>> from formats import Section, XMLFormat
    >>> try:
    ...     XMLFormat().register_section(Section("not a name!"))
    ... except FormatError as error:
    ...     print(type(error).__name__, isinstance(error, ValueError))
    FormatValueError True
    """
