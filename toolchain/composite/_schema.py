"""What a composite shows of its sub-tools: a JSON Schema of its ``calls`` precise for
native tool calling (one branch per sub-tool), and each sub-tool's parameters on one line
for its description."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from toolchain import Tool, to_json

__all__ = ["calls_schema", "parameters"]


def calls_schema(tools: Mapping[str, Tool[Any, Any]], max_calls: int) -> dict[str, object]:
    """``{"calls": [...]}`` whose items are a union discriminated by ``name``.

    ``anyOf`` (not ``oneOf``) and no ``maxItems``: both OpenAI's and Anthropic's strict
    modes accept it; the limit is stated in the description and checked on validation.
    Sub-tools' ``$defs`` move to the root, where ``#/$defs/...`` references resolve.
    """
    defs: dict[str, object] = {}
    branches: list[dict[str, object]] = []
    for name, sub in tools.items():
        args = _hoist_defs(sub.input_schema(), name, defs)
        branches.append(
            {
                "type": "object",
                "properties": {"name": {"type": "string", "enum": [name]}, "args": args},
                "required": ["name", "args"],
                "additionalProperties": False,
            }
        )
    items: dict[str, object] = branches[0] if len(branches) == 1 else {"anyOf": branches}
    schema: dict[str, object] = {
        "type": "object",
        "properties": {
            "calls": {
                "type": "array",
                "description": (
                    f"Sub-tool calls, run one after another in this order (at most {max_calls})"
                ),
                "items": items,
            }
        },
        "required": ["calls"],
        "additionalProperties": False,
    }
    if defs:
        schema["$defs"] = defs
    return schema


def _hoist_defs(schema: dict[str, object], owner: str, defs: dict[str, object]) -> object:
    """``schema`` without its ``$defs``, which join ``defs`` (renamed on a clash)."""
    own = schema.get("$defs")
    if not isinstance(own, dict):
        return schema
    renamed: dict[str, str] = {}
    for key, value in cast("dict[str, object]", own).items():
        new = key
        if new in defs and defs[new] != value:
            new = f"{owner}_{key}"
            while new in defs:
                new += "_"
        renamed[key] = new
    body = {key: value for key, value in schema.items() if key != "$defs"}
    for key, value in cast("dict[str, object]", own).items():
        defs[renamed[key]] = _rewrite_refs(value, renamed)
    return _rewrite_refs(body, renamed)


def _rewrite_refs(node: object, renamed: Mapping[str, str]) -> object:
    # JSON Schema: JSON values, so lists of values and str-keyed objects.
    if isinstance(node, list):
        return [_rewrite_refs(item, renamed) for item in cast("list[object]", node)]
    if not isinstance(node, dict):
        return node
    out: dict[str, object] = {}
    for key, value in cast("dict[str, object]", node).items():
        if key == "$ref" and isinstance(value, str) and value.startswith("#/$defs/"):
            target = value.removeprefix("#/$defs/")
            out[key] = f"#/$defs/{renamed.get(target, target)}"
        else:
            out[key] = _rewrite_refs(value, renamed)
    return out


def parameters(schema: Mapping[str, object]) -> str:
    """``path: string, mode?: "w" | "a"`` — a sub-tool's parameters in one line."""
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return ""
    required = schema.get("required")
    needed: set[object] = (
        set(cast("list[object]", required)) if isinstance(required, list) else set()
    )
    parts: list[str] = []
    for name, spec in cast("Mapping[str, object]", properties).items():
        mark = "" if name in needed else "?"
        parts.append(f"{name}{mark}: {_type_text(spec)}")
    return ", ".join(parts)


def _type_text(spec: object, depth: int = 0) -> str:
    if not isinstance(spec, Mapping) or depth > 3:
        return "any"
    node = cast("Mapping[str, object]", spec)
    enum = node.get("enum")
    if isinstance(enum, list):
        values = cast("list[object]", enum)
        shown = " | ".join(to_json(value) for value in values[:8])
        return shown + " | …" if len(values) > 8 else shown
    options = node.get("anyOf")
    if isinstance(options, list):
        return " | ".join(_type_text(option, depth + 1) for option in cast("list[object]", options))
    ref = node.get("$ref")
    if isinstance(ref, str):
        return ref.rsplit("/", 1)[-1]
    declared = node.get("type")
    if declared == "array":
        return f"{_type_text(node.get('items'), depth + 1)}[]"
    if isinstance(declared, str):
        return declared
    if isinstance(declared, list):
        return " | ".join(str(kind) for kind in cast("list[object]", declared))
    return "any"
