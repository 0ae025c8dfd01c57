"""Checked reading of the objects an SDK built from a server's answer.

Both SDKs build their response objects without validating them, so a server that
answers 200 with HTML, a JSON array or ``"content": 42`` yields a string, a list or an
object whose fields hold anything. The adapters read those objects only through these
helpers, which raise `Malformed` naming the field and what it held; the adapters turn
that into a `ModelCallError`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from agents._errors import AgentError
from toolchain.runtime import redact

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = [
    "Malformed",
    "checked_body",
    "checked_object",
    "describe",
    "describe_error",
    "field",
    "items",
    "no_events",
    "optional_text",
    "optional_tokens",
    "response_id",
    "text",
    "tokens",
]

_SHOWN = 80


class Malformed(AgentError):
    """A server's answer does not have the shape its API promises; the text says where."""


def _shorten(text: str, limit: int = _SHOWN) -> str:
    """``text`` on one line, cut to ``limit`` characters and redacted (it quotes a server)."""
    text = redact(" ".join(text.split()))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def describe(value: object) -> str:
    """A few words for a JSON value found where something else was expected.

    >>> describe(None), describe(42), describe("lots"), describe([1, 2])
    ('null', '42 (a number)', "'lots' (a string)", 'a JSON array')
    """
    from pydantic import BaseModel  # loaded by then: the SDKs build on it

    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return f"{value!r} (a number)"
    if isinstance(value, str):
        return f"{_shorten(value)!r} (a string)"
    if isinstance(value, Sequence):
        return "a JSON array"
    if isinstance(value, Mapping | BaseModel):
        return "a JSON object"
    return f"a {type(value).__name__}"


def describe_error(err: BaseException) -> str:
    """What an exception raised while reading an answer says, in one short line.

    >>> try:
    ...     json.loads("{not json}")
    ... except ValueError as err:
    ...     describe_error(err)
    'invalid JSON (Expecting property name enclosed in double quotes at line 1, column 2)'
    """
    if isinstance(err, Malformed):
        return str(err)
    if isinstance(err, json.JSONDecodeError):
        return f"invalid JSON ({err.msg} at line {err.lineno}, column {err.colno})"
    text = _shorten(str(err), 200)
    return f"{type(err).__name__}: {text}" if text else type(err).__name__


def checked_body(value: object) -> BaseModel:
    """The SDK's object for a whole JSON body, else `Malformed`.

    A body that is not JSON at all (an HTML error page, say) reaches the adapters as
    the SDK's plain string.
    """
    if isinstance(value, str):
        raise Malformed(f"the body is not JSON: {_shorten(value)!r}")
    return checked_object(value, "the body")


def checked_object(value: object, path: str) -> BaseModel:
    """``value`` if the SDK built an object from a JSON object there, else `Malformed`."""
    from pydantic import BaseModel  # loaded by then: the SDKs build on it

    if isinstance(value, BaseModel):
        return value
    raise Malformed(f"{path} is {describe(value)}, not an object")


def field(owner: BaseModel, name: str) -> object:
    """``owner.name``, ``None`` when the server left it out."""
    return getattr(owner, name, None)


def items(value: object, path: str, *, optional: bool = False) -> list[object]:
    """A JSON array's items; ``null`` reads as empty when ``optional``."""
    if value is None and optional:
        return []
    if isinstance(value, list):
        return list(value)  # pyright: ignore[reportUnknownArgumentType]  # JSON items
    raise Malformed(f"{path} is {describe(value)}, not a list")


def text(value: object, path: str) -> str:
    """A string."""
    if isinstance(value, str):
        return value
    raise Malformed(f"{path} is {describe(value)}, not a string")


def optional_text(value: object, path: str) -> str | None:
    """A string or ``None``."""
    if value is None or isinstance(value, str):
        return value
    raise Malformed(f"{path} is {describe(value)}, not a string")


def response_id(value: object) -> str:
    """A response's id, or ``""``: it is only ever shown (a span's ``gen_ai.response.id``),
    so one that is not a short string is left out rather than failing the reply."""
    return value if isinstance(value, str) and len(value) <= _LONGEST_ID else ""


_LONGEST_ID = 256


def tokens(value: object, path: str) -> int:
    """A token count: an integer, zero or more."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    raise Malformed(f"{path} is {describe(value)}, not a token count")


def optional_tokens(value: object, path: str) -> int:
    """A token count that may be absent (then 0)."""
    return 0 if value is None else tokens(value, path)


def no_events(content_type: str | None) -> Malformed:
    """The `Malformed` for a stream that ended before its first event.

    >>> str(no_events("text/html; charset=utf-8"))
    'the server answered text/html; charset=utf-8, not server-sent events'
    """
    if content_type and not content_type.lower().startswith("text/event-stream"):
        return Malformed(f"the server answered {content_type}, not server-sent events")
    return Malformed("it ended before its first event")


def json_object(value: object, path: str) -> dict[str, object]:
    """A JSON object the SDK kept as a plain dict (a tool call's arguments, say).

    >>> json_object({"a": 1}, "input")
    {'a': 1}
    """
    if not isinstance(value, dict):
        raise Malformed(f"{path} is {describe(value)}, not an object")
    return dict(value)  # pyright: ignore[reportUnknownArgumentType]  # JSON: str keys


def position(value: object, path: str) -> int:
    """An index into a list the server is building, such as a content block's: 0 or more."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    raise Malformed(f"{path} is {describe(value)}, not an index")
