"""Tool inputs: raw arguments validated into a tool's typed input, and the JSON Schema of it.

pydantic handles models, dataclasses and TypedDicts; msgspec handles its own Structs.
Validation errors are rewritten into short, field-by-field messages a model can act on.
Before validation, arguments hold only numbers JSON can carry (finite, ASCII digits),
checked against where the schema says a number stands (the schema walk below).
"""

from __future__ import annotations

import dataclasses
import math
import re
import typing
from collections.abc import Mapping
from typing import Any, Generic, TypeVar, cast

import msgspec
import pydantic
from typing_extensions import is_typeddict

from toolchain._errors import ToolchainError, ToolInputTypeError
from toolchain._kept import Kept, kept_for

# Where a value sits in a JSON Schema: the schema of a key or an item, and whether a JSON
# type may stand there.
#
# Readers that type text by the schema (YAML scalars) and the check that arguments hold
# only numbers JSON can carry both walk an arguments object beside its tool's schema;
# both follow local ``$ref`` s, ``anyOf`` / ``oneOf`` / ``allOf``, ``enum`` and ``const``.
# A place the schema says nothing about accepts anything.
#
# >>> schema = {"properties": {"when": {"$ref": "#/$defs/D"}}, "$defs": {"D": {"type": "string"}}}
# >>> accepts(property_schema(schema, "when", schema), "integer", schema)
# False
# >>> accepts(property_schema(schema, "other", schema), "integer", schema)
# True

__all__ = [
    "ArgumentsError",
    "InputCodec",
    "Schema",
    "accepts",
    "codec_for",
    "is_input_type",
    "items_schema",
    "json_kind",
    "number_problems",
    "property_schema",
    "resolve",
    "shown_schema",
    "text_keys",
    "unfit_number",
    "unmodelled",
]

Schema = Mapping[str, Any]
# A chain of references longer than this is taken to lead nowhere (it may be a cycle).
_MAX_REFS = 32


def resolve(schema: Schema | None, root: Schema | None) -> Schema | None:
    """``schema`` with its local ``$ref`` s followed (``None`` where one leads nowhere)."""
    seen = 0
    while schema is not None and isinstance(schema.get("$ref"), str) and seen < _MAX_REFS:
        ref: str = schema["$ref"]
        target: object = root
        for part in ref.removeprefix("#/").split("/"):
            # JSON Schema: every object in it has str keys.
            target = (
                cast("Mapping[str, object]", target).get(part)
                if isinstance(target, Mapping)
                else None
            )
        schema = cast(Schema, target) if isinstance(target, Mapping) else None  # likewise
        seen += 1
    return schema


def _alternatives(schema: Schema) -> list[Any]:
    return [*schema.get("anyOf", ()), *schema.get("oneOf", ()), *schema.get("allOf", ())]


def property_schema(schema: Schema | None, key: str, root: Schema | None) -> Schema | None:
    """The schema of the value under ``key`` of an object ``schema`` describes."""
    if schema is None:
        return None
    props = schema.get("properties")
    if isinstance(props, Mapping) and key in props:
        return cast("Mapping[str, Schema]", props)[key]  # JSON Schema: name -> schema
    for alternative in _alternatives(schema):
        found = property_schema(resolve(alternative, root), key, root)
        if found is not None:
            return found
    extra = schema.get("additionalProperties")
    return cast(Schema, extra) if isinstance(extra, Mapping) else None  # a schema, not a bool


def items_schema(
    schema: Schema | None, root: Schema | None, index: int | None = None
) -> Schema | None:
    """The schema of the items of an array ``schema`` describes; with ``index``, of that
    item (a tuple's ``prefixItems`` name each position, ``items`` the rest)."""
    if schema is None:
        return None
    if index is not None:
        prefix = schema.get("prefixItems")
        if isinstance(prefix, list) and index < len(cast("list[object]", prefix)):
            item = cast("list[object]", prefix)[index]
            return cast(Schema, item) if isinstance(item, Mapping) else None  # a schema
    items = schema.get("items")
    if isinstance(items, Mapping):
        return cast(Schema, items)  # a JSON Schema object
    for alternative in _alternatives(schema):
        found = items_schema(resolve(alternative, root), root, index)
        if found is not None:
            return found
    return None


def accepts(schema: Schema | None, kind: str, root: Schema | None) -> bool:
    """Whether a value of JSON type ``kind`` may stand where ``schema`` is (unknown: yes)."""
    schema = resolve(schema, root)
    if schema is None:
        return True
    alternatives = _alternatives(schema)
    if alternatives:
        return any(accepts(resolve(a, root), kind, root) for a in alternatives)
    if "enum" in schema or "const" in schema:
        values = schema.get("enum", [schema.get("const")])
        return any(
            json_kind(v) == kind or (kind == "integer" and json_kind(v) == "number") for v in values
        )
    declared = schema.get("type")
    if declared is None:
        return True
    types = cast("list[object]", declared) if isinstance(declared, list) else [declared]
    return kind in types or (kind == "integer" and "number" in types)


def json_kind(value: object) -> str:
    """The JSON type of a decoded value (``"object"`` for anything not a scalar)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "object"


# Arguments hold only numbers JSON can carry: finite, and written in ASCII digits.
#
# A tool's JSON Schema says ``number`` or ``integer`` for values JSON can carry, and JSON
# has no NaN, no infinity and no digits but ASCII ones. Python is laxer on every side:
# ``float("NaN")``, ``float("1e400")`` (infinity) and ``float("٣")`` (3.0) all read;
# pydantic and msgspec turn the *strings* ``"NaN"`` and ``"Infinity"`` into a float field's
# value; YAML has ``.nan``; a reader that types text by the schema (an XML parameter, a
# GLM ``<arg_value>``) or a JSON decoder that takes JavaScript's constants makes such
# floats itself. None of them is a number a model could have meant for an ``amount``, so
# every tool's arguments are checked before they are validated, whatever read them:
#
# - a float that is not finite, anywhere in the arguments, is refused;
# - a string where the schema takes a number but no string is refused when it spells a
#   number that is not finite or holds a digit other than ``0``-``9``; any other string
#   is left to the validator (``"12"`` is read as 12 as before, ``"twelve"`` refused there).
#
# Each problem names the argument's path and says what to write instead.
#
# >>> schema = {"properties": {"amount": {"type": "number"}, "note": {"type": "string"}}}
# >>> number_problems({"amount": "NaN", "note": "NaN"}, schema)
# ["amount: must be a finite number written in ASCII digits (got 'NaN')"]
# >>> number_problems({"amount": [1.5, float("inf")]}, None)
# ['amount.1: must be a finite number written in ASCII digits (got inf)']
# >>> number_problems({"amount": "٣"}, schema)
# ["amount: must be a finite number written in ASCII digits (got '٣')"]


_MAX_SHOWN = 40
# A decimal digit that is not 0-9 (Arabic-Indic, fullwidth, Devanagari …).
_FOREIGN_DIGIT = re.compile(r"(?![0-9])\d")
# Values that hold no number to check, and lists of numbers all finite: a long list of
# them costs one pass in C.
_PLAIN = frozenset({int, bool, type(None)})
_NUMBERS = frozenset({int, float, bool})

# What float() reads begins so (after blanks): a sign, a digit, a point, inf or nan.
# Text that does not is let through without a float() that would raise.
_NUMBERISH = re.compile(r"\s*[-+]?[0-9.iInN]")

_Path = tuple[str | int, ...]
_Stack = list[tuple[object, Schema | None, _Path]]


def number_problems(
    args: Mapping[str, object], schema: Schema | None, text_keys: frozenset[str] = frozenset()
) -> list[str]:
    """One line per argument holding a number JSON cannot carry (see the module text);
    ``[]`` when there is none. ``schema`` is the arguments' JSON Schema (``None``: not
    known, so only floats are checked); ``text_keys`` are `text_keys` of it, made once
    per schema by its owner. Iterative: depth costs no recursion; a child's schema is
    looked up only for a container or a suspect string."""
    if type(args) is dict:
        # The common case in one pass: flat arguments of plain values, finite floats and
        # strings the walk below would let through too: those that cannot read as a
        # number, and any under a key whose schema takes a string (a date, an id "042").
        for name, item in cast("dict[str, object]", args).items():
            kind = type(item)
            if kind in _PLAIN:
                continue
            if kind is str:
                text = cast(str, item)
                if (text.isascii() and _NUMBERISH.match(text) is None) or name in text_keys:
                    continue
            elif kind is float and math.isfinite(cast(float, item)):
                continue
            break
        else:
            return []
    problems: list[str] = []
    stack: _Stack = [(args, schema, ())]
    while stack:
        value, at, path = stack.pop()
        at = resolve(at, schema)
        if isinstance(value, Mapping):
            for key, item in cast("Mapping[object, object]", value).items():
                if type(item) not in _PLAIN:
                    _check(item, at, str(key), schema, path, problems, stack)
            continue
        items = cast("list[object] | tuple[object, ...]", value)
        kinds = set(map(type, items))
        if kinds <= _PLAIN:
            continue
        if kinds <= _NUMBERS and all(map(math.isfinite, cast("list[float]", items))):
            continue  # every item an int, float or bool (kinds): all finite, in C
        for index, item in enumerate(items):
            if type(item) not in _PLAIN:
                _check(item, at, index, schema, path, problems, stack)
    return problems


def text_keys(schema: Schema | None) -> frozenset[str]:
    """The top-level argument names under which `number_problems` lets any string
    through: their schema takes a string (or is not known), so no string there is
    refused as a number. Made once per schema: the check then skips the walk for them.

    >>> schema = {"properties": {"day": {"type": "string", "format": "date"},
    ...                          "amount": {"type": "number"}}}
    >>> sorted(text_keys(schema))
    ['day']
    >>> number_problems({"day": "2026-01-27", "amount": "NaN"}, schema, text_keys(schema))
    ["amount: must be a finite number written in ASCII digits (got 'NaN')"]
    """
    at = resolve(schema, schema)
    props = at.get("properties") if at is not None else None
    if not isinstance(props, Mapping):
        return frozenset()
    names = cast("Mapping[object, object]", props)
    return frozenset(
        key
        for key in names
        if isinstance(key, str) and not _takes_only_numbers(_schema_of(at, key, schema), schema)
    )


def _check(
    item: object,
    at: Schema | None,
    key: str | int,
    root: Schema | None,
    path: _Path,
    problems: list[str],
    stack: _Stack,
) -> None:
    """``item``, found under ``key`` of a container whose schema is ``at``."""
    if isinstance(item, float):
        if not math.isfinite(item):
            problems.append(_problem((*path, key), repr(item)))
    elif isinstance(item, str):
        if _spells_a_bad_number(item) and _takes_only_numbers(_schema_of(at, key, root), root):
            problems.append(_problem((*path, key), repr(item)))
    elif isinstance(item, Mapping | list | tuple):
        stack.append((cast(object, item), _schema_of(at, key, root), (*path, key)))


def _schema_of(at: Schema | None, key: str | int, root: Schema | None) -> Schema | None:
    if isinstance(key, str):
        return property_schema(at, key, root)
    # An item: a tuple's ``prefixItems`` give one schema a position, ``items`` the rest.
    return items_schema(at, root, key if at is not None and "prefixItems" in at else None)


def _spells_a_bad_number(text: str) -> bool:
    """Whether ``text`` holds a digit other than 0-9, or reads as a float that is not
    finite (``NaN``, ``-Infinity``, ``inf``, ``1e400``) as Python and pydantic read it."""
    if not text.isascii():
        return _FOREIGN_DIGIT.search(text) is not None
    if _NUMBERISH.match(text) is None:
        return False
    try:
        return not math.isfinite(float(text))
    except ValueError:  # not a number at all: the validator says what is wrong
        return False


def _takes_only_numbers(schema: Schema | None, root: Schema | None) -> bool:
    if schema is None or accepts(schema, "string", root):
        return False
    return accepts(schema, "number", root) or accepts(schema, "integer", root)


def unfit_number(shown: str) -> str:
    """What a model is told of a number JSON cannot carry, written ``shown``; readers that
    refuse one themselves (Python-style and Gemma arguments) say the same.

    >>> unfit_number("NaN")
    'must be a finite number written in ASCII digits (got NaN)'
    """
    if len(shown) > _MAX_SHOWN:
        shown = shown[: _MAX_SHOWN - 3] + "..."
    return f"must be a finite number written in ASCII digits (got {shown})"


def _problem(path: _Path, shown: str) -> str:
    return ".".join(str(part) for part in path) + ": " + unfit_number(shown)


# Tool inputs: validating raw arguments into a typed value, and the JSON Schema of it.
#
# pydantic handles models, dataclasses and TypedDicts; msgspec handles its own Structs.
# Validation errors are rewritten into short, field-by-field messages a model can act on.


T = TypeVar("T")

_MAX_SHOWN_INPUT = 40


class ArgumentsError(ToolchainError, ValueError):
    """The arguments did not validate; ``problems`` lists one line per field."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("; ".join(problems))


def is_input_type(tp: object) -> bool:
    """Whether ``tp`` can be a tool input: a model, dataclass, TypedDict or Struct."""
    if not isinstance(tp, type):
        return False
    cls = cast("type[object]", tp)  # any class: isinstance alone leaves type[Unknown]
    return (
        issubclass(cls, pydantic.BaseModel | msgspec.Struct)
        or dataclasses.is_dataclass(cls)
        or is_typeddict(cls)
    )


class InputCodec(Generic[T]):
    """Validates ``Mapping`` arguments into ``T`` and describes ``T`` as JSON Schema.

    >>> from pydantic import BaseModel
    >>> class City(BaseModel):
    ...     name: str
    >>> codec = InputCodec(City)
    >>> codec.validate({"name": "Paris"})
    City(name='Paris')
    >>> codec.json_schema()
    {'properties': {'name': {'type': 'string'}}, 'required': ['name'], 'type': 'object'}
    """

    def __init__(self, tp: type[T]) -> None:
        if not is_input_type(tp):
            raise ToolInputTypeError(
                f"tool input type {tp!r} must be a pydantic model, a dataclass, a TypedDict "
                "or a msgspec Struct"
            )
        self.type = tp
        self._is_struct = issubclass(tp, msgspec.Struct)
        try:
            self._adapter: pydantic.TypeAdapter[T] | None = (
                None if self._is_struct else pydantic.TypeAdapter(tp)
            )
        except pydantic.PydanticUserError as error:
            name = _type_name(tp)
            raise unmodelled(error, _field_hints(tp), f"tool input {name}", whole=name) from None
        self._schema: dict[str, object] | None = None
        self._text_keys: frozenset[str] = frozenset()
        """`text_keys` of the schema, made with it."""

    def validate(self, args: Mapping[str, object]) -> T:
        """The typed input; raises ``ArgumentsError`` with one message per bad field.

        A number JSON cannot carry (NaN, an infinity, digits other than ASCII) is refused
        first, whatever the type would accept (``toolchain._input``).
        """
        unfit = number_problems(args, self.json_schema(), self._text_keys)
        if unfit:
            raise ArgumentsError(unfit)
        if self._adapter is None:
            try:
                return msgspec.convert(dict(args), self.type, strict=False)
            except msgspec.ValidationError as error:
                raise ArgumentsError([_msgspec_problem(str(error))]) from error
        try:
            # The core validator itself, as TypeAdapter.validate_python calls it with its
            # defaults: that wrapper only passes them on (a frame and seven keywords a call).
            # Read each time: a deferred build replaces it once it is built.
            validated: T = self._adapter.validator.validate_python(dict(args))
            return validated
        except pydantic.ValidationError as error:
            problems = [_pydantic_problem(e) for e in error.errors(include_url=False)]
            raise ArgumentsError(problems) from error

    def json_schema(self) -> dict[str, object]:
        """The input's JSON Schema, titles removed and the top-level reference inlined."""
        if self._schema is None:
            if self._adapter is None:
                raw = cast(dict[str, object], msgspec.json.schema(self.type))
            else:
                raw = self._adapter.json_schema()
            # _strip_titles turns a dict into a dict
            self._schema = _inline_root(cast("dict[str, object]", _strip_titles(raw)))
            self._text_keys = text_keys(self._schema)
        return self._schema


def codec_for(tp: type[T]) -> InputCodec[T]:
    """The codec of input type ``tp``, one for every tool that takes it: validation and
    the JSON Schema follow from the type alone, and the schema is pydantic's most costly
    work (an agent built per request with a fresh extension, whose tools are new objects
    of the same input types, would otherwise make them again every run).

    >>> from pydantic import BaseModel
    >>> class City(BaseModel):
    ...     name: str
    >>> codec_for(City) is codec_for(City)
    True
    """
    codec = _CODECS.get(tp)
    if codec is None:
        codec = _CODECS.put(tp, InputCodec(tp))
    return cast("InputCodec[T]", codec)


_CODECS = Kept[type[Any], InputCodec[Any]](1024)
"""Input type → its codec (`codec_for`). Bounded, not weak: a codec holds its type, and
a type made at run time (a ``@tool`` function defined per request) must not stay; the
types no tool uses any more hold some 9 KB each, 1,024 of them at most."""


_TYPES_THAT_WORK = (
    "str, int, float, bool, None, lists, tuples and dicts of them, Literal, an Enum, "
    "datetime, or a pydantic model, dataclass, TypedDict or msgspec Struct"
)


def unmodelled(
    error: pydantic.PydanticUserError,
    fields: Mapping[str, object],
    owner: str,
    *,
    kind: str = "field",
    whole: str = "its input type",
) -> ToolInputTypeError:
    """Our words for an input pydantic cannot validate: which field, and what to use.

    ``fields`` are the input's field (or parameter, the ``kind``) annotations by name;
    the first one pydantic refuses on its own is named, else ``whole``. Only runs when
    building a tool has already failed.
    """
    where, code = whole, error.code
    for name, annotation in fields.items():
        try:
            pydantic.TypeAdapter(cast(Any, annotation))  # any annotation, not typed as a form
        except pydantic.PydanticUserError as found:
            where, code = f"{kind} {name!r} ({_type_name(annotation)})", found.code
            break
        except Exception:
            continue
    if code == "typed-dict-version":
        return ToolInputTypeError(
            f"{owner}: {where} is a typing.TypedDict, which pydantic reads only from Python "
            "3.12; on Python 3.11 use typing_extensions.TypedDict"
        )
    return ToolInputTypeError(
        f"{owner}: {where} cannot be a tool's input: it has no JSON Schema the model could "
        f"read and cannot be validated; use {_TYPES_THAT_WORK}"
    )


def _field_hints(tp: type[Any]) -> dict[str, object]:
    try:
        return dict(typing.get_type_hints(tp, include_extras=True))
    except Exception:  # unresolvable annotations: the message names no field
        return {}


def _type_name(tp: object) -> str:
    return tp.__name__ if isinstance(tp, type) else repr(tp).replace("typing.", "")


def prompt_schema(schema: dict[str, object]) -> dict[str, object]:
    """``schema`` as shown to a model: an optional field (``X | None = None``) shows as
    just ``X``; leaving it out already means None. Validation keeps the full schema.

    >>> prompt_schema({"properties": {"seat": {"anyOf": [{"type": "string"}, {"type": "null"}],
    ...     "default": None}}, "type": "object"})
    {'properties': {'seat': {'type': 'string'}}, 'type': 'object'}
    """
    return cast(dict[str, object], _compact(schema))


def shown_schema(schema: dict[str, object]) -> dict[str, object]:
    """`prompt_schema` of ``schema``, made once per schema object (an input type's
    schema is one object for every tool of that type: ``codec_for``) and the same dict
    each time after: like the input schema it is read, never changed.

    >>> schema = {"properties": {"n": {"type": "integer"}}, "type": "object"}
    >>> shown_schema(schema) is shown_schema(schema)
    True
    """
    return kept_for(_SHOWN, schema, prompt_schema)


_SHOWN = Kept[int, tuple[dict[str, object], dict[str, object]]](1024)
"""Input schemas and their prompt schemas (`shown_schema`)."""


def _compact(node: object) -> object:
    # ``node`` is JSON Schema: JSON values, so lists of values and str-keyed objects.
    if isinstance(node, list):
        return [_compact(item) for item in cast("list[object]", node)]
    if not isinstance(node, dict):
        return node
    schema = {key: _compact(value) for key, value in cast("dict[str, object]", node).items()}
    options = schema.get("anyOf")
    if "default" in schema and schema["default"] is None and isinstance(options, list):
        choices = cast("list[object]", options)
        kept = [o for o in choices if o != {"type": "null"}]
        if len(kept) == 1 and isinstance(kept[0], dict) and len(kept) < len(choices):
            only = cast("dict[str, object]", kept[0])
            rest = {k: v for k, v in schema.items() if k not in ("anyOf", "default")}
            return {**only, **rest}
    return schema


def _pydantic_problem(error: Any) -> str:
    loc = ".".join(str(part) for part in error["loc"]) or "(arguments)"
    message = str(error["msg"])
    if error["type"] == "missing":
        return f"{loc}: required field is missing"
    try:
        shown = repr(error.get("input"))
    except Exception:  # e.g. an int past the 4300-digit limit, or a repr that raises
        shown = f"<{type(error.get('input')).__name__}>"
    if len(shown) > _MAX_SHOWN_INPUT:
        shown = shown[: _MAX_SHOWN_INPUT - 3] + "..."
    return f"{loc}: {message} (got {shown})"


def _msgspec_problem(message: str) -> str:
    # msgspec says "Expected `int`, got `str` - at `$.days`": lead with the field.
    if " - at `$." in message:
        text, _, where = message.rpartition(" - at `$.")
        return f"{where.rstrip('`')}: {text}"
    if message.startswith("Object missing required field"):
        field = message.split("`")[1] if "`" in message else "?"
        return f"{field}: required field is missing"
    return message


def _strip_titles(schema: object, *, in_properties: bool = False) -> object:
    """Drop ``title`` keywords (noise for a model) but never a property named "title"."""
    # ``schema`` is JSON Schema: JSON values, so lists of values and str-keyed objects.
    if isinstance(schema, dict):
        return {
            key: _strip_titles(value, in_properties=key in ("properties", "$defs"))
            for key, value in cast("dict[str, object]", schema).items()
            if in_properties or key != "title"
        }
    if isinstance(schema, list):
        return [_strip_titles(item) for item in cast("list[object]", schema)]
    return schema


def _inline_root(schema: dict[str, object]) -> dict[str, object]:
    ref = schema.get("$ref")
    if not isinstance(ref, str) or not ref.startswith("#/$defs/"):
        return schema
    # A "#/$defs/..." reference comes with "$defs": an object of schemas (JSON objects).
    defs = dict(cast("dict[str, object]", schema.get("$defs", {})))
    root = dict(cast("dict[str, object]", defs.pop(ref.removeprefix("#/$defs/"))))
    if defs:
        root["$defs"] = defs
    return root
