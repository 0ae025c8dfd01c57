"""The tools a parse may call: names, and the parameter types that decide how text
arguments (XML parameters, ``key=value``) become values."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from typing import Any, Literal, TypeAlias

from toolchain._tool import Tool
from toolchain.dialects._literals import LiteralError, LiteralReader
from toolchain.dialects._values import as_list, as_mapping, no_constants

__all__ = ["INPUT_KEY", "Catalog", "ToolSpec", "Untyped", "convert", "fits"]

ToolSpec: TypeAlias = "str | Tool[Any, Any] | Mapping[str, object]"
"""A tool offered to the model: a name, a ``Tool``, or a function spec (OpenAI's
``{"name", "parameters"}``, with or without ``{"type": "function", "function": …}``,
Anthropic's ``input_schema`` or MCP's ``inputSchema``)."""

Untyped = Literal["text", "infer"]
"""How a text value with no declared type is read: kept as text, or as the JSON scalar
it spells (``42``, ``true``) when it spells one."""

INPUT_KEY = "input"
"""The argument a single opaque input (a ReAct ``Action Input`` line, a string where an
object belongs) is passed as, unless the tool has exactly one parameter to bind it to."""

_INTEGER = re.compile(r"[-+]?[0-9]+")
# A number as JSON writes it (a leading + and a bare fraction allowed): ASCII digits only,
# where float() would also read Arabic-Indic or fullwidth digits, "1_000", "nan" and "inf".
_NUMBER = re.compile(r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
_STRUCTURED = ("object", "array", "dict", "list")
_SCHEMA_KEYS = ("parameters", "input_schema", "inputSchema")
# NaN and Infinity are not JSON: text spelling them stays text, which validation refuses
# where a number is due (toolchain._input).
_JSON = json.JSONDecoder(parse_constant=no_constants)


class Catalog:
    """Names and input schemas of the offered tools (``None``: nothing was offered)."""

    __slots__ = ("_schemas", "_tools", "names")

    def __init__(self, tools: Iterable[ToolSpec] | None = None) -> None:
        self.names: frozenset[str] | None = None
        self._schemas: dict[str, Mapping[str, object] | None] = {}
        self._tools: dict[str, Tool[Any, Any]] = {}
        if tools is None:
            return
        for spec in tools:
            if isinstance(spec, str):
                self._schemas[spec] = None
            elif isinstance(spec, Tool):
                self._tools[spec.name] = spec
            else:
                name, schema = _spec_parts(spec)
                if name:
                    self._schemas[name] = schema
        self.names = frozenset((*self._schemas, *self._tools))

    def known(self, name: str) -> bool:
        """Whether ``name`` may be called (always, when no tools were offered)."""
        return self.names is None or name in self.names

    def resolve(self, name: str) -> str:
        """``name``, or the offered tool it means when written with quotes or spaces
        around it; the text as written when nothing matches (it may be a new tool)."""
        if self.names is None or name in self.names:
            return name
        bare = name.strip().strip("\"'`").strip()
        return bare if bare in self.names else name

    def schema(self, name: str) -> Mapping[str, object] | None:
        if name in self._tools:
            schema = self._tools[name].input_schema()
            self._schemas[name] = schema
            del self._tools[name]
        return self._schemas.get(name)

    def param_kinds(self, tool: str, param: str) -> tuple[str, ...]:
        """The JSON types a parameter allows, as its schema lists them (``type``, a list
        of types, ``anyOf``/``oneOf``/``allOf``, a local ``$ref``, the kinds of an
        ``enum`` or ``const``); ``()`` when it declares none."""
        schema = self.schema(tool)
        if schema is None:
            return ()
        properties = as_mapping(schema.get("properties"))
        prop = as_mapping(properties.get(param)) if properties is not None else None
        if prop is None:
            return ()
        kinds: list[str] = []
        _collect_kinds(prop, schema, kinds, 0)
        return tuple(dict.fromkeys(kinds))

    def param_type(self, tool: str, param: str) -> str | None:
        """The first type other than ``null`` a parameter declares, if any."""
        kinds = self.param_kinds(tool, param)
        named = [kind for kind in kinds if kind != "null"]
        return named[0] if named else kinds[0] if kinds else None

    def typed(self, tool: str, param: str, raw: str, untyped: Untyped = "text") -> object:
        """A parameter written as text, read as a type its schema allows.

        The types other than ``string`` are tried in the order the schema lists them,
        ``string`` last (the text is always a string, so it would win every union);
        ``null`` is read only where the schema allows it. Text that fits none of them
        stays text: validation then tells the model what was wrong, which beats guessing.
        """
        kinds = self.param_kinds(tool, param)
        if not kinds:
            return _inferred(raw) if untyped == "infer" else raw
        for kind in kinds:
            if kind == "string":
                continue
            if kind == "null":
                if raw.strip() in ("null", "None"):
                    return None
                continue
            value = convert(raw, kind)
            if value is not raw:
                return value
        return raw

    def retyped(self, tool: str, args: dict[str, object]) -> dict[str, object]:
        """``args`` with each string the schema does not allow (a parameter that takes
        no string) read as the type it declares, as ``typed`` reads text."""
        for key, value in args.items():
            if isinstance(value, str):
                kinds = self.param_kinds(tool, key)
                if kinds and "string" not in kinds:
                    args[key] = self.typed(tool, key, value)
        return args

    def bind(self, tool: str, value: object) -> dict[str, object]:
        """Arguments for a call whose input is one value rather than an object: the
        tool's only (or only required) parameter, else ``INPUT_KEY``."""
        schema = self.schema(tool)
        if schema is not None:
            names = list(as_mapping(schema.get("properties")) or {})
            needed = [str(n) for n in as_list(schema.get("required")) or []]
            if len(needed) == 1:
                return {needed[0]: value}
            if len(names) == 1:
                return {names[0]: value}
        return {INPUT_KEY: value}


def convert(raw: str, kind: str) -> object:
    """``raw`` read as a value of JSON type ``kind``; ``raw`` itself when it is not one."""
    if kind == "string":
        return raw
    text = raw.strip()
    if len(text) > 1 and text[0] == '"' == text[-1] and kind not in _STRUCTURED:
        # A scalar written as a JSON string (`"42"` for an integer): the value inside.
        inner = _unescaped(text[1:-1])
        value = convert(inner, kind)
        return raw if value is inner else value
    if kind == "integer" and _INTEGER.fullmatch(text):
        return int(text)
    if kind in ("number", "float", "double", "integer"):
        return _number(text, raw, whole=kind == "integer")
    if kind == "boolean":
        lowered = text.lower()
        return True if lowered == "true" else False if lowered == "false" else raw
    if kind == "null":
        return None if text in ("null", "None", "") else raw
    if kind in _STRUCTURED:
        wanted = _wanted(_structured(text), kind)
        if wanted is None and '\\"' in text:
            # Written as the inside of a JSON string (GLM writes `[\"a\"]`): unescape once.
            wanted = _wanted(_structured(_unescaped(text)), kind)
        return wanted if wanted is not None else raw
    return raw


def fits(value: object, kinds: tuple[str, ...]) -> bool:
    """Whether ``value`` is of one of the JSON types ``kinds``."""
    for kind in kinds:
        if kind == "null" and value is None:
            return True
        if kind == "boolean" and isinstance(value, bool):
            return True
        if isinstance(value, bool):
            continue
        if kind in ("integer", "number") and isinstance(value, int):
            return True
        if kind in ("number", "float", "double") and isinstance(value, float):
            return True
        if kind == "string" and isinstance(value, str):
            return True
        if kind in ("array", "list") and isinstance(value, list):
            return True
        if kind in ("object", "dict") and isinstance(value, dict):
            return True
    return False


def _wanted(value: object, kind: str) -> object:
    """``value`` when it is of ``kind`` (or a JSON string spelling one), else ``None``."""
    if isinstance(value, str):
        value = _structured(value.strip())
    return as_mapping(value) if kind in ("object", "dict") else as_list(value)


def _unescaped(text: str) -> str:
    try:
        value = _JSON.decode(f'"{text}"')
    except ValueError:
        return text
    return value if isinstance(value, str) else text


def _number(text: str, raw: str, *, whole: bool = False) -> object:
    if _INTEGER.fullmatch(text):
        return int(text)
    if not _NUMBER.fullmatch(text):
        return raw
    value = float(text)
    if not math.isfinite(value) or (whole and not value.is_integer()):
        return raw
    return int(value) if whole else value


def _structured(text: str) -> object:
    try:
        value, end = _JSON.raw_decode(text)
        if end == len(text):
            return value
    except (ValueError, RecursionError):
        pass
    reader = LiteralReader(text)
    try:
        value, end = reader.value(0)
    except LiteralError:
        return None
    return value if reader.ws(end) == len(text) and not reader.problems else None


def _inferred(raw: str) -> object:
    text = raw.strip()
    if text and (text[0] in "-0123456789tfn[{"):
        value = _structured(text)
        if value is not None or text == "null":
            return value
    return raw


_ENUM_KINDS: tuple[tuple[type, str], ...] = (
    (bool, "boolean"),
    (int, "integer"),
    (float, "number"),
    (str, "string"),
    (list, "array"),
    (dict, "object"),
    (type(None), "null"),
)
_MAX_REF_DEPTH = 16


def _collect_kinds(
    prop: Mapping[str, object], root: Mapping[str, object], kinds: list[str], depth: int
) -> None:
    """Append the types ``prop`` allows to ``kinds``, in the order it lists them."""
    if depth > _MAX_REF_DEPTH:
        return
    kind = prop.get("type")
    if isinstance(kind, str):
        kinds.append(kind)
    for item in as_list(kind) or []:
        if isinstance(item, str):
            kinds.append(item)
    for key in ("anyOf", "oneOf", "allOf"):
        for option in as_list(prop.get(key)) or []:
            schema = as_mapping(option)
            if schema is not None:
                _collect_kinds(schema, root, kinds, depth + 1)
    ref = prop.get("$ref")
    if isinstance(ref, str):
        target = _resolve(ref, root)
        if target is not None:
            _collect_kinds(target, root, kinds, depth + 1)
        elif not kinds:
            kinds.append("object")
    values = as_list(prop.get("enum")) or ([prop["const"]] if "const" in prop else [])
    if not kinds:
        for value in values:
            kinds.extend(name for cls, name in _ENUM_KINDS if type(value) is cls)
    if not kinds and "properties" in prop:
        kinds.append("object")
    if not kinds and "items" in prop:
        kinds.append("array")


def _resolve(ref: str, root: Mapping[str, object]) -> Mapping[str, object] | None:
    """A local reference (``#/$defs/Name``, ``#/definitions/Name``) in ``root``."""
    if not ref.startswith("#/"):
        return None
    node: Mapping[str, object] | None = root
    for part in ref[2:].split("/"):
        node = as_mapping(node.get(part.replace("~1", "/").replace("~0", "~"))) if node else None
    return node


def _spec_parts(spec: Mapping[str, object]) -> tuple[str, Mapping[str, object] | None]:
    function = as_mapping(spec.get("function"))
    if function is not None and "name" not in spec:
        spec = function
    name = spec.get("name")
    name = name if isinstance(name, str) else ""
    for key in _SCHEMA_KEYS:
        schema = as_mapping(spec.get(key))
        if schema is not None:
            return name, schema
    return name, None
