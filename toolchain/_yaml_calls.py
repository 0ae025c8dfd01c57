"""Schema-aware, bounded YAML for tool calls.

YAML 1.1 reads ``no`` as False, ``0123`` as 83, ``1e3`` as a float and ``2026-01-27``
as a date. A model that writes those for a parameter declared ``string`` meant the
text, so we compose YAML into nodes (``SafeLoader``: no arbitrary objects) and build
values ourselves: a plain scalar becomes its YAML type only where the parameter's
schema accepts that type, and otherwise stays the string the model wrote. Integers with a
leading zero are decimal, as in YAML 1.2. Dates always
stay strings (JSON has none; pydantic parses ISO text into ``date`` fields itself).

Limits: content size, nesting depth, and the number of nodes built, which bounds
alias expansion ("billion laughs") as well as recursive aliases.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from toolchain._calls import ARGS_KEYS, NAME_KEYS, check_size, unfence
from toolchain._errors import ToolCallParseError
from toolchain._result import ToolCall

__all__ = ["MAX_DEPTH", "MAX_NODES", "load_yaml", "load_yaml_calls"]

MAX_NODES = 10_000
MAX_DEPTH = 64

Schema = Mapping[str, Any]
_TAG = "tag:yaml.org,2002:"
_KIND_OF_TAG = {
    _TAG + "int": "integer",
    _TAG + "float": "number",
    _TAG + "bool": "boolean",
    _TAG + "null": "null",
}
_scalars = SafeConstructor()
# libyaml's composer is ~15x faster; both are safe loaders (no Python objects).
_CALLS_HINT = ". Write a YAML list of calls, each with 'tool: name' and 'args:'"
_OPEN_EVENTS = (yaml.SequenceStartEvent, yaml.MappingStartEvent)
_CLOSE_EVENTS = (yaml.SequenceEndEvent, yaml.MappingEndEvent)
_LOADER: type[Any] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# YAML 1.1 reads 0123 as octal 83; every model that writes it means 123.
_LEADING_ZERO = re.compile(r"[-+]?0[0-9_]+")


def _compose(text: str, hint: str = "") -> Node | None:
    """Compose ``text`` into nodes, refusing deep nesting *before* composing.

    Both composers recurse per nesting level: libyaml's overflows the C stack (a
    segfault) near 30,000 levels, PyYAML's raises RecursionError near 1,000. The event
    stream is flat, so its depth is checked first.
    """
    try:
        if _may_nest_deeper_than(text, MAX_DEPTH):
            _check_depth(text)
        return yaml.compose(text, Loader=_LOADER)
    except yaml.YAMLError as error:
        raise ToolCallParseError(f"not valid YAML: {_yaml_problem(error)}{hint}") from error


def _may_nest_deeper_than(text: str, depth: int) -> bool:
    """Every nesting level needs one of "[", "{", "-", ":" or "?": count them (fast, in C)."""
    indicators = sum(text.count(ch) for ch in "[{-:?")
    return indicators > depth


def _check_depth(text: str) -> None:
    depth = 0
    for event in yaml.parse(text, Loader=_LOADER):
        if isinstance(event, _OPEN_EVENTS):
            depth += 1
            if depth > MAX_DEPTH:
                raise ToolCallParseError(
                    f"YAML is nested more than {MAX_DEPTH} levels deep; write flatter values"
                )
        elif isinstance(event, _CLOSE_EVENTS):
            depth -= 1


def load_yaml_calls(
    content: str, schema_for: Callable[[str], Schema | None]
) -> list[ToolCall | str]:
    """Calls (or, per bad item, a message saying why it is not a call).

    ``schema_for(tool_name)`` gives the JSON Schema of that tool's arguments, or None
    for an unknown tool (its arguments are then built without a schema).
    """
    check_size(content)
    text = unfence(content)
    if not text.strip():
        return []
    root = _compose(text, _CALLS_HINT)
    if root is None:
        return []
    builder = _Builder()
    items = root.value if isinstance(root, SequenceNode) else [root]
    return [builder.call_or_problem(index, item, schema_for) for index, item in enumerate(items)]


def load_yaml(text: str, schema: Schema | None = None) -> Any:
    """One YAML value, bounded like tool calls and typed by ``schema`` where given.

    Raises ``ToolCallParseError`` on invalid or oversized YAML.

    >>> load_yaml("code: 0123\\nsent: no", {"properties": {"code": {"type": "string"}}})
    {'code': '0123', 'sent': False}
    """
    check_size(text)
    root = _compose(text)
    if root is None:
        return None
    return _Builder().value(root, schema, root=schema, depth=0)


class _Builder:
    def __init__(self) -> None:
        self._nodes = 0

    def call_or_problem(
        self, index: int, node: Node, schema_for: Callable[[str], Schema | None]
    ) -> ToolCall | str:
        """One call, or why it is not one; a bad call never fails its siblings."""
        try:
            return self.call(index, node, schema_for)
        except ToolCallParseError as error:
            return f"call {index + 1}: {error}"

    def call(
        self, index: int, node: Node, schema_for: Callable[[str], Schema | None]
    ) -> ToolCall | str:
        if not isinstance(node, MappingNode):
            return f"call {index + 1} is not a mapping with 'tool:' and 'args:'"
        fields = {self._key(k): v for k, v in node.value}
        function = fields.get("function")
        if isinstance(function, MappingNode) and not any(k in fields for k in NAME_KEYS):
            fields = {self._key(k): v for k, v in function.value}
        name_node = next((fields[k] for k in NAME_KEYS if k in fields), None)
        if not isinstance(name_node, ScalarNode) or not name_node.value.strip():
            keys = ", ".join(fields) or "none"
            return f"call {index + 1} has no 'tool:' name (keys: {keys})"
        name = name_node.value.strip()
        args_node = next((fields[k] for k in ARGS_KEYS if k in fields), None)
        if args_node is None:
            return ToolCall(name, {})
        args = self.value(args_node, schema_for(name), root=schema_for(name), depth=0)
        if args is None:
            return ToolCall(name, {})
        if not isinstance(args, dict):
            return f"call {index + 1} ({name}): 'args' must be a mapping of parameter names"
        return ToolCall(name, args)

    def _key(self, node: Node) -> str:
        if not isinstance(node, ScalarNode):
            raise ToolCallParseError("a YAML mapping key must be a plain scalar")
        return str(node.value)

    def value(self, node: Node, schema: Schema | None, *, root: Schema | None, depth: int) -> Any:
        self._nodes += 1
        if self._nodes > MAX_NODES or depth > MAX_DEPTH:
            raise ToolCallParseError(
                f"tool call YAML is too large or too deeply nested (more than {MAX_NODES} "
                f"values or {MAX_DEPTH} levels, e.g. through aliases); write plain values"
            )
        schema = _resolve(schema, root)
        if isinstance(node, MappingNode):
            return {
                self._key(k): self.value(
                    v, _property(schema, self._key(k), root), root=root, depth=depth + 1
                )
                for k, v in node.value
            }
        if isinstance(node, SequenceNode):
            return [
                self.value(item, _items(schema, root), root=root, depth=depth + 1)
                for item in node.value
            ]
        assert isinstance(node, ScalarNode)
        return _scalar(node, schema, root)


def _scalar(node: ScalarNode, schema: Schema | None, root: Schema | None) -> Any:
    kind = _KIND_OF_TAG.get(node.tag)
    if node.style or kind is None:  # plain style is None (Python) or "" (libyaml)
        return node.value  # quoted, block, str, timestamp, or an explicit tag: the text
    if kind == "null":
        if _accepts(schema, "null", root) or not _accepts(schema, "string", root):
            return None
        return node.value
    if _accepts(schema, kind, root) or not _accepts(schema, "string", root):
        if kind == "integer":
            if _LEADING_ZERO.fullmatch(node.value):
                return int(node.value.replace("_", ""), 10)  # YAML 1.2 reading, as models mean
            return _scalars.construct_yaml_int(node)
        if kind == "number":
            return _scalars.construct_yaml_float(node)
        return _scalars.construct_yaml_bool(node)
    return node.value


def _resolve(schema: Schema | None, root: Schema | None) -> Schema | None:
    seen = 0
    while schema is not None and isinstance(schema.get("$ref"), str) and seen < 32:
        ref: str = schema["$ref"]
        target: Any = root
        for part in ref.removeprefix("#/").split("/"):
            target = target.get(part) if isinstance(target, Mapping) else None
        schema = target if isinstance(target, Mapping) else None
        seen += 1
    return schema


def _alternatives(schema: Schema) -> list[Any]:
    return [*schema.get("anyOf", ()), *schema.get("oneOf", ()), *schema.get("allOf", ())]


def _property(schema: Schema | None, key: str, root: Schema | None) -> Schema | None:
    if schema is None:
        return None
    props = schema.get("properties")
    if isinstance(props, Mapping) and key in props:
        return props[key]  # type: ignore[no-any-return]
    for alternative in _alternatives(schema):
        found = _property(_resolve(alternative, root), key, root)
        if found is not None:
            return found
    extra = schema.get("additionalProperties")
    return extra if isinstance(extra, Mapping) else None


def _items(schema: Schema | None, root: Schema | None) -> Schema | None:
    if schema is None:
        return None
    items = schema.get("items")
    if isinstance(items, Mapping):
        return items
    for alternative in _alternatives(schema):
        found = _items(_resolve(alternative, root), root)
        if found is not None:
            return found
    return None


def _accepts(schema: Schema | None, kind: str, root: Schema | None) -> bool:
    """Whether a value of JSON type ``kind`` may stand where ``schema`` is (unknown: yes)."""
    schema = _resolve(schema, root)
    if schema is None:
        return True
    alternatives = _alternatives(schema)
    if alternatives:
        return any(_accepts(_resolve(a, root), kind, root) for a in alternatives)
    if "enum" in schema or "const" in schema:
        values = schema.get("enum", [schema.get("const")])
        return any(
            _json_kind(v) == kind or (kind == "integer" and _json_kind(v) == "number")
            for v in values
        )
    declared = schema.get("type")
    if declared is None:
        return True
    types = declared if isinstance(declared, list) else [declared]
    return kind in types or (kind == "integer" and "number" in types)


def _json_kind(value: object) -> str:
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


def _yaml_problem(error: yaml.YAMLError) -> str:
    if isinstance(error, yaml.MarkedYAMLError) and error.problem_mark is not None:
        mark = error.problem_mark
        return f"{error.problem} (line {mark.line + 1}, column {mark.column + 1})"
    return str(error).splitlines()[0]
