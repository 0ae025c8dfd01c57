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
from toolchain.dialects._values import as_list, as_mapping

__all__ = ["INPUT_KEY", "Catalog", "ToolSpec", "Untyped"]

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
_SCHEMA_KEYS = ("parameters", "input_schema", "inputSchema")
_JSON = json.JSONDecoder()


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

    def param_type(self, tool: str, param: str) -> str | None:
        """The JSON type a parameter declares (the first non-null one), if any."""
        schema = self.schema(tool)
        if schema is None:
            return None
        properties = as_mapping(schema.get("properties"))
        prop = as_mapping(properties.get(param)) if properties is not None else None
        return _type_of(prop) if prop is not None else None

    def typed(self, tool: str, param: str, raw: str, untyped: Untyped = "text") -> object:
        """A parameter written as text, read as the type its schema declares.

        Text that does not fit the declared type stays text: validation then tells the
        model what was wrong, which beats guessing.
        """
        kind = self.param_type(tool, param)
        if kind is None:
            return _inferred(raw) if untyped == "infer" else raw
        return convert(raw, kind)

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
    if kind == "integer" and _INTEGER.fullmatch(text):
        return int(text)
    if kind in ("number", "float", "double", "integer"):
        return _number(text, raw)
    if kind == "boolean":
        lowered = text.lower()
        return True if lowered == "true" else False if lowered == "false" else raw
    if kind == "null":
        return None if text in ("null", "None", "") else raw
    if kind in ("object", "array", "dict", "list"):
        value = _structured(text)
        wanted = as_mapping(value) if kind in ("object", "dict") else as_list(value)
        return wanted if wanted is not None else raw
    return raw


def _number(text: str, raw: str) -> object:
    if _INTEGER.fullmatch(text):
        return int(text)
    try:
        value = float(text)
    except ValueError:
        return raw
    return value if math.isfinite(value) else raw


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


def _type_of(prop: Mapping[str, object]) -> str | None:
    kind = prop.get("type")
    if isinstance(kind, str):
        return kind
    kinds = as_list(kind)
    if kinds is not None:
        named = [str(k) for k in kinds if k != "null"]
        return named[0] if named else "null"
    for key in ("anyOf", "oneOf"):
        for option in as_list(prop.get(key)) or []:
            schema = as_mapping(option)
            found = _type_of(schema) if schema is not None else None
            if found is not None and found != "null":
                return found
    if "$ref" in prop or "properties" in prop:
        return "object"
    return None


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
