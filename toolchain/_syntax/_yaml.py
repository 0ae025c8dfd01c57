"""The YAML call syntax: schema-aware, bounded YAML for tool calls, and ``YAMLToolChain``,
the chain whose calls are that YAML and whose outputs are YAML.
"""

from __future__ import annotations

import functools
import math
import re
import sys
from collections.abc import Callable, Mapping
from typing import Any, Unpack, cast

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from toolchain._errors import ToolCallParseError, ToolchainError
from toolchain._input import Schema, accepts, items_schema, property_schema, resolve
from toolchain._kept import Kept, kept_for
from toolchain._observations import to_yaml
from toolchain._result import ToolCall
from toolchain._syntax._json import ARGS_KEYS, NAME_KEYS, check_text, unfence
from toolchain._syntax._nesting import MAX_DEPTH, yaml_flow_nesting_exceeds
from toolchain._syntax._yaml_fast import LOADER, TAG, Args, Pairs, compose_common, read_common_calls
from toolchain.chain._base import ChainOptions, ToolChainBase
from toolchain.chain._check import too_many
from toolchain.chain._stages import AnyTool

# Schema-aware, bounded YAML for tool calls.
#
# YAML 1.1 reads ``no`` as False, ``0123`` as 83, ``1e3`` as a float and ``2026-01-27``
# as a date. A model that writes those for a parameter declared ``string`` meant the
# text, so we compose YAML into nodes (``SafeLoader``: no arbitrary objects) and build
# values ourselves: a plain scalar becomes its YAML type only where the parameter's
# schema accepts that type, and otherwise stays the string the model wrote. Integers with a
# leading zero are decimal, as in YAML 1.2. Dates always
# stay strings (JSON has none; pydantic parses ISO text into ``date`` fields itself).
#
# Limits: content size, nesting depth, the number of nodes composed (counted on the
# parser's flat event stream before composing: a tree of a million nodes costs
# superlinear time to build, as the garbage collector rescans it while it grows), and
# the number of values built, which bounds alias expansion ("billion laughs") as well as
# recursive aliases. Integers are read by
# our own linear-time code and kept within Python's int-to-text digit limit (so a value
# can always be shown again); a scalar its tag cannot read (``0x_``, ``!!bool maybe``, a
# 5,000-digit integer) stays the text where the schema accepts a string, and is reported
# as a problem of that one call otherwise. Nothing but ``ToolCallParseError`` leaves here.

__all__ = [
    "MAX_COMPOSED",
    "MAX_DEPTH",
    "MAX_NODES",
    "YAMLSyntax",
    "YAMLToolChain",
    "load_yaml",
    "load_yaml_calls",
    "schema_yaml",
]

MAX_NODES = 10_000
MAX_COMPOSED = 4 * MAX_NODES
"""Nodes a text may hold (keys, values and aliases): room for ``MAX_NODES`` values,
their keys, and calls past a chain's ``max_calls`` that are counted but never built."""
_TOO_DEEP = f"YAML is nested more than {MAX_DEPTH} levels deep; write flatter values"
_TOO_MANY = f"YAML holds more than {MAX_COMPOSED} keys and values; write fewer, smaller values"

_KIND_OF_TAG = {
    TAG + "int": "integer",
    TAG + "float": "number",
    TAG + "bool": "boolean",
    TAG + "null": "null",
}
_CALLS_HINT = ". Write a YAML list of calls, each with 'tool: name' and 'args:'"
_OPEN_EVENTS = (yaml.SequenceStartEvent, yaml.MappingStartEvent)
_CLOSE_EVENTS = (yaml.SequenceEndEvent, yaml.MappingEndEvent)
_NODE_EVENTS = (yaml.ScalarEvent, yaml.AliasEvent, *_OPEN_EVENTS)
# PyYAML's int digits rule (0x, 0b, 0o, decimal); ours are checked before int() sees them.
_DIGITS = {
    2: re.compile(r"[01]+"),
    8: re.compile(r"[0-7]+"),
    10: re.compile(r"[0-9]+"),
    16: re.compile(r"[0-9a-fA-F]+"),
}
_BOOLS = {"yes": True, "no": False, "true": True, "false": False, "on": True, "off": False}
_KIND_WORDS = {"integer": "an integer", "number": "a number", "boolean": "a boolean"}
_KIND_HINTS = {
    "integer": "write digits such as 42",
    "number": "write a number such as 1.5",
    "boolean": "write true or false",
}
# Beyond CPython's default limit an int cannot be turned back into text (ValueError),
# and decimal conversion is quadratic in the digits: a hard bound either way.
_DEFAULT_INT_DIGITS = 4300


def _compose(text: str, hint: str = "") -> Node | None:
    """Compose ``text`` into nodes, refusing deep nesting and too many nodes *before*
    composing.

    Both composers recurse per nesting level: libyaml's overflows the C stack (a
    segfault) near 30,000 levels, PyYAML's raises RecursionError near 1,000, and since
    PyYAML 6.0.4 libyaml's scanner refuses 1,000 flow levels with its own error while it
    looks ahead. So flow nesting is measured on the text by our own scan, before the
    parser sees it, and block nesting on the parser's event stream, which is flat and
    comes with no look-ahead; either way the refusal is ours. The same stream counts the
    nodes: composing is linear only up to a bound (each node is an object the garbage
    collector rescans as the tree grows), and reading events one by one always is.

    The common shape of call YAML is read without PyYAML first (``compose_common``: the
    same nodes in about half the time; it declines anything else, and what it declines
    is composed here as before).
    """
    common = compose_common(text, MAX_COMPOSED)
    if common is not None:
        return common
    try:
        if len(text) > MAX_COMPOSED or _may_nest_deeper_than(text, MAX_DEPTH):
            if yaml_flow_nesting_exceeds(text, MAX_DEPTH):
                raise ToolCallParseError(_TOO_DEEP)
            _check_shape(text)
        return yaml.compose(text, Loader=LOADER)
    except yaml.YAMLError as error:
        raise ToolCallParseError(f"not valid YAML: {_yaml_problem(error)}{hint}") from error
    except (UnicodeError, RecursionError) as error:  # check_text and _check_shape come first
        raise ToolCallParseError(f"not readable YAML: {error}{hint}") from error


def _may_nest_deeper_than(text: str, depth: int) -> bool:
    """Every nesting level needs one of "[", "{", "-", ":" or "?": count them (fast, in C)."""
    indicators = sum(text.count(ch) for ch in "[{-:?")
    return indicators > depth


def _check_shape(text: str) -> None:
    """Refuse text nested deeper than ``MAX_DEPTH`` or holding more than
    ``MAX_COMPOSED`` nodes, reading events one at a time (none is kept)."""
    depth = nodes = 0
    for event in yaml.parse(text, Loader=LOADER):
        if isinstance(event, _NODE_EVENTS):
            nodes += 1
            if nodes > MAX_COMPOSED:
                raise ToolCallParseError(_TOO_MANY)
        if isinstance(event, _OPEN_EVENTS):
            depth += 1
            if depth > MAX_DEPTH:
                raise ToolCallParseError(_TOO_DEEP)
        elif isinstance(event, _CLOSE_EVENTS):
            depth -= 1


def load_yaml_calls(
    content: str,
    schema_for: Callable[[str], Schema | None],
    *,
    limit: int | None = None,
    too_many: Callable[[int], str] | None = None,
) -> list[ToolCall | str]:
    """Calls (or, per bad item, a message saying why it is not a call).

    ``schema_for(tool_name)`` gives the JSON Schema of that tool's arguments, or None
    for an unknown tool (its arguments are then built without a schema). With
    ``limit``, only that many calls are built; ``too_many(count)`` is then the one
    item that stands for the ``count`` calls beyond it.
    """
    check_text(content)
    text = unfence(content)
    if not text.strip():
        return []
    builder = _Builder()
    # Gent's own call list, as models write it, is read straight to names and args;
    # any other YAML is composed and its calls found in the tree.
    common = read_common_calls(text, MAX_COMPOSED)
    if common is not None:
        extra = 0 if limit is None else max(0, len(common) - limit)
        calls = [
            builder.args(index, name, args, schema_for)
            for index, (name, args) in enumerate(common[:limit] if extra else common)
        ]
    else:
        root = _compose(text, _CALLS_HINT)
        if root is None:
            return []
        items = root.value if isinstance(root, SequenceNode) else [root]
        extra = 0 if limit is None else max(0, len(items) - limit)
        if extra:
            items = items[:limit]
        calls = [
            builder.call_or_problem(index, item, schema_for) for index, item in enumerate(items)
        ]
    if extra and too_many is not None:
        calls.append(too_many(extra))
    return calls


def load_yaml(text: str, schema: Schema | None = None) -> Any:
    """One YAML value, bounded like tool calls and typed by ``schema`` where given.

    Raises ``ToolCallParseError`` on invalid or oversized YAML, and on a scalar that is
    neither readable as its YAML type nor text the schema accepts (``n: 0x_`` for an int).

    >>> load_yaml("code: 0123\\nsent: no", {"properties": {"code": {"type": "string"}}})
    {'code': '0123', 'sent': False}
    """
    check_text(text)
    root = _compose(text)
    if root is None:
        return None
    try:
        return _Builder().value(root, schema, root=schema, depth=0)
    except _BadScalar as error:
        raise ToolCallParseError(str(error)) from None


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
        pairs: list[tuple[Node, Node]] = node.value
        name_node: Node | None
        args_node: Node | None
        if (
            len(pairs) == 2
            and type(pairs[0][0]) is ScalarNode
            and pairs[0][0].value == "tool"
            and type(pairs[1][0]) is ScalarNode
            and pairs[1][0].value == "args"
        ):
            # gent's own shape, by far the most common: "tool" then "args", the nodes the
            # key search below would find, without building the fields dict.
            name_node, args_node = pairs[0][1], pairs[1][1]
            fields: dict[str, Node] = {"tool": name_node, "args": args_node}
        else:
            fields = self._fields(node)
            function = fields.get("function")
            if isinstance(function, MappingNode) and not any(k in fields for k in NAME_KEYS):
                fields = self._fields(function)
            name_node, args_node = _first(fields, NAME_KEYS), _first(fields, ARGS_KEYS)
        if not isinstance(name_node, ScalarNode) or not name_node.value.strip():
            keys = ", ".join(fields) or "none"
            return f"call {index + 1} has no 'tool:' name (keys: {keys})"
        return self.args(index, name_node.value.strip(), args_node, schema_for)

    def args(
        self,
        index: int,
        name: str,
        args_node: Args,
        schema_for: Callable[[str], Schema | None],
    ) -> ToolCall | str:
        """The call to ``name`` with ``args_node`` as its arguments, or why it is not one."""
        if args_node is None:
            return ToolCall(name, {})
        try:
            schema = schema_for(name)
            if isinstance(args_node, list):  # a mapping's pairs, read directly
                return ToolCall(name, self.mapping(args_node, schema, root=schema, depth=0))
            args = self.value(args_node, schema, root=schema, depth=0)
        except _BadScalar as error:
            return f"call {index + 1} ({name}): argument {error}"
        except ToolCallParseError as error:  # too large or deep
            return f"call {index + 1}: {error}"
        if args is None:
            return ToolCall(name, {})
        if not isinstance(args, dict):
            return f"call {index + 1} ({name}): 'args' must be a mapping of parameter names"
        return ToolCall(name, cast("dict[str, object]", args))  # value(): keys made by _key

    def _fields(self, node: MappingNode) -> dict[str, Node]:
        # A scalar key's value is its text: read directly, _key only for the others.
        return {k.value if type(k) is ScalarNode else self._key(k): v for k, v in node.value}

    def _key(self, node: Node) -> str:
        if not isinstance(node, ScalarNode):
            raise ToolCallParseError("a YAML mapping key must be a plain scalar")
        return str(node.value)

    def value(self, node: Node, schema: Schema | None, *, root: Schema | None, depth: int) -> Any:
        if isinstance(node, MappingNode):
            return self.mapping(node.value, schema, root=root, depth=depth)
        self._nodes += 1
        if self._nodes > MAX_NODES or depth > MAX_DEPTH:
            raise _too_large()
        schema = resolve(schema, root)
        if isinstance(node, SequenceNode):
            items = items_schema(schema, root)
            sequence: list[Any] = []
            for position, item in enumerate(node.value):
                try:
                    sequence.append(self.value(item, items, root=root, depth=depth + 1))
                except _BadScalar as error:
                    error.path.append(position)
                    raise
            return sequence
        assert isinstance(node, ScalarNode)
        return _scalar(node, schema, root)

    def mapping(
        self,
        pairs: list[tuple[Node, Node]] | Pairs,
        schema: Schema | None,
        *,
        root: Schema | None,
        depth: int,
    ) -> dict[str, Any]:
        """A mapping's pairs as a dict; a key is a node (composed) or its text (read
        directly, ``read_common_calls``)."""
        self._nodes += 1
        if self._nodes > MAX_NODES or depth > MAX_DEPTH:
            raise _too_large()
        schema = resolve(schema, root)
        mapping: dict[str, Any] = {}
        for key_node, item in pairs:
            if isinstance(key_node, str):
                key = key_node
            else:
                key = key_node.value if type(key_node) is ScalarNode else self._key(key_node)
            if type(item) is ScalarNode and (item.style or item.tag not in _KIND_OF_TAG):
                # Text whatever the schema says (quoted, or a plain str or timestamp):
                # no schema to look up. Still counted, as value() counts it.
                self._nodes += 1
                if self._nodes > MAX_NODES or depth >= MAX_DEPTH:
                    raise _too_large()
                mapping[key] = item.value
                continue
            try:
                mapping[key] = self.value(
                    item, property_schema(schema, key, root), root=root, depth=depth + 1
                )
            except _BadScalar as error:
                error.path.append(key)
                raise
        return mapping


def _first(fields: dict[str, Node], keys: tuple[str, ...]) -> Node | None:
    """The node under the first of ``keys`` that ``fields`` holds."""
    for key in keys:
        node = fields.get(key)
        if node is not None:
            return node
    return None


def _too_large() -> ToolCallParseError:
    return ToolCallParseError(
        f"tool call YAML is too large or too deeply nested (more than {MAX_NODES} "
        f"values or {MAX_DEPTH} levels, e.g. through aliases); write plain values"
    )


class _Unreadable(ToolchainError, ValueError):
    """A scalar its tag's type cannot be read from; the message says why."""


class _BadScalar(ToolCallParseError):
    """A scalar that is neither readable as its tagged type nor acceptable as text.

    ``path`` collects keys and indexes innermost first as the error passes up.
    """

    def __init__(self, text: str, kind: str, problem: str) -> None:
        super().__init__(text, kind, problem)
        self.text, self.kind, self.problem = text, kind, problem
        self.path: list[str | int] = []

    def __str__(self) -> str:
        where = "".join(
            f"[{part}]" if isinstance(part, int) else f".{part}" for part in reversed(self.path)
        ).removeprefix(".")
        shown = repr(self.text) if len(self.text) <= 40 else f"{self.text[:30]!r}... "
        if len(self.text) > 40:
            shown += f"({len(self.text)} characters)"
        return (
            f"{where or 'value'}: {shown} is not {_KIND_WORDS[self.kind]} ({self.problem}) and "
            f"text is not accepted there; {_KIND_HINTS[self.kind]}"
        )


def _scalar(node: ScalarNode, schema: Schema | None, root: Schema | None) -> Any:
    kind = _KIND_OF_TAG.get(node.tag)
    if node.style or kind is None:  # plain style is None (Python) or "" (libyaml)
        return node.value  # quoted, block, str, timestamp, or an explicit tag: the text
    if kind == "null":
        if accepts(schema, "null", root) or not accepts(schema, "string", root):
            return None
        return node.value
    if accepts(schema, kind, root) or not accepts(schema, "string", root):
        try:
            if kind == "integer":
                return _yaml_int(node.value)
            if kind == "number":
                return _yaml_float(node.value)
            return _yaml_bool(node.value)
        except _Unreadable as problem:
            if accepts(schema, "string", root):
                return node.value
            raise _BadScalar(node.value, kind, str(problem)) from None
    return node.value


def _int_digit_limit() -> int:
    limit = sys.get_int_max_str_digits()
    return min(limit, _DEFAULT_INT_DIGITS) if limit else _DEFAULT_INT_DIGITS


def _yaml_int(text: str) -> int:
    """A YAML 1.1 integer (``0b``, ``0x``, ``0o``, sexagesimal ``1:30``), in linear time.

    A leading zero means decimal, as in YAML 1.2: a model writing 0123 means 123, not 83.
    """
    value = text.replace("_", "")
    sign = -1 if value.startswith("-") else 1
    value = value[1:] if value.startswith(("-", "+")) else value
    limit = _int_digit_limit()
    if ":" in value:  # base 60: bounded first, as Horner's rule is quadratic in the parts
        if len(value) > 2 * limit:
            raise _Unreadable(f"it is too long to read as a number ({len(value)} characters)")
        parts = [part.lstrip("0") or "0" for part in value.split(":")]
        if not all(_DIGITS[10].fullmatch(part) for part in parts):
            raise _Unreadable("its base-60 parts must be digits")
        if max(map(len, parts)) > limit:  # before int(); the result is at least that part
            raise _Unreadable(f"it has more than {limit} digits")
        number = 0
        for part in parts:
            number = number * 60 + int(part)
        if number >= _power_of_ten(limit):
            raise _Unreadable(f"it has more than {limit} digits")
        return sign * number
    base = {"0b": 2, "0x": 16, "0o": 8}.get(value[:2].lower(), 10)
    digits = value[2:] if base != 10 else value
    if not _DIGITS[base].fullmatch(digits):
        raise _Unreadable(f"it is not a base-{base} number" if digits else "it has no digits")
    digits = digits.lstrip("0") or "0"  # int() counts leading zeros against its limit
    if base == 10 and len(digits) > limit:  # before the quadratic int()
        raise _Unreadable(f"it has more than {limit} digits")
    number = int(digits, base)  # powers of two: linear
    if base != 10 and number >= _power_of_ten(limit):  # a linear comparison
        raise _Unreadable(f"it has more than {limit} digits")
    return sign * number


@functools.cache
def _power_of_ten(digits: int) -> int:
    return cast(int, 10**digits)


def _yaml_float(text: str) -> float:
    value = text.replace("_", "").lower()
    sign = -1.0 if value.startswith("-") else 1.0
    value = value[1:] if value.startswith(("-", "+")) else value
    if value in (".inf", ".nan"):
        return sign * (math.inf if value == ".inf" else math.nan)
    try:
        if ":" in value:
            number = 0.0
            for part in value.split(":"):
                number = number * 60 + float(part)
            return sign * number
        return sign * float(value)
    except ValueError:
        raise _Unreadable("it is not written as a decimal number") from None


def _yaml_bool(text: str) -> bool:
    try:
        return _BOOLS[text.lower()]
    except KeyError:
        raise _Unreadable("only true/false, yes/no and on/off are booleans") from None


def _yaml_problem(error: yaml.YAMLError) -> str:
    if isinstance(error, yaml.MarkedYAMLError) and error.problem_mark is not None:
        mark = error.problem_mark
        return f"{error.problem} (line {mark.line + 1}, column {mark.column + 1})"
    return str(error).splitlines()[0]


# ``YAMLToolChain``: the chain whose calls are schema-aware YAML, and outputs YAML.


def schema_yaml(schema: Mapping[str, object]) -> str:
    """A tool's parameter schema as YAML, for a listing: written once per schema object
    (a tool's prompt schema is one object, for every tool of its input type: a chain,
    view or agent made per request lists it again, and YAML is slow to write). The
    schema is read, never changed, as ``Tool.prompt_schema`` says."""
    return kept_for(_WRITTEN, schema, _written)


def _written(schema: Mapping[str, object]) -> str:
    return to_yaml(dict(schema))


_WRITTEN = Kept[int, tuple[Mapping[str, object], str]](1024)
"""Schemas and their YAML (`schema_yaml`)."""


class YAMLSyntax:
    """Calls as a YAML list of ``tool:`` / ``args:`` items, each argument typed by its
    tool's schema (a ``string`` stays the text written); outputs as YAML."""

    label = "YAML"

    def read(self, content: str, tools: Mapping[str, AnyTool], limit: int) -> list[ToolCall | str]:
        def schema_for(name: str) -> Mapping[str, Any] | None:
            tool = tools.get(name)
            return tool.input_schema() if tool is not None else None

        return load_yaml_calls(
            content, schema_for, limit=limit, too_many=lambda extra: too_many(extra, limit)
        )

    def write(self, output: object) -> str:
        return to_yaml(output)

    def schema_text(self, schema: Mapping[str, object]) -> str:
        return schema_yaml(schema)

    def guidance(self) -> str:
        return (
            "Call tools with YAML, as a list of calls:\n"
            "- tool: tool_name\n"
            "  args:\n"
            "    param: value\n"
            "Add items to the list for several independent calls; they run in parallel "
            "and their results come back in order."
        )


class YAMLToolChain(ToolChainBase):
    """Tool calls written as YAML (schema-aware: strings stay strings); outputs as YAML,
    or as ``observations="json" | "toon" | "auto"`` says (see ``ToolChainBase``).

    >>> from formats import MarkdownFormat
    >>> from toolchain import tool, ExecutionContext
    >>> @tool
    ... def echo(code: str) -> dict[str, str]:
    ...     '''Echo a code.'''
    ...     return {"code": code}
    >>> chain = YAMLToolChain().register_tool(echo)
    >>> call = "- tool: echo\\n  args:\\n    code: 0123"
    >>> print(chain.execute_sync(ExecutionContext(), call, MarkdownFormat()).text)
    # observation
    <BLANKLINE>
    ## echo
    code: '0123'
    """

    def __init__(self, **options: Unpack[ChainOptions]) -> None:
        options.setdefault("observations", "yaml")
        super().__init__(YAMLSyntax(), **options)
