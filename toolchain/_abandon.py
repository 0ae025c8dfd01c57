"""Abandoned work: calls and tasks that ignored cancellation, never resumed again.

When the last reference to a suspended coroutine goes, Python closes it: it throws
``GeneratorExit`` in at its ``await``. Code that already swallowed ``CancelledError``
(a bare ``except:`` in a retry loop) swallows that too and goes on, and with no event
loop running its next ``await asyncio.sleep(...)`` fails at once, so it spins for ever:
at interpreter exit (module globals are cleared), or mid-run when a bounded store
drops an old entry. So abandoned work is kept alive for good, with one reference that
is never released. The cost is the memory of each abandoned call, which is logged.
"""

from __future__ import annotations

import sys

__all__ = ["abandon", "abandoned_count"]

_kept: list[object] = []
_count = 0


def abandon(work: object) -> None:
    """Keep ``work`` (a coroutine or task) alive until the process ends, unresumed."""
    global _count
    _count += 1
    if sys.implementation.name == "cpython":
        import ctypes  # only here: most runs never abandon anything

        # A reference no module owns: interpreter shutdown cannot drop it either.
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(work))
    else:  # pragma: no cover - other interpreters close objects at exit differently
        _kept.append(work)


def abandoned_count() -> int:
    """How many calls and tasks this process has abandoned so far."""
    return _count
