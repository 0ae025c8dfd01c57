"""Optional extras: a dependency that is not installed is named with the extra that
brings it.

``agents.durable`` needs ``dbos``, ``agents.otel`` OpenTelemetry, ``toolchain.testing``
pytest and syrupy, ``RedisStore`` redis, ``toolchain.mcp`` the MCP SDK. Without them a
bare ``ModuleNotFoundError: No module named 'dbos'`` leaves the user to guess that
``pip install 'gent-py[durable]'`` is the fix. The error raised instead is still a
``ModuleNotFoundError`` (so ``except ImportError`` works as before) with ``.name``
kept, and says what to install.

A module of its own, small as it is: each optional module imports it before its
dependency, so it must import nothing of ours that could pull one in.
"""

from __future__ import annotations

from collections.abc import Generator
from contextlib import contextmanager

__all__ = ["missing_extra", "requires_extra"]


def missing_extra(
    module: str, extra: str, feature: str, *, name: str | None = None
) -> ModuleNotFoundError:
    """The error for ``feature`` needing ``module``, which the ``extra`` installs;
    ``name`` (default ``module``) is the module whose import failed.

    >>> error = missing_extra("dbos", "durable", "agents.durable")
    >>> print(error)
    agents.durable needs dbos, which is not installed: pip install 'gent-py[durable]'
    >>> error.name
    'dbos'
    """
    return ModuleNotFoundError(
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
    ModuleNotFoundError: agents.durable needs no_such_module_here, which is not \
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
