"""What every store checks the same way: lifetimes and ids."""

from __future__ import annotations

import math
import re

from toolchain._errors import ToolchainValueError
from toolchain.stores._protocol import DEFAULT_TTL

__all__ = ["is_well_formed_id", "resolve_ttl"]

# What `new_id` makes (URL-safe base64), with room for longer ids of the same alphabet.
# Anything else (`*`, `:`, `/`, control characters, lone surrogates, megabytes of text)
# cannot be an id a store handed out, so it is unknown without asking the backend.
_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")


def resolve_ttl(ttl: float | None) -> float:
    """Seconds to live: ``DEFAULT_TTL`` for None; a positive, finite number otherwise."""
    if ttl is None:
        return DEFAULT_TTL
    if not (math.isfinite(ttl) and ttl > 0):
        raise ToolchainValueError(f"ttl must be a positive, finite number of seconds, not {ttl!r}")
    return float(ttl)


def is_well_formed_id(id: str) -> bool:
    """Whether ``id`` could have come from ``new_id`` (so is worth looking up)."""
    return _ID.fullmatch(id) is not None
