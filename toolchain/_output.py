"""Serialising tool outputs for observations: JSON (msgspec) or YAML (safe dumper).

A ``str`` output is shown exactly as the tool wrote it in both encodings. Anything
else is first reduced to JSON-like builtins (pydantic models via ``model_dump``,
dataclasses, Structs, enums, datetimes … via msgspec), then encoded.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec
import pydantic
import pydantic_core
import yaml

__all__ = ["OutputError", "to_builtins", "to_json", "to_yaml"]


class OutputError(TypeError):
    """A tool output could not be serialised."""


def _enc_hook(value: Any) -> Any:
    if isinstance(value, pydantic.BaseModel):
        return value.model_dump(mode="json")
    raise NotImplementedError(f"cannot serialise {type(value).__name__}")


def to_builtins(value: object) -> object:
    """JSON-like builtins for ``value``.

    >>> import dataclasses, datetime
    >>> @dataclasses.dataclass
    ... class Seat:
    ...     row: int
    ...     when: datetime.date
    >>> to_builtins({"seat": Seat(12, datetime.date(2026, 1, 27))})
    {'seat': {'row': 12, 'when': '2026-01-27'}}
    """
    try:
        if isinstance(value, pydantic.BaseModel):
            return value.model_dump(mode="json")
        return msgspec.to_builtins(value, enc_hook=_enc_hook)
    except (
        NotImplementedError,
        TypeError,
        ValueError,
        pydantic_core.PydanticSerializationError,
    ) as e:
        raise OutputError(f"tool output is not serialisable: {e}") from e


_json_encoder = msgspec.json.Encoder(enc_hook=_enc_hook)


def to_json(value: object) -> str:
    """Compact JSON; strings are passed through as written.

    >>> to_json({"temp": 21, "ok": True}), to_json("plain text")
    ('{"temp":21,"ok":true}', 'plain text')
    """
    if isinstance(value, str):
        return value
    try:
        return _json_encoder.encode(value).decode("utf-8")
    except (NotImplementedError, TypeError, ValueError, OverflowError) as error:
        raise OutputError(f"tool output is not serialisable: {error}") from error


_YAML_BREAKS = ("\x85", "\u2028", "\u2029")


class _BlockDumper(yaml.SafeDumper):
    """Multi-line strings as literal blocks: readable, and no escaped newlines."""


def _represent_str(dumper: yaml.representer.SafeRepresenter, data: str) -> yaml.ScalarNode:
    if any(ch in data for ch in _YAML_BREAKS):
        # PyYAML writes these raw in plain/single-quoted scalars, where YAML reads them
        # as line breaks: only double quotes (\N, \L, \P escapes) keep the text.
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style='"')
    if "\n" in data:
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", data)


_BlockDumper.add_representer(str, _represent_str)

_CDumper: type[Any] | None = None
if hasattr(yaml, "CSafeDumper"):

    class _CBlockDumper(yaml.CSafeDumper):
        """libyaml's emitter, ~4x faster, used only where it writes what _BlockDumper does."""

    _CBlockDumper.add_representer(str, _represent_str)
    _CDumper = _CBlockDumper

# libyaml escapes characters outside the BMP, C1 controls and U+FEFF, and writes empty
# keys differently; text made only of these characters comes out byte for byte the same.
_C_SAFE_TEXT = re.compile("[\t\n\x20-\x7e\xa0-\ud7ff\ue000-\ufefe\uff00-\ufffd]*")


def _c_dumper_agrees(value: object, depth: int = 0) -> bool:
    if depth > 100:
        return False
    if isinstance(value, str):
        return _C_SAFE_TEXT.fullmatch(value) is not None
    if isinstance(value, dict):
        return all(
            key != "" and _c_dumper_agrees(key, depth + 1) and _c_dumper_agrees(item, depth + 1)
            for key, item in value.items()
        )
    if isinstance(value, list):
        return all(_c_dumper_agrees(item, depth + 1) for item in value)
    return value is None or isinstance(value, bool | int | float)


def yaml_dumper_for(data: object) -> type[Any]:
    """The dumper ``to_yaml`` uses for ``data``: libyaml's where it agrees, else Python's."""
    if _CDumper is not None and _c_dumper_agrees(data):
        return _CDumper
    return _BlockDumper


def to_yaml(value: object) -> str:
    """Block-style YAML, keys in their original order; strings passed through as written.

    The document comes without its final line break (it sits inside a section), so
    ``yaml.safe_load(to_yaml(v) + "\\n") == v`` for JSON-like ``v``.

    >>> print(to_yaml({"flight": "AA100", "seats": [1, 2], "code": "0123"}))
    flight: AA100
    seats:
    - 1
    - 2
    code: '0123'
    """
    if isinstance(value, str):
        return value
    data = to_builtins(value)
    text = yaml.dump(
        data,
        Dumper=yaml_dumper_for(data),
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        width=1_000_000,
    )
    return text.removesuffix("\n").removesuffix("\n...")
