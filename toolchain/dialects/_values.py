"""Untyped decoded values (JSON, Python literals) seen through typed views."""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

__all__ = ["as_list", "as_mapping"]


def as_mapping(value: object) -> dict[str, object] | None:
    """``value`` as a dict with text keys, or ``None`` when it is not a mapping."""
    if not isinstance(value, Mapping):
        return None
    return {str(key): item for key, item in cast("Mapping[object, object]", value).items()}


def as_list(value: object) -> list[object] | None:
    """``value`` as a list, or ``None`` when it is not one."""
    return list(cast("list[object]", value)) if isinstance(value, list) else None
