"""The arguments of the reader tools, with the reference typed and described for the
relay's mode (a string in ``opaque`` mode; a string or the resource link in ``json``)."""

from __future__ import annotations

from typing import Any, TypeVar, cast

import pydantic
from pydantic import BaseModel, ConfigDict, Field

from toolchain.relay._grep import MAX_WINDOW
from toolchain.relay._references import Reference, RelayMode
from toolchain.relay._text import MAX_LINES

__all__ = ["GrepInput", "LinesInput", "ReferenceInput", "SliceInput", "for_mode"]

_START_INDEX = (
    "Index of the first character: 0 is the start; negative counts from the end "
    "(-200 starts 200 characters before the end)."
)

_START_LINE = (
    "First line, counted from 0; negative counts from the end (-20 with line_count 20: "
    "the last 20 lines)."
)


class ReferenceInput(BaseModel):
    """Arguments of ``internal_resource_read`` and ``internal_resource_length``."""

    model_config = ConfigDict(extra="forbid")

    opaque_reference: Reference = Field(description="The reference, as a tool returned it.")


class SliceInput(ReferenceInput):
    """Arguments of ``internal_resource_read_slice``."""

    start_index: int = Field(description=_START_INDEX)
    length: int = Field(description="How many characters to return (at least 1).")


class LinesInput(ReferenceInput):
    """Arguments of ``internal_resource_read_lines``."""

    start_line: int = Field(description=_START_LINE)
    line_count: int = Field(default=50, description=f"How many lines to return (1 to {MAX_LINES}).")


class GrepInput(ReferenceInput):
    """Arguments of ``internal_resource_grep``."""

    pattern: str = Field(
        description=(
            "RE2 regular expression, e.g. <img or (?i)total: \\d+ (no lookarounds or "
            "backreferences; (?i) ignores case)."
        )
    )
    window: int = Field(
        default=2,
        description=f"Context lines to show before and after each match (0 to {MAX_WINDOW}).",
    )


_REFERENCE_ARGUMENT: dict[RelayMode, str] = {
    "opaque": "The reference exactly as a tool returned it, e.g. internal://a1b2c3.",
    "json": (
        "The resource link exactly as a tool returned it, e.g. "
        '{"type":"resource_link","uri":"internal://a1b2c3"} (the object, or its uri).'
    ),
}

_ModelT = TypeVar("_ModelT", bound=ReferenceInput)
_variants: dict[tuple[type[ReferenceInput], RelayMode], type[ReferenceInput]] = {}


def for_mode(base: type[_ModelT], mode: RelayMode) -> type[_ModelT]:
    """``base`` with ``opaque_reference`` typed and described for ``mode``: a string in
    opaque mode; a string or the resource link object in json mode."""
    found = _variants.get((base, mode))
    if found is None:
        field: Any = Field(description=_REFERENCE_ARGUMENT[mode])
        if mode == "opaque":
            found = pydantic.create_model(
                base.__name__, __base__=base, __module__=__name__, opaque_reference=(str, field)
            )
        else:
            found = pydantic.create_model(
                base.__name__,
                __base__=base,
                __module__=__name__,
                opaque_reference=(Reference, field),
            )
        _variants[(base, mode)] = found
    return cast("type[_ModelT]", found)
