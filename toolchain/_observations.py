"""How tool outputs are written for the model: ``observations="json" | "yaml" | "toon" | "auto"``.

The serialisers (compact JSON by msgspec, YAML by the safe dumper, or written directly for
simple outputs with the same text PyYAML writes), and the choice between them per output:
``toon`` (a list of records as one table) where it is shorter, ``auto`` (the fewest o200k
tokens of the three). Each part's rules are stated where it begins below.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Iterable, Iterator
from types import ModuleType
from typing import Any, Literal, Protocol, TypeAlias, cast, get_args

import msgspec
import pydantic
import pydantic_core
import yaml

from toolchain._errors import ToolchainError, ToolchainValueError

# The YAML of simple tool outputs, written directly: the same text PyYAML writes.
#
# ``to_yaml`` sends every output through ``yaml.dump``, whose representer and emitter
# cost tens of microseconds even for ``{"key": "alpha", "value": 5}``: most of a native
# step's own time. Outputs made of dicts with string keys, lists, ints, floats, bools,
# None and short one-line strings PyYAML writes plain are laid out here by the rules
# PyYAML's block emitter follows (two-space indent, a list under a key not indented);
# anything else (a string PyYAML would quote, a long or multi-line one, deep nesting)
# returns None and takes the ``yaml.dump`` path. Whether PyYAML writes a string plain is
# asked of PyYAML itself, once per string, unless it is obviously plain (a word-like
# string that is not a YAML boolean or null). A property test holds the two paths to
# the same text.

__all__ = [
    "TOON_MAX_KEYS",
    "YAML_CANDIDATE_CHARS",
    "ObservationEncoding",
    "OutputError",
    "check_observations",
    "encoder_for",
    "simple_yaml",
    "to_auto",
    "to_builtins",
    "to_json",
    "to_toon",
    "to_yaml",
]

MAX_DEPTH = 20
MAX_TEXT = 100  # longer strings go through yaml.dump (and long keys are written "? key")
_CACHE_SIZE = 4096

# Letters, digits and "_", runs joined by one of " ._/-": PyYAML writes these plain
# unless the whole string is one of the words its resolver reads as a bool or null.
_WORDLIKE = re.compile(r"[A-Za-z][A-Za-z0-9_]*(?:[ ._/-][A-Za-z0-9_]+)*")
_RESOLVED_WORDS = frozenset({"y", "n", "yes", "no", "true", "false", "on", "off", "null"})


class _Plain:
    """Whether PyYAML writes a string as a plain scalar, remembered per string."""

    def __init__(self, asked: Callable[[str], bool]) -> None:
        self._asked = asked
        self._known: dict[str, bool] = {}

    def plain(self, text: str) -> bool:
        if len(text) > MAX_TEXT:
            return False  # before any hashing: a long string is never plain here
        # Looked up before the regex: outputs repeat their keys and short values (a str
        # keeps its hash), and a hit skips it. Only strings up to MAX_TEXT are kept.
        known = self._known.get(text)
        if known is not None:
            return known
        if _WORDLIKE.fullmatch(text) is not None and text.lower() not in _RESOLVED_WORDS:
            known = True
        else:
            known = self._asked(text)
        if len(self._known) >= _CACHE_SIZE:
            self._known.clear()
        self._known[text] = known
        return known


def _float(value: float) -> str | None:
    """PyYAML's text for a float (``represent_float``); None for nan and infinities."""
    if not math.isfinite(value):
        return None
    text = repr(value).lower()
    if "." not in text and "e" in text:
        text = text.replace("e", ".0e", 1)
    return text


class _Writer:
    __slots__ = ("_plain",)

    def __init__(self, plain: Callable[[str], bool]) -> None:
        self._plain = plain

    def write(self, data: object) -> str | None:
        """``data`` as `simple_yaml` writes it, or None."""
        kind = type(data)
        if (kind is not dict and kind is not list) or not data:
            return self.scalar(data)  # a scalar, an empty collection or another type
        lines: list[str] = []
        return "\n".join(lines) if self.block(data, 0, lines) else None

    def scalar(self, value: object) -> str | None:
        """The one-line text of a scalar or an empty collection; None if not simple."""
        kind = type(value)
        if kind is str:
            text = cast(str, value)  # kind is str exactly
            return text if self._plain(text) else None
        if kind is int:
            number = cast(int, value)  # kind is int exactly (a bool is not)
            return str(number) if -(10**18) < number < 10**18 else None
        if kind is bool:
            return "true" if value else "false"
        if value is None:
            return "null"
        if kind is float:
            return _float(cast(float, value))
        if kind is dict and not value:
            return "{}"
        if kind is list and not value:
            return "[]"
        return None

    def block(self, value: object, depth: int, lines: list[str]) -> bool:
        """Append the lines of a non-empty dict or list; False if not simple."""
        if depth > MAX_DEPTH:
            return False
        if type(value) is dict:
            mapping = cast("dict[object, object]", value)
            plain = self._plain
            for key, item in mapping.items():
                if type(key) is not str or not key or not plain(key):
                    return False
                if type(item) is str:  # the most common value, without a call to scalar
                    if not plain(item):
                        return False  # quoted or a block: yaml.dump writes it
                    lines.append(f"{key}: {item}")
                    continue
                text = self.scalar(item)
                if text is not None:
                    lines.append(f"{key}: {text}")
                    continue
                inner: list[str] = []
                if not self.block(item, depth + 1, inner):
                    return False
                lines.append(f"{key}:")
                if type(item) is dict:
                    lines.extend(f"  {line}" for line in inner)
                else:  # a list under a key is not indented
                    lines.extend(inner)
            return True
        if type(value) is list:
            sequence = cast("list[object]", value)
            for item in sequence:
                text = self.scalar(item)
                if text is not None:
                    lines.append(f"- {text}")
                    continue
                inner = []
                if not self.block(item, depth + 1, inner):
                    return False
                lines.append(f"- {inner[0]}")
                lines.extend(f"  {line}" for line in inner[1:])
            return True
        return False


def simple_yaml(data: object, plain: Callable[[str], bool]) -> str | None:
    """``data`` (JSON-like builtins, not a str) as ``to_yaml`` writes it, or None.

    ``plain(text)`` says whether PyYAML writes ``text`` as a plain scalar.
    """
    return _Writer(plain).write(data)


def plain_cache(asked: Callable[[str], bool]) -> Callable[[str], bool]:
    """A remembering ``plain`` for `simple_yaml`, asking ``asked`` once per string."""
    return _Plain(asked).plain


# Serialising tool outputs for observations: JSON (msgspec) or YAML (safe dumper).
#
# A ``str`` output is shown exactly as the tool wrote it in both encodings. Anything
# else is first reduced to JSON-like builtins (pydantic models via ``model_dump``,
# dataclasses, Structs, enums, datetimes … via msgspec), then encoded.
#
# Every failure is an ``OutputError`` whose message says what to change: a dict key that
# is not a string (numbers are accepted, as JSON object keys written as text), a value
# that contains itself or nests too deeply, a lone surrogate (text no encoder can write),
# or a type nothing knows how to serialise.


class OutputError(ToolchainError, TypeError):
    """A tool output could not be serialised."""


def _enc_hook(value: Any) -> Any:
    if isinstance(value, pydantic.BaseModel):
        return value.model_dump(mode="json")
    raise NotImplementedError(f"cannot serialise {type(value).__name__}")


_SURROGATE = re.compile("[\ud800-\udfff]")
_CONTAINERS = (dict, list, tuple, set, frozenset)
_MISSING = object()


def _surrogate_problem(text: str) -> OutputError | None:
    # ASCII text holds no surrogate, and isascii() reads a flag the str keeps: no scan.
    found = None if text.isascii() else _SURROGATE.search(text)
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
_direct = _Writer(_written_plain)


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
    # Most outputs are plain dicts, lists and scalars already: the writer takes exact
    # types only, which to_builtins returns unchanged (copied), so they are written
    # directly, without the copy and its key check.
    simple = _direct.write(value)
    if simple is not None:
        return simple
    data = to_builtins(value)
    simple = _direct.write(data) if data is not value else None
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


# How tool outputs are written for the model: ``observations="json" | "yaml" | "toon" | "auto"``.
#
# A chain's call syntax and the encoding of its observations are separate choices: a
# ``JSONToolChain(observations="toon")`` still reads JSON calls and shows each output as
# TOON (Token-Oriented Object Notation, https://github.com/toon-format/spec): objects as
# indented ``key: value`` lines, a list of primitives on one line (``tags[2]: a,b``) and a
# list of records with the same keys as a table whose header names the fields once::
#
#     users[2]{id,name}:
#       1,Ada
#       2,Bob
#
# ``auto`` writes each output as JSON and TOON, and as YAML too when its JSON is at most
# ``YAML_CANDIDATE_CHARS`` long, and keeps the text with the fewest o200k tokens
# (``toolchain._tokens``), ties going to JSON, then YAML. Counts are exact, not estimated,
# so ``auto`` never shows more tokens than compact JSON would. YAML is left out of large
# outputs for speed: PyYAML writes about 1 ms per kilobyte where TOON takes tens of
# microseconds, and where YAML beats both others at all, in our measurements, it is by a
# few tokens (list items without TOON's ``[N]`` lengths), noise on a large output.
# ``python -m benchmarks --only observations`` prints the tokens of each encoding, what
# ``auto`` chose against the exact minimum of the three, and its time per output.
#
# ``toon`` writes JSON instead where TOON costs more, by three stated rules:
#
# - where the TOON text would be longer than the JSON (a float ``toons`` spells in
#   hundreds of digits, a short list whose ``[N]:`` header outweighs JSON's brackets),
#   JSON: ``toon`` never shows more characters than JSON;
# - where the TOON nests (a line indented four levels deep, or objects folded into a
#   table's header, ``[2]{a{b},n}:``), the one of the two with fewer o200k tokens, ties
#   going to TOON: TOON indents every line two spaces a level where JSON closes a level
#   with one character, and folded headers are all braces, so a value nested 30 levels
#   took six times JSON's characters and half as many tokens again, and one nested 8
#   levels in single records took fewer characters and more tokens. Deep nesting is
#   never shown in more tokens than JSON; flatter TOON is not counted (counting costs
#   more than writing it);
# - where the output holds an object of more than ``TOON_MAX_KEYS`` keys, JSON, TOON not
#   tried: ``toons`` (and decoding the JSON view) takes time that grows faster than the
#   output on objects that wide (10 records of 150,000 keys took 4 to 7 times as long as
#   10 of 50,000), and a table that wide is not one a model reads by its columns.
#
# ``auto`` keeps the last rule; it decides the others exactly, by counting every text.
#
# Whatever the encoding, a ``str`` output is shown as the tool wrote it, and a scalar as
# JSON writes it. TOON is written from the JSON view of the output (JSON's text decoded
# again), so every encoding shows the same values: ``NaN`` and infinities as ``null``,
# number keys as strings, models and dataclasses as their fields; an output JSON refuses
# is refused with the same ``OutputError``.
#
# The encoder is ``toons`` (Rust, on PyPI), chosen over ``toon-format`` (the official pure
# Python one) after comparing both on our outputs: over 5,000 generated JSON values their
# texts were the same except for how they spell floats (``toons`` follows spec 4.1, digits
# without an exponent; ``toon-format`` spec 4.4, an exponent past 1e21 and below 1e-6), each
# decoded the other's text to the same values, and ``toons`` encoded 100 records about 25
# times faster and imports in under a millisecond (``toon-format`` 50 ms), which matters
# here because ``auto`` encodes every output. Both were released within weeks of each
# other (toons 0.9.0, toon-format 1.2.0). What the choice costs: ``toons`` is a spec
# behind, and writes a float such as 1.5e300 as its 301 digits (``auto`` then keeps JSON).
# It loads with the first output written as TOON, never by ``import toolchain``.


ObservationEncoding: TypeAlias = Literal["json", "yaml", "toon", "auto"]
"""How a chain writes tool outputs for the model (its ``observations`` option)."""

_ENCODINGS: tuple[str, ...] = get_args(ObservationEncoding)
YAML_CANDIDATE_CHARS = 4_096
"""``auto`` writes an output as YAML too only when its compact JSON is at most this long."""
TOON_MAX_KEYS = 10_000
"""An output holding an object of more keys than this is written as JSON by ``toon`` and
``auto`` (see the module text)."""
_SCALARS = (int, float, bool, type(None))  # the same text in every encoding: JSON's
_SCALAR_TYPES = frozenset({str, int, float, bool, type(None)})
_NESTING_TYPES = frozenset({dict, list, tuple})
_KNOWN_TYPES = _SCALAR_TYPES | _NESTING_TYPES
# TOON that nests: a line indented four levels (eight spaces), or a table header with
# objects folded into it (`{a{b}`): only there was TOON seen shorter than JSON yet more
# tokens. Literal runs and one character class: linear.
_DEEP_INDENT = "\n" + " " * 8
_FOLDED_HEADER = re.compile(r"\{[^{}\n]*\{")


@functools.cache
def _toons() -> ModuleType:
    import toons  # loaded with the first TOON output: most chains never write one

    return toons


def _json_view(value: object) -> tuple[str, object | None]:
    """Compact JSON for ``value``, and the JSON-model value that text decodes to; ``None``
    in its place when the output holds an object of more than ``TOON_MAX_KEYS`` keys
    (JSON is then written, and the text not decoded: decoding is slow there too)."""
    text = to_json(value)  # JSON's failures are the output's failures
    # Fewer colons than that bound, in C: no object can be as wide (the common case).
    if len(text) <= 4 * TOON_MAX_KEYS or text.count(":") <= TOON_MAX_KEYS:
        return text, msgspec.json.decode(text)
    wide = _wider_than(value, TOON_MAX_KEYS)
    if wide:
        return text, None
    data = msgspec.json.decode(text)
    if wide is None and _wider_than(data, TOON_MAX_KEYS):
        return text, None
    return text, data


def _wider_than(value: object, keys: int) -> bool | None:
    """Whether ``value`` holds a dict of more than ``keys`` keys, by a walk that meets each
    dict, list and tuple once; ``None`` when it holds another kind of object (a model, a
    dataclass …) whose fields the walk cannot see."""
    level: list[object] = [value]
    while level:
        below: list[object] = []
        for item in level:
            children: Iterable[object]
            if type(item) is dict:
                mapping = cast("dict[object, object]", item)
                if len(mapping) > keys:
                    return True
                children = mapping.values()
            elif type(item) is list or type(item) is tuple:
                children = cast("list[object]", item)
            else:
                return None
            kinds = set(map(type, children))  # at C speed: most values are scalars
            if kinds <= _SCALAR_TYPES:
                continue
            if not kinds <= _KNOWN_TYPES:
                return None
            below.extend([child for child in children if type(child) in _NESTING_TYPES])
        level = below
    return False


def _toon_of(data: object) -> str:
    """TOON for a JSON-model value (what ``msgspec.json.decode`` returns)."""
    if data == {}:
        # TOON writes an empty object at the top as an empty document, which would read
        # as "the tool returned nothing".
        return "{}"
    try:
        text: str = _toons().dumps(data)
    except (TypeError, ValueError) as error:  # e.g. nested deeper than toons allows
        raise OutputError(
            f"tool output cannot be written as TOON ({type(error).__name__}); return a "
            "flatter value, or use observations='json'"
        ) from error
    return text


def to_toon(value: object) -> str:
    """TOON for a tool output; a string is passed through as written, a scalar as JSON,
    and JSON is written where TOON would be longer, where TOON nests and JSON has fewer
    tokens, or where the output holds an object of more than ``TOON_MAX_KEYS`` keys
    (see the module text).

    >>> print(to_toon({"users": [{"id": 1, "name": "Ada"}, {"id": 2, "name": "Bob"}]}))
    users[2]{id,name}:
      1,Ada
      2,Bob
    >>> to_toon({"tags": ["a", "b"], "ok": True}), to_toon("plain text")
    ('tags[2]: a,b\\nok: true', 'plain text')
    >>> to_toon({"a": {"b": {"c": {"d": {"e": [1]}}}}})  # deep: TOON indents every level
    '{"a":{"b":{"c":{"d":{"e":[1]}}}}}'
    """
    if isinstance(value, str) or type(value) in _SCALARS:
        return to_json(value)
    json_text, data = _json_view(value)
    if data is None:
        return json_text
    text = _toon_of(data)
    if len(text) > len(json_text):
        return json_text
    if _DEEP_INDENT in text or _FOLDED_HEADER.search(text) is not None:
        from toolchain._tokens import count_tokens  # bpe-openai loads with the first count

        if count_tokens(text) > count_tokens(json_text):
            return json_text
    return text


def to_auto(value: object) -> str:
    """The output in whichever of JSON, YAML and TOON has the fewest o200k tokens (ties
    go to JSON, then YAML; YAML only for outputs of up to ``YAML_CANDIDATE_CHARS``).

    >>> to_auto({"temp": 21}), to_auto([1, 2])
    ('temp: 21', '[1,2]')
    """
    if isinstance(value, str) or type(value) in _SCALARS:
        return to_json(value)
    json_text, data = _json_view(value)
    if data is None:  # an object wider than TOON_MAX_KEYS: too large for YAML, too slow for TOON
        return json_text
    from toolchain._tokens import count_tokens  # bpe-openai loads with the first count

    best, fewest = json_text, count_tokens(json_text)
    small = len(json_text) <= YAML_CANDIDATE_CHARS
    for encode in (to_yaml, _toon_of) if small else (_toon_of,):
        try:
            text = encode(data)
        except OutputError:  # JSON could write it: the others are only candidates
            continue
        tokens = count_tokens(text)
        if tokens < fewest:
            best, fewest = text, tokens
    return best


_ENCODERS: dict[str, Callable[[object], str]] = {
    "json": to_json,
    "yaml": to_yaml,
    "toon": to_toon,
    "auto": to_auto,
}


def check_observations(observations: object) -> ObservationEncoding:
    """``observations`` if it names an encoding, else a ``ValueError`` listing them.

    >>> check_observations("toon")
    'toon'
    >>> check_observations("xml")
    Traceback (most recent call last):
    ...
    toolchain._errors.ToolchainValueError: observations must be one of 'json', 'yaml', \
'toon', 'auto', not 'xml'
    """
    if isinstance(observations, str) and observations in _ENCODINGS:
        return cast("ObservationEncoding", observations)
    names = ", ".join(repr(name) for name in _ENCODINGS)
    raise ToolchainValueError(f"observations must be one of {names}, not {observations!r}")


def encoder_for(observations: ObservationEncoding) -> Callable[[object], str]:
    """The function that writes an output in that encoding.

    >>> encoder_for("toon")({"a": [1, 2]})
    'a[2]: 1,2'
    """
    return _ENCODERS[check_observations(observations)]
