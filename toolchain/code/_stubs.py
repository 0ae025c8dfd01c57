"""Typed stubs from tools: each tool an ``async def`` with its parameters, defaults, return
type and docstring, the structured types they use written once as ``TypedDict`` s.

The same text is the prompt's tool listing and what Monty's type checker checks a
program against, so what the model reads is what its program is held to. Types come
from each tool's JSON Schema (its input's, and its output type's), which every input
kind has (pydantic models, dataclasses, TypedDicts, msgspec Structs, an MCP server's
schema), so one translation serves all of them.

`tool_stubs` is the function to reuse (the type-checking measurement builds on it); it
needs no sandbox.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import msgspec
import pydantic

from toolchain._tool import Tool

__all__ = ["Signature", "Stubs", "tool_stubs"]

AnyTool = Tool[Any, Any]

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SCALARS = {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "null": "None"}
_MAX_DEPTH = 16  # a schema nested deeper than this is typed Any (no runaway recursion)


@dataclass(frozen=True)
class Signature:
    """How a program calls one tool: its parameters in the stub's order."""

    name: str
    params: tuple[str, ...]
    """Parameter names, in order: what positional arguments map to."""


@dataclass(frozen=True)
class Stubs:
    """The stub text of a set of tools, and each tool's signature."""

    text: str
    signatures: Mapping[str, Signature] = field(default_factory=lambda: dict[str, Signature]())


def tool_stubs(tools: Iterable[AnyTool]) -> Stubs:
    """The stubs of ``tools``: shared ``TypedDict`` s first, then one ``async def`` each.

    >>> from toolchain import tool
    >>> @tool
    ... def add(a: int, b: int = 1) -> int:
    ...     '''Add two integers.'''
    ...     return a + b
    >>> print(tool_stubs([add]).text)
    async def add(a: int, b: int = 1) -> int:
        \"\"\"Add two integers.\"\"\"
    """
    types = _Types()
    functions: list[str] = []
    signatures: dict[str, Signature] = {}
    for tool in tools:
        if not _IDENTIFIER.fullmatch(tool.name) or keyword.iskeyword(tool.name):
            continue  # a name no program can call (an MCP tool named "a-b"): not offered
        text, signature = _function(tool, types)
        functions.append(text)
        signatures[tool.name] = signature
    head = types.header()
    return Stubs("\n\n".join([*head, *functions]), signatures)


def _function(tool: AnyTool, types: _Types) -> tuple[str, Signature]:
    schema = tool.input_schema()
    defs = _defs(schema)
    properties = _mapping(schema.get("properties"))
    required = set(_strings(schema.get("required")))
    params: list[tuple[str, str]] = []
    optional: list[tuple[str, str]] = []
    notes: list[str] = []
    for name, spec in properties.items():
        prop = _mapping(spec)
        if not _IDENTIFIER.fullmatch(name) or keyword.iskeyword(name):
            continue  # not writable as a keyword argument; the tool's schema still checks
        annotation = types.of(prop, defs, 0, _camel(name))
        description = prop.get("description")
        if isinstance(description, str) and description.strip():
            notes.append(f"{name}: {_one_line(description)}")
        if name in required:
            params.append((name, f"{name}: {annotation}"))
        else:
            default = prop.get("default", None)
            text = _literal(default)
            if text is None:
                annotation, text = f"{annotation} | None", "None"
            optional.append((name, f"{name}: {annotation} = {text}"))
    returns = _output_type(tool, types)
    ordered = params + optional
    line = f"async def {tool.name}({', '.join(text for _, text in ordered)}) -> {returns}:"
    doc = [tool.description.strip()]
    if tool.policy.strip():
        doc.append(tool.policy.strip())
    if notes:
        doc.append("Args:\n" + "\n".join(f"    {note}" for note in notes))
    body = _docstring("\n\n".join(part for part in doc if part), "    ")
    return f"{line}\n{body}", Signature(tool.name, tuple(name for name, _ in ordered))


def _output_type(tool: AnyTool, types: _Types) -> str:
    output = tool.output_type
    if output is Any or output is None:
        return "Any" if output is Any else "None"
    schema = _output_schema(output)
    if schema is None:
        return "Any"
    return types.of(schema, _defs(schema), 0, _camel(tool.name) + "Result", output=True)


def _output_schema(output_type: object) -> dict[str, object] | None:
    """The JSON Schema of an output type as the program receives it (serialised), or
    None when no library can describe it (then the stub says ``Any``)."""
    if _is_struct(output_type):  # pydantic cannot describe a msgspec Struct
        return _from_msgspec(output_type)
    try:
        adapter: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(cast("type[Any]", output_type))
        return adapter.json_schema(mode="serialization")
    except Exception:  # a type pydantic cannot describe (a msgspec Struct inside, say)
        return _from_msgspec(output_type)


def _is_struct(output_type: object) -> bool:
    return isinstance(output_type, type) and issubclass(output_type, msgspec.Struct)


def _from_msgspec(output: object) -> dict[str, object] | None:
    try:
        schema = msgspec.json.schema(output)
    except Exception:  # not describable by msgspec either: the stub says Any
        return None
    return cast("dict[str, object]", schema)


class _Types:
    """The structured types of a set of stubs, each written once and shared by name."""

    def __init__(self) -> None:
        self.written: dict[str, str] = {}  # name -> its class text, in dependency order
        self.by_shape: dict[str, str] = {}  # class body -> the name it was written under

    def header(self) -> list[str]:
        if not self.written:
            return []
        imports = "from typing import Any, Literal, NotRequired, TypedDict"
        return [imports, *self.written.values()]

    def of(
        self,
        schema: Mapping[str, object],
        defs: Mapping[str, object],
        depth: int,
        hint: str,
        *,
        output: bool = False,
    ) -> str:
        """The Python type a value of ``schema`` has in a program. An ``output``'s keys
        are all present (a serialised result holds every field, defaults too)."""
        if depth > _MAX_DEPTH:
            return "Any"
        ref = schema.get("$ref")
        if isinstance(ref, str):
            name = ref.rsplit("/", 1)[-1]
            target = _mapping(defs.get(name))
            return self.of(target, defs, depth + 1, name, output=output) if target else "Any"
        if "const" in schema:
            literal = _literal(schema["const"])
            return f"Literal[{literal}]" if literal is not None else "Any"
        enum = schema.get("enum")
        if isinstance(enum, list):
            values = [_literal(value) for value in cast("list[object]", enum)]
            if values and all(value is not None for value in values):
                return f"Literal[{', '.join(cast('list[str]', values))}]"
            return "Any"
        for key in ("anyOf", "oneOf"):
            options = schema.get(key)
            if isinstance(options, list):
                kinds = [
                    self.of(_mapping(o), defs, depth + 1, hint, output=output)
                    for o in cast("list[object]", options)
                ]
                return _union(kinds)
        kind = schema.get("type")
        if isinstance(kind, list):
            kinds = [
                self.of({**schema, "type": k}, defs, depth + 1, hint, output=output)
                for k in cast("list[object]", kind)
            ]
            return _union(kinds)
        if isinstance(kind, str) and kind in _SCALARS:
            return _SCALARS[kind]
        if kind == "array":
            prefix = schema.get("prefixItems")
            if isinstance(prefix, list):
                items = [
                    self.of(_mapping(p), defs, depth + 1, hint, output=output)
                    for p in cast("list[object]", prefix)
                ]
                return f"tuple[{', '.join(items)}]"
            items_schema = _mapping(schema.get("items"))
            item = (
                self.of(items_schema, defs, depth + 1, hint + "Item", output=output)
                if items_schema
                else "Any"
            )
            return f"list[{item}]"
        if kind == "object" or "properties" in schema:
            properties = _mapping(schema.get("properties"))
            if properties:
                title = schema.get("title")
                name = title if isinstance(title, str) and _IDENTIFIER.fullmatch(title) else hint
                return self._typed_dict(name, schema, properties, defs, depth, output)
            extra = _mapping(schema.get("additionalProperties"))
            value = (
                self.of(extra, defs, depth + 1, hint + "Value", output=output) if extra else "Any"
            )
            return f"dict[str, {value}]"
        return "Any"

    def _typed_dict(
        self,
        name: str,
        schema: Mapping[str, object],
        properties: Mapping[str, object],
        defs: Mapping[str, object],
        depth: int,
        output: bool,
    ) -> str:
        name = _camel(name)
        required = set(properties) if output else set(_strings(schema.get("required")))
        lines: list[str] = []
        for key, spec in properties.items():
            if not _IDENTIFIER.fullmatch(key) or keyword.iskeyword(key):
                continue  # not writable in class syntax; reading it is typed Any below
            annotation = self.of(_mapping(spec), defs, depth + 1, name + _camel(key), output=output)
            if key not in required:
                annotation = f"NotRequired[{annotation}]"
            lines.append(f"    {key}: {annotation}")
        body = "\n".join(lines) or "    pass"
        known = self.by_shape.get(body)
        if known is not None:  # the same type met again (another tool returns it too)
            return known
        unique, n = name, 2
        while unique in self.written:  # another type of the same name: numbered
            unique, n = f"{name}{n}", n + 1
        description = schema.get("description")
        doc = (
            _docstring(_one_line(description), "    ") + "\n"
            if isinstance(description, str)
            else ""
        )
        self.written[unique] = f"class {unique}(TypedDict):\n{doc}{body}"
        self.by_shape[body] = unique
        return unique


def _union(kinds: Sequence[str]) -> str:
    unique = list(dict.fromkeys(kinds))
    if "Any" in unique:
        return "Any"
    return " | ".join(unique)


def _literal(value: object) -> str | None:
    """``value`` as a Python literal, or None when it is not one a stub can write."""
    if value is None or isinstance(value, bool | int | float | str):
        text = repr(value)
        return text if len(text) <= 200 else None
    if isinstance(value, list | dict):
        text = repr(cast(object, value))
        return text if len(text) <= 200 else None
    return None


def _docstring(text: str, indent: str) -> str:
    text = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    lines = text.splitlines() or [""]
    if len(lines) == 1:
        return f'{indent}"""{lines[0]}"""'
    body = "\n".join(f"{indent}{line}" if line else "" for line in lines)
    return f'{indent}"""\n{body}\n{indent}"""'


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _camel(name: str) -> str:
    parts = re.split(r"[^A-Za-z0-9]+", name)
    text = "".join(part[:1].upper() + part[1:] for part in parts if part)
    return text if text and not text[0].isdigit() else f"T{text}"


def _defs(schema: Mapping[str, object]) -> Mapping[str, object]:
    return _mapping(schema.get("$defs") or schema.get("definitions"))


def _mapping(value: object) -> Mapping[str, object]:
    return cast("Mapping[str, object]", value) if isinstance(value, dict) else {}


def _strings(value: object) -> list[str]:
    if not isinstance(value, list):
        return []
    return [item for item in cast("list[object]", value) if isinstance(item, str)]
