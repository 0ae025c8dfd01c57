"""Public names renamed in this release ("iteration" became "step"), kept for one more.

Every alias in ``agents`` is made here, so the next release deletes them in one place:
``renamed_names`` gives a module the ``__getattr__`` (PEP 562) that hands out a renamed
class under its old name with a ``DeprecationWarning``; fields and options keep theirs
as properties and keywords marked ``typing_extensions.deprecated`` beside them.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable, Mapping

__all__ = ["renamed_names"]


def renamed_names(
    module: str,
    renamed: Mapping[str, str],
    otherwise: Callable[[str], object] | None = None,
) -> Callable[[str], object]:
    """A module ``__getattr__``: each old name in ``renamed`` (old → new) is the object
    of its new name, with a warning naming both; any other name is ``otherwise``'s to
    find, or an AttributeError.

    >>> import types
    >>> demo = types.ModuleType("demo")
    >>> demo.Step = "the step"
    >>> import sys; sys.modules["demo"] = demo
    >>> lookup = renamed_names("demo", {"Iteration": "Step"})
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as seen:
    ...     warnings.simplefilter("always")
    ...     lookup("Iteration")
    'the step'
    >>> str(seen[0].message)
    'demo.Iteration is demo.Step now; the old name goes in the next release'
    >>> del sys.modules["demo"]
    """

    def __getattr__(name: str) -> object:
        new = renamed.get(name)
        if new is None:
            if otherwise is not None:
                return otherwise(name)
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        warnings.warn(
            f"{module}.{name} is {module}.{new} now; the old name goes in the next release",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(sys.modules[module], new)

    return __getattr__
