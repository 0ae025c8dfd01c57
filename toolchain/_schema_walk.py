"""Where a value sits in a JSON Schema: the schema of a key or an item, and whether a JSON
type may stand there.

Readers that type text by the schema (YAML scalars) and the check that arguments hold
only numbers JSON can carry both walk an arguments object beside its tool's schema;
both follow local ``$ref`` s, ``anyOf`` / ``oneOf`` / ``allOf``, ``enum`` and ``const``.
A place the schema says nothing about accepts anything.

>>> schema = {"properties": {"when": {"$ref": "#/$defs/D"}}, "$defs": {"D": {"type": "string"}}}
>>> accepts(property_schema(schema, "when", schema), "integer", schema)
False
>>> accepts(property_schema(schema, "other", schema), "integer", schema)
True
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

__all__ = ["Schema", "accepts", "items_schema", "json_kind", "property_schema", "resolve"]

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
