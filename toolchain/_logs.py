"""`logger`: every logger of this library, each redacting the records logged to it.

A record's text may quote what a tool raised, what a server answered or what a model
wrote, and any of them may hold a key. So every logger of ours (``toolchain``,
``toolchain.mcp``, ``agents``, ``agents.otel``, ``agents.durable`` …) is made here, with
`RedactingFilter` on it: a filter on a logger sees only the records logged to that very
logger, never those its children pass up, so each logger needs its own (a test holds
the code to it: no module of ours calls ``logging.getLogger``). A module of its own
because both packages need it, and ``toolchain`` is the one ``agents`` may import.
"""

from __future__ import annotations

import logging

from toolchain._redact import redact

__all__ = ["RedactingFilter", "logger"]

_formatter = logging.Formatter()  # how a handler's formatter writes a traceback


class RedactingFilter(logging.Filter):
    """Blanks credentials (`toolchain._redact.redact`) in a record before any handler
    sees it: its message, its traceback and its stack.

    A message that held one becomes the redacted text (its arguments merged in). The
    traceback is written once, redacted, into ``exc_text``, which every
    ``logging.Formatter`` prints instead of writing its own; when it held a credential,
    ``exc_info`` is dropped too, so that no handler can write the original from the
    exception. A record with nothing to blank keeps its template, arguments and
    exception as they were.

    >>> key = "sk-" + "x" * 24
    >>> record = logging.LogRecord("agents", logging.INFO, "", 1, "key %s", (key,), None)
    >>> RedactingFilter().filter(record), record.getMessage()
    (True, 'key [REDACTED]')
    """

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # arguments that do not fit: logging reports it, as ever
            return True
        clean = redact(message)
        if clean != message:
            record.msg, record.args = clean, None
        if record.exc_info and not record.exc_text:
            written = _formatter.formatException(record.exc_info)
            record.exc_text = redact(written)
            if record.exc_text != written:
                record.exc_info = None
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True


_FILTER = RedactingFilter()


def logger(name: str) -> logging.Logger:
    """The logger ``name`` (``toolchain`` or ``agents``, or one under them), redacting.

    >>> any(isinstance(f, RedactingFilter) for f in logger("toolchain.mcp").filters)
    True
    """
    found = logging.getLogger(name)
    if _FILTER not in found.filters:
        found.addFilter(_FILTER)
    return found
