"""What a reference to a boxed value is: its two written forms, reading the id out of
either, where readers get the value behind it, and the error when it names nothing.

The relay shows the model ``internal://<id>`` (``opaque`` mode) or the resource link
``{"type":"resource_link","uri":"internal://<id>"}`` (``json`` mode) in place of a
large output; the model passes either back as it was written.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Literal, Protocol, cast

from toolchain import ExecutionContext, ToolError
from toolchain._errors import ToolchainError

__all__ = [
    "Reference",
    "ReferenceReader",
    "RelayMode",
    "UnknownReference",
    "clip",
    "parse_reference",
]

RelayMode = Literal["opaque", "json"]
"""How the relay shows a boxed value: ``internal://<id>``, or a ``resource_link`` JSON."""

Reference = str | dict[str, object]
"""A reference as a tool argument: a string of either form, or the resource link object."""

_MAX_REFERENCE = 1_000  # a longer string is a value, not a reference
_URI = re.compile(r"(?i:internal)://([A-Za-z0-9._~-]{1,200})\Z")


class ReferenceReader(Protocol):
    """Where the reader tools get a referenced value from (the relay's store).

    ``reference`` is always the canonical ``internal://<id>``, whichever form the model
    wrote (``parse_reference(reference)`` is the id). ``read`` returns the whole value
    as text, and raises ``UnknownReference`` when the id is unknown, expired or of
    another run (scope it with ``ctx``). Any other exception fails the call too, shown
    as ``<tool> failed: <Type>: <message>``.
    """

    async def read(self, ctx: ExecutionContext, reference: str) -> str: ...


class UnknownReference(ToolError, ToolchainError, LookupError):
    """A reference that cannot be resolved: unknown, expired, of another run, or not a
    reference at all. The message is written for the model; ``of(reference)`` writes
    the usual one.

    It is a ``ToolError``, so a chain shows the model just the message (not
    ``... failed: UnknownReference: ...``), and a ``LookupError`` for programs.

    >>> str(UnknownReference.of("internal://a1b2"))  # doctest: +NORMALIZE_WHITESPACE
    'internal://a1b2 is unknown or expired (references belong to one run): use only a
    reference a tool returned in this run, unchanged'
    >>> error = UnknownReference("no such page", reference="internal://x")
    >>> str(error), error.reference, isinstance(error, LookupError)
    ('no such page', 'internal://x', True)
    """

    def __init__(self, message: str, *, reference: str = "") -> None:
        super().__init__(message)
        self.reference = reference
        """The reference as given, when the raiser set it."""

    @classmethod
    def of(cls, reference: str) -> UnknownReference:
        """The usual error for ``reference`` (``internal://<id>``, or just the id)."""
        shown = reference if "://" in reference else f"internal://{reference}"
        return cls(
            f"{clip(shown)} is unknown or expired (references belong to one run): use only "
            "a reference a tool returned in this run, unchanged",
            reference=reference,
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (type(self), str(self), self.reference))


def _rebuild(kind: type[UnknownReference], message: str, reference: str) -> UnknownReference:
    return kind(message, reference=reference)


def parse_reference(value: object) -> str | None:
    """The id of a reference written as ``internal://<id>`` or as the resource link
    ``{"type":"resource_link","uri":"internal://<id>"}`` (a JSON string or a mapping;
    other keys are ignored, and a missing ``type`` is allowed); None for anything else.

    >>> parse_reference("internal://a1B2-c3_")
    'a1B2-c3_'
    >>> parse_reference(' {"type": "resource_link", "uri": "internal://a1"} ')
    'a1'
    >>> parse_reference({"type": "resource_link", "uri": "internal://a1", "name": "page"})
    'a1'
    >>> [parse_reference(v) for v in ("the transcript", "internal://", {"uri": "http://x"})]
    [None, None, None]
    """
    if isinstance(value, str):
        text = value.strip()
        if len(text) > _MAX_REFERENCE:
            return None
        if not text.startswith("{"):
            found = _URI.match(text)
            return found.group(1) if found else None
        try:
            value = json.loads(text)
        except ValueError:
            return None
    if not isinstance(value, Mapping):
        return None
    link = cast("Mapping[object, object]", value)
    uri = link.get("uri")
    if link.get("type", "resource_link") != "resource_link" or not isinstance(uri, str):
        return None
    found = _URI.match(uri.strip())
    return found.group(1) if found else None


def clip(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
