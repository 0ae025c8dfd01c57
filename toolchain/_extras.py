"""Optional extras: a dependency that is not installed is named with the extra that
brings it.

``agents.durable`` needs ``dbos``, ``agents.otel`` OpenTelemetry, ``toolchain.testing``
pytest and syrupy, ``RedisStore`` redis, ``toolchain.mcp`` the MCP SDK. Without them a
bare ``ModuleNotFoundError: No module named 'dbos'`` leaves the user to guess that
``pip install 'gent-py[durable]'`` is the fix. The error raised instead, ``MissingExtra``,
is still a ``ModuleNotFoundError`` (so ``except ImportError`` works as before) with
``.name`` kept, and says what to install.

It is a library error too (a ``ToolchainError``, so ``except GentError`` catches it): the
call into this library could not be served, and the message says why and what to do,
as any of our errors does. It is the toolchain's, whichever package asked: the helper
that raises it is the toolchain's, and ``agents`` uses it as it uses the rest of
``toolchain.runtime``.

A module of its own, small as it is: each optional module imports it before its
dependency, so it must import nothing of ours that could pull one in (``_errors``
imports only ``formats``).
"""

from __future__ import annotations

from collections.abc import Generator
from contextlib import contextmanager

from toolchain._errors import ToolchainError

__all__ = ["MissingExtra", "missing_extra", "requires_extra"]


class MissingExtra(ToolchainError, ModuleNotFoundError):
    """A feature needs an optional dependency that is not installed; the message names the
    extra that brings it (``pip install 'gent-py[durable]'``), ``.name`` the module.

    >>> error = missing_extra("redis", "redis", "RedisStore")
    >>> isinstance(error, ModuleNotFoundError), error.name
    (True, 'redis')
    """


def missing_extra(
    module: str, extra: str, feature: str, *, name: str | None = None
) -> MissingExtra:
    """The error for ``feature`` needing ``module``, which the ``extra`` installs;
    ``name`` (default ``module``) is the module whose import failed.

    >>> error = missing_extra("dbos", "durable", "agents.durable")
    >>> print(error)
    agents.durable needs dbos, which is not installed: pip install 'gent-py[durable]'
    >>> error.name
    'dbos'
    """
    return MissingExtra(
        f"{feature} needs {module}, which is not installed: pip install 'gent-py[{extra}]'",
        name=module if name is None else name,
    )


@contextmanager
def requires_extra(extra: str, feature: str, *modules: str) -> Generator[None]:
    """Imports inside it that fail for one of ``modules`` (or a module inside one of
    them) raise `missing_extra`; any other import error goes through unchanged.

    >>> with requires_extra("durable", "agents.durable", "no_such_module_here"):
    ...     import no_such_module_here
    Traceback (most recent call last):
    ...
    toolchain._extras.MissingExtra: agents.durable needs no_such_module_here, which is not \
installed: pip install 'gent-py[durable]'
    """
    try:
        yield
    except ModuleNotFoundError as error:
        name = error.name or ""
        package = name.partition(".")[0]
        if package not in modules:
            raise
        raise missing_extra(package, extra, feature, name=name) from error
