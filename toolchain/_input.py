"""Tool inputs: validating raw arguments into a typed value, and the JSON Schema of it.

pydantic handles models, dataclasses and TypedDicts; msgspec handles its own Structs.
Validation errors are rewritten into short, field-by-field messages a model can act on.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Mapping
from typing import Any, Generic, TypeVar, cast

import msgspec
import pydantic
from typing_extensions import is_typeddict

from toolchain._errors import ToolInputTypeError
from toolchain._json_numbers import number_problems

__all__ = ["ArgumentsError", "InputCodec", "is_input_type", "unmodelled"]

T = TypeVar("T")

_MAX_SHOWN_INPUT = 40


class ArgumentsError(ValueError):
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

    def validate(self, args: Mapping[str, object]) -> T:
        """The typed input; raises ``ArgumentsError`` with one message per bad field.

        A number JSON cannot carry (NaN, an infinity, digits other than ASCII) is refused
        first, whatever the type would accept (``toolchain._json_numbers``).
        """
        unfit = number_problems(args, self.json_schema())
        if unfit:
            raise ArgumentsError(unfit)
        if self._adapter is None:
            try:
                return msgspec.convert(dict(args), self.type, strict=False)
            except msgspec.ValidationError as error:
                raise ArgumentsError([_msgspec_problem(str(error))]) from error
        try:
            return self._adapter.validate_python(dict(args))
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
        return self._schema


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
