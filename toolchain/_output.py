"""Serialising tool outputs for observations: JSON (msgspec) or YAML (safe dumper).

A ``str`` output is shown exactly as the tool wrote it in both encodings. Anything
else is first reduced to JSON-like builtins (pydantic models via ``model_dump``,
dataclasses, Structs, enums, datetimes … via msgspec), then encoded.

Every failure is an ``OutputError`` whose message says what to change: a dict key that
is not a string (numbers are accepted, as JSON object keys written as text), a value
that contains itself or nests too deeply, a lone surrogate (text no encoder can write),
or a type nothing knows how to serialise.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any, Protocol, cast

import msgspec
import pydantic
import pydantic_core
import yaml

from toolchain._yaml_fast import plain_cache, simple_yaml

__all__ = ["OutputError", "to_builtins", "to_json", "to_yaml"]


class OutputError(TypeError):
    """A tool output could not be serialised."""


def _enc_hook(value: Any) -> Any:
    if isinstance(value, pydantic.BaseModel):
        return value.model_dump(mode="json")
    raise NotImplementedError(f"cannot serialise {type(value).__name__}")


_SURROGATE = re.compile("[\ud800-\udfff]")
_CONTAINERS = (dict, list, tuple, set, frozenset)
_MISSING = object()


def _surrogate_problem(text: str) -> OutputError | None:
    found = _SURROGATE.search(text)
    if found is None:
        return None
    return OutputError(
        f"tool output holds an unpaired surrogate (U+{ord(found.group()):04X}) at "
        f"character {found.start()} of {_shown(text)}, which is not valid Unicode; "
        "decode bytes with errors='replace' (or return bytes as media)"
    )


def _check_text(text: str) -> str:
    problem = _surrogate_problem(text)
    if problem is not None:
        raise problem
    return text


def _shown(value: object, limit: int = 60) -> str:
    try:
        text = repr(value)
    except Exception:  # a repr that raises, or an int beyond the digit limit
        return f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _key_problem(key: object) -> OutputError:
    return OutputError(
        f"dict key {_shown(key)} is a {type(key).__name__}; output keys must be strings "
        "(or numbers, which are written as strings)"
    )


def _first_bad_builtin_key(data: object) -> object:
    """The first dict key in ``data`` (to_builtins output) that is not str, int or float."""
    stack: list[object] = [data]
    while stack:
        item = stack.pop()
        if type(item) is dict:
            mapping = cast("dict[object, object]", item)
            for key in mapping:
                if type(key) is not str and type(key) is not int and type(key) is not float:
                    return key
            stack.extend(mapping.values())
        elif type(item) is list:
            stack.extend(cast("list[object]", item))
    return _MISSING


def _json_key_ok(key: object) -> bool:
    try:
        _json_encoder.encode({key: None})
    except Exception:
        return False
    return True


def _bad_json_key(container: object) -> object:
    if not isinstance(container, dict):
        return _MISSING
    keys = cast("dict[object, object]", container)
    return next((key for key in keys if not _json_key_ok(key)), _MISSING)


def _is_container(value: object) -> bool:
    return isinstance(value, _CONTAINERS)


def _children(item: object) -> Iterator[object]:
    if isinstance(item, dict):
        return iter(cast("dict[object, object]", item).values())
    return iter(cast("Iterable[object]", item))


def _diagnose(value: object) -> OutputError | None:
    """Why ``value`` cannot be serialised, found by a walk over its plain containers.

    Names the first dict key JSON cannot take, or says the value contains itself. Runs
    only after a failure; iterative (no recursion limit) and linear: each container is
    explored once, however often it is shared.
    """
    on_path: set[int] = set()
    done: set[int] = set()
    stack: list[tuple[object, Iterator[object]]] = []
    child: object = value
    while True:
        if _is_container(child) and id(child) not in done:
            if id(child) in on_path:
                return OutputError(
                    f"tool output contains itself (a {type(child).__name__} inside its own "
                    "items); return a value without cycles"
                )
            bad = _bad_json_key(child)
            if bad is not _MISSING:
                return _key_problem(bad)
            on_path.add(id(child))
            stack.append((child, _children(child)))
        while stack:
            item, children = stack[-1]
            child = next(children, _MISSING)
            if child is not _MISSING:
                break
            stack.pop()
            on_path.discard(id(item))
            done.add(id(item))
        else:
            return None


MAX_YAML_DEPTH = 200
"""YAML outputs nested deeper are refused up front: PyYAML's emitter recurses several
frames per level, so whether it would fail depended on the interpreter's recursion
limit at the time."""


def _deeper_than(data: object, limit: int) -> bool:
    """Whether lists/dicts in ``data`` nest more than ``limit`` levels (iterative)."""
    stack: list[tuple[object, int]] = [(data, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth >= limit:
                return True
            children = (
                cast("dict[object, object]", item).values()
                if isinstance(item, dict)
                else cast("list[object]", item)
            )
            stack.extend((child, depth + 1) for child in children)
    return False


def _too_deep() -> OutputError:
    return OutputError(
        "tool output is nested too deeply to serialise, or contains itself through an "
        "object; return a flatter value"
    )


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
    if type(value) in _PLAIN:  # most tool outputs are text: nothing to convert or check
        return value
    try:
        if isinstance(value, pydantic.BaseModel):
            data: object = value.model_dump(mode="json")
        else:
            data = msgspec.to_builtins(value, enc_hook=_enc_hook)
    except RecursionError as error:
        raise (_diagnose(value) or _too_deep()) from error
    except (
        NotImplementedError,
        TypeError,
        ValueError,
        pydantic_core.PydanticSerializationError,
    ) as e:
        problem = _diagnose(value) or OutputError(f"tool output is not serialisable: {e}")
        raise problem from e
    bad = _first_bad_builtin_key(data)
    if bad is not _MISSING:
        raise _diagnose(value) or _key_problem(bad)
    return data


_PLAIN = frozenset({str, int, float, bool, type(None)})
_json_encoder = msgspec.json.Encoder(enc_hook=_enc_hook)


def to_json(value: object) -> str:
    """Compact JSON; strings are passed through as written.

    >>> to_json({"temp": 21, "ok": True}), to_json("plain text")
    ('{"temp":21,"ok":true}', 'plain text')
    """
    if isinstance(value, str):
        return _check_text(value)
    try:
        return _json_encoder.encode(value).decode("utf-8")
    except RecursionError as error:
        raise (_diagnose(value) or _too_deep()) from error
    except UnicodeEncodeError as error:
        problem = _surrogate_problem(error.object) or OutputError(f"tool output: {error}")
        raise problem from error
    except (NotImplementedError, TypeError, ValueError, OverflowError) as error:
        try:  # the slower path names the bad key, also inside dataclasses and models
            to_builtins(value)
        except OutputError as problem:
            raise problem from error
        raise OutputError(f"tool output is not serialisable: {error}") from error


_YAML_BREAKS = ("\x85", "\u2028", "\u2029")


class _BlockDumper(yaml.SafeDumper):
    """Multi-line strings as literal blocks: readable, and no escaped newlines."""


class _ScalarRepresenter(Protocol):
    """The part of a PyYAML representer ``_represent_str`` uses, with ``value`` typed
    (the PyYAML stubs leave it unannotated)."""

    def represent_scalar(
        self, tag: str, value: str, style: str | None = None
    ) -> yaml.ScalarNode: ...


def _represent_str(dumper: _ScalarRepresenter, data: str) -> yaml.ScalarNode:
    _check_text(data)  # as in to_json: a lone surrogate is not Unicode text
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
            for key, item in cast("dict[object, object]", value).items()  # any dict
        )
    if isinstance(value, list):
        return all(_c_dumper_agrees(item, depth + 1) for item in cast("list[object]", value))
    return value is None or isinstance(value, bool | int | float)


def yaml_dumper_for(data: object) -> type[Any]:
    """The dumper ``to_yaml`` uses for ``data``: libyaml's where it agrees, else Python's."""
    if _CDumper is not None and _c_dumper_agrees(data):
        return _CDumper
    return _BlockDumper


def _asked_plain(text: str) -> bool:
    """Whether ``to_yaml`` writes ``text`` as a plain scalar (no quotes, no block)."""
    try:
        dumped = yaml.dump(text, Dumper=_BlockDumper, allow_unicode=True, width=1_000_000)
    except (OutputError, ValueError, yaml.YAMLError):
        return False
    return dumped == f"{text}\n...\n"


_written_plain = plain_cache(_asked_plain)


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
        return _check_text(value)
    data = to_builtins(value)
    simple = simple_yaml(data, _written_plain)
    if simple is not None:
        return simple
    if _deeper_than(data, MAX_YAML_DEPTH):
        raise _too_deep()
    try:
        text = yaml.dump(
            data,
            Dumper=yaml_dumper_for(data),
            sort_keys=False,
            allow_unicode=True,
            default_flow_style=False,
            width=1_000_000,
        )
    except OutputError:
        raise
    except RecursionError as error:  # PyYAML recurses several frames per level
        raise _too_deep() from error
    except (ValueError, TypeError, yaml.YAMLError) as error:  # e.g. an int past 4300 digits
        raise OutputError(f"tool output is not serialisable: {error}") from error
    return text.removesuffix("\n").removesuffix("\n...")
