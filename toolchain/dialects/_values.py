"""Untyped decoded values (JSON, Python literals) seen through typed views, and the
JSON decoding every reader shares."""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

from toolchain._errors import ToolchainValueError

__all__ = ["as_list", "as_mapping", "no_constants"]


def no_constants(name: str) -> object:
    """``parse_constant`` for a JSON decoder: NaN and Infinity are not JSON (Python's
    decoder reads them as floats no JSON Schema number can be)."""
    raise ToolchainValueError(f"{name} is not JSON: write a finite number in ASCII digits")


def as_mapping(value: object) -> dict[str, object] | None:
    """``value`` as a dict with text keys, or ``None`` when it is not a mapping."""
    if not isinstance(value, Mapping):
        return None
    return {str(key): item for key, item in cast("Mapping[object, object]", value).items()}


def as_list(value: object) -> list[object] | None:
    """``value`` as a list, or ``None`` when it is not one."""
    return list(cast("list[object]", value)) if isinstance(value, list) else None
