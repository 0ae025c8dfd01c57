"""The common shape of call YAML, read without PyYAML.

Models write calls in a small, regular part of YAML: a block list of block mappings,
``key: value`` lines, short flow collections (``{key: alpha}``, ``[a, b]``) and one-line
scalars. For that part, ``compose_common`` builds the very node tree PyYAML's safe
composer would (same tags from the same resolver, same styles, same order) in about half
the time (11.6 against 21.8 us for two calls): libyaml still builds a Python event, two
marks and a node per scalar and calls the Python resolver for each. The plain scalars
calls repeat (``tool``, ``args``, a tool's name) are built once and shared, as PyYAML
shares an aliased node: the tree is read, never changed.

Anything outside that part (comments, anchors and aliases, tags, block scalars,
multi-line scalars, escapes, tabs, document markers, complex keys, odd indentation, ...)
is declined with None, and the caller composes with PyYAML instead. Declining is always
safe; accepting is only done where the reading is certain, which the property tests in
``tests/toolchain/test_yaml_fast.py`` check against PyYAML itself. It stands alone (it
is not part of ``_yaml``) because it is one rule set with one test of its own: "equal to
PyYAML or declined".

Bounds: the caller's size limit is checked first, nesting deeper than ``MAX_DEPTH`` is
declined (so the bounded PyYAML path refuses it with its own message), every node takes
at least one character of text (so nodes never outnumber characters), and each line is
read once, left to right: linear time (``test_the_fast_reader_costs_linear_time``).
"""

from __future__ import annotations

import re
from typing import Any, Final

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from toolchain._errors import ToolchainError
from toolchain._syntax._nesting import MAX_DEPTH

__all__ = ["LOADER", "TAG", "Args", "Pairs", "compose_common", "read_common_calls"]

LOADER: Final[type[Any]] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""The loader both paths follow: libyaml's composer is ~15x faster than PyYAML's; both
are safe loaders (no Python objects)."""

TAG: Final = "tag:yaml.org,2002:"
"""The prefix of YAML's standard tags (``tag:yaml.org,2002:int``), as both paths read them."""
_STR, _SEQ, _MAP, _NULL = TAG + "str", TAG + "seq", TAG + "map", TAG + "null"
_PLAIN = ""  # libyaml's style for a plain scalar (PyYAML's own composer says None)
# The loader's own implicit resolvers (YAML 1.1: bool, int, float, null, timestamp,
# merge, value), keyed by first character as Resolver.resolve reads them: a plain scalar
# gets exactly the tag PyYAML gives it.
_RESOLVERS: Final[dict[str | None, list[tuple[str, re.Pattern[str]]]]] = (
    LOADER.yaml_implicit_resolvers
)
_WILDCARD: Final = _RESOLVERS.get(None, [])

# Characters whose meaning depends on more context than one line: a comment, a tab
# (indentation or not), control characters (a reader error), the line breaks libyaml
# knows beyond \n (NEL, LS, PS) and a byte-order mark.
_DECLINED = re.compile("[#\t\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\ufeff\ud800-\udfff]")
# A plain scalar's first character: no indicator; "-" only as a sign ("-1", "-.5").
_PLAIN_START = re.compile(r"-(?=[^ -])|[^-?:,\[\]{}#&*!|>'\"%@` ]")
_SINGLE = re.compile(r"'[^']*'")  # no '' escape, one line
_DOUBLE = re.compile(r'"[^"\\]*"')  # no backslash escape, one line
# A plain scalar in a flow collection: no flow indicator, ':', '?' or quote anywhere in
# it (where those mean something differs between YAML readers).
_FLOW_PLAIN = r"(?:-(?=[^ ,\[\]{}:?'\"-])|[^-?:,\[\]{}#&*!|>'\"%@` ])[^,\[\]{}:?#'\"]*"
# A flow collection's tokens, one alternative each: spaces, an indicator, ": ", a quoted
# scalar, a plain scalar (its trailing spaces matched with it, and stripped).
_FLOW_TOKENS = re.compile(
    r"( +)|([\[\]{},])|(: )|(" + _SINGLE.pattern + "|" + _DOUBLE.pattern + ")|(" + _FLOW_PLAIN + ")"
)
# One block line: indent, "-" (a list item) and the blanks after it, "key:" (plain or
# quoted, no ':' inside) and the rest. Matched from each line's start only (every line
# of a text in one findall: "^" and "$" at line breaks, "." never crossing one), each
# part at most once: linear in the line. No part crosses a line break. A part not there
# is "" (a key never is).
_LINES = re.compile(
    r"^( *)(?:(-)( +|$))?"
    r"(?:([^-?:,\[\]{}#&*!|>'\"%@` \n][^:\n]*|'[^':\n]*'|\"[^\":\\\n]*\"):(?: +|$))?(.*)",
    re.MULTILINE,
)
# The commonest call list of all, each call "- tool: NAME" then "  args: {...}" on the
# next line, NAME a word of letters, digits and "_", the flow holding no bracket, brace
# or quote: `_flow_calls` reads it with one pattern. Each call starts with a literal
# and each part stops at a character the next one starts with: linear time.
_FLOW_CALL_TEXT = r"- tool: ([A-Za-z_][A-Za-z0-9_]*)\n  args: \{([^\n{}\[\]'\"]+)\}"
_FLOW_CALLS = re.compile(rf"(?:{_FLOW_CALL_TEXT}(?:\n|\Z))+")
_FLOW_CALL = re.compile(_FLOW_CALL_TEXT)
_MAX_KEY = 1000  # libyaml refuses a simple key longer than 1024 characters
_SHARED = 64  # plain scalars up to this long are built once and shared (never changed)
_NODES: dict[str, ScalarNode] = {}  # the plain scalars call YAML repeats: tool, args, names
_NODES_KEPT = 4096
_Line = tuple[int, bool, int, "str | None", str]  # indent, "-", key column, key, rest
# What a plain key, or a plain scalar in a flow, may not start with (YAML's indicators
# and the blank): "-" only followed by something else ("-1"), by none of _NOT_AFTER_DASH.
_INDICATORS: Final = frozenset("-?:,[]{}#&*!|>'\"%@` ")
_NOT_AFTER_DASH: Final = frozenset(" ,[]{}:?'\"-")
Pairs = list[tuple[str, Node]]
"""A mapping's keys (plain, so their text) and value nodes, in the order written."""
Args = Node | Pairs | None
"""A call's arguments as read: pairs of a mapping, another node, or None (no ``args``)."""


class _Declined(ToolchainError):
    """Not the common shape: PyYAML reads it (or says why it cannot). Never leaves
    `compose_common`; under the package's root as every class of ours is."""


def compose_common(text: str, max_size: int) -> Node | None:
    """The node tree PyYAML's safe composer gives for ``text``, or None where ``text``
    is not plainly the common shape of call YAML (then compose it with PyYAML).

    Plain scalars the calls repeat (``tool``, ``args``, a tool's name) are one shared
    node each, as PyYAML shares an aliased node: read the tree, never change it.

    >>> node = compose_common("- tool: lookup\\n  args: {key: alpha}", 1000)
    >>> [(k.value, getattr(v, "value", None)) for k, v in node.value[0].value][0]
    ('tool', 'lookup')
    >>> compose_common("- tool: lookup  # a comment", 1000) is None
    True
    """
    readable = _line_by_line(text, max_size)
    if readable is None:
        return None
    lines: list[_Line] = []
    for indent, dash, gap, key, rest in _LINES.findall(readable):
        rest = rest.rstrip(" ")
        if key:
            # The key starts after the indent, "-" and the blanks after it.
            column = len(indent) + len(dash) + len(gap)
            lines.append((len(indent), dash != "", column, key.rstrip(" "), rest))
        elif dash or rest:
            if not indent and not dash and rest[:3] in ("---", "..."):
                return None  # a document marker (the line is all "rest" then)
            lines.append((len(indent), dash != "", 0, None, rest))
    if not lines:
        return None
    reader = _Reader(lines)
    try:
        node = reader.block(lines[0][0], 1)
    except _Declined:
        return None
    return node if reader.pos == len(lines) else None


def read_common_calls(text: str, max_size: int) -> list[tuple[str, Args]] | None:
    """Each call of ``text`` as its tool's name and its arguments, where ``text`` is
    plainly gent's own list of calls; or None (then compose it: ``compose_common``).

    Gent's shape is how nearly every model writes calls: ``- tool: NAME`` with
    ``args:`` under it, a flow mapping on the same line or ``key: value`` lines below
    (or one such call alone, not in a list). Read with string methods line by line, it
    needs no pattern per line, no node for the list, a call or ``args`` and no search
    of a call's keys for its name. The arguments are what ``compose_common`` reads there
    (the same value nodes from the same ``_inline``), as ``key, node`` pairs where
    ``args`` is a block or flat flow mapping, the node otherwise, None without ``args``.
    Anything else (other keys, another order, nesting or a list under ``args``, an empty
    name, ``args:`` with nothing under it, odd indentation, quoted keys) is declined,
    never read another way: ``tests/toolchain/test_yaml_fast.py`` holds it to
    ``compose_common``. The commonest form of all (each call's ``args`` a flat flow
    mapping, ``_FLOW_CALLS``) is read with one pattern first (`_flow_calls`).

    >>> read_common_calls("- tool: lookup\\n  args:\\n    key: alpha", 1000)[0][1][0][0]
    'key'
    >>> read_common_calls("- name: lookup\\n  arguments: {key: alpha}", 1000) is None
    True
    """
    readable = _line_by_line(text, max_size)
    if readable is None:
        return None
    if _FLOW_CALLS.fullmatch(readable) is not None:
        flow = _flow_calls(readable)
        if flow is not None:
            return flow
    return _read_lines(readable)


def _read_lines(readable: str) -> list[tuple[str, Args]] | None:
    """`read_common_calls` of a text `_line_by_line` let through, line by line."""
    lines = readable.split("\n")
    calls: list[tuple[str, Args]] = []
    at, end = 0, len(lines)
    first = -1  # the indent of the first call
    listed = False  # "- tool:" items, or one "tool:" mapping alone
    depth = 3  # compose_common's depth of a call's values: in a list, a call, its values
    try:
        while at < end:
            line = lines[at]
            at += 1
            body = line.lstrip(" ")
            if not body:
                continue  # a blank line says nothing
            indent = len(line) - len(body)
            if first < 0:
                first, listed = indent, body[:2] == "- "
                depth = 3 if listed else 2
            elif indent != first or not listed:
                return None  # odd indentation, or a second "tool:" in one mapping
            item = body[2:].lstrip(" ") if listed else body
            if item[:6] != "tool: " or (listed and body[:2] != "- "):
                return None
            column = len(line) - len(item)  # where the call's keys sit
            name = item[6:].strip(" ")
            node = (_NODES.get(name) or _inline(name, depth)) if name else None
            if type(node) is not ScalarNode or not node.value.strip():
                return None  # no name, or not one scalar: the builder says why
            while at < end and not lines[at].strip(" "):
                at += 1
            args: Args = None
            if at < end:
                line = lines[at]
                body = line.lstrip(" ")
                if body[:5] == "args:" and len(line) - len(body) == column:
                    at += 1
                    rest = body[5:]
                    value = rest.strip(" ")
                    if not value:
                        args, at = _block_pairs(lines, at, column, depth + 1)
                    elif rest[0] != " ":
                        return None  # "args:x" is no key
                    else:
                        args = _flat_pairs(value) or _NODES.get(value) or _inline(value, depth)
            calls.append((node.value.strip(), args))
    except _Declined:
        return None
    return calls


def _flow_calls(text: str) -> list[tuple[str, Args]] | None:
    """The calls of ``text``, which `_FLOW_CALLS` matched whole: what the line-by-line
    reading of `read_common_calls` gives for it, in one pattern pass and a loop over its
    calls; None where a call's flow holds only blanks (the line-by-line reading reads
    that ``{ }`` as an empty mapping node). A name of letters, digits and "_" is a plain
    string scalar read as itself, and the flow between the braces holds no bracket or
    quote, so the line-by-line reading (`_read_lines`) takes the same name and the same
    pairs (``test_flow_calls_are_read_as_line_by_line``).

    >>> _flow_calls("- tool: lookup\\n  args: {key: alpha}")
    [('lookup', [('key', ScalarNode(tag='tag:yaml.org,2002:str', value='alpha'))])]
    """
    calls: list[tuple[str, Args]] = []
    try:
        for name, inner in _FLOW_CALL.findall(text):
            if not inner.strip(" "):
                return None
            calls.append((name, _pairs(inner)))
    except _Declined:
        return None
    return calls


def _line_by_line(text: str, max_size: int) -> str | None:
    """``text`` with CRLF as LF, or None where it is too large or holds a character
    whose meaning depends on more than its line (``_DECLINED``)."""
    if len(text) > max_size or "#" in text:
        return None
    if "\r" in text:  # CRLF is a line break like LF; a lone CR is declined
        text = text.replace("\r\n", "\n")
        if "\r" in text:
            return None
    if text.isascii():  # a flag the str keeps: then _DECLINED's are the unprintable ones
        return text if text.replace("\n", " ").isprintable() else None
    return None if _DECLINED.search(text) else text


def _block_pairs(lines: list[str], at: int, above: int, depth: int) -> tuple[Pairs, int]:
    """The ``key: value`` lines from ``lines[at]`` indented deeper than ``above``, all at
    one indent, each value (at ``depth``) on its own line; and the index after them."""
    pairs: Pairs = []
    indent = -1
    end = len(lines)
    while at < end:
        line = lines[at]
        body = line.lstrip(" ")
        if not body:
            at += 1
            continue
        here = len(line) - len(body)
        if here != indent:
            if indent >= 0 and here <= above:
                break  # the mapping ends
            if indent >= 0 or here <= above:
                raise _Declined  # a line deeper or shallower inside, or nothing under "args:"
            indent = here
        key, colon, rest = body.partition(": ")
        key = key.rstrip(" ")
        value = rest.strip(" ")
        if not (colon and value and key) or key[0] in _INDICATORS or ":" in key:
            raise _Declined  # not "key: value" on one line with a plain key
        if len(key) > _MAX_KEY:
            raise _Declined
        pairs.append((key, _NODES.get(value) or _inline(value, depth)))
        at += 1
    if not pairs:
        raise _Declined  # "args:" with nothing under it (null)
    return pairs, at


def _flat_pairs(text: str) -> Pairs | None:
    """``{a: 1, b: x}`` (plain scalars only) as pairs, or None for ``_inline`` to read."""
    if text[0] != "{" or text[-1] != "}":
        return None
    inner = text[1:-1]
    if not _is_flat(inner):
        return None
    return _pairs(inner)


def _pairs(inner: str) -> Pairs:
    """The inside of a flat flow mapping (`_is_flat`) as pairs; `_Declined` where a
    scalar is not plainly one (see `_flat_pairs`)."""
    parts = inner.split(",")
    if "?" in inner or inner.count(":") != len(parts):
        raise _Declined  # a "?" or ":" in a scalar ("{a: b: c}"), or a part with none ("{a}")
    pairs: Pairs = []
    for part in parts:
        key, colon, value = part.partition(": ")  # the part's one ":", so none in either
        key, value = key.strip(" "), value.strip(" ")
        if not (colon and key and value) or len(key) > _MAX_KEY:
            raise _Declined  # "{a:1}", "{a: }", a trailing comma, an overlong key
        if (key[0] in _INDICATORS and _no_plain_start(key)) or (
            value[0] in _INDICATORS and _no_plain_start(value)
        ):
            raise _Declined
        pairs.append((key, _NODES.get(value) or _plain(value)))
    return pairs


def _is_flat(inner: str) -> bool:
    """Whether a flow collection's inside holds no nesting or quotes, and something."""
    return not (
        "[" in inner
        or "]" in inner
        or "{" in inner
        or "}" in inner
        or "'" in inner
        or '"' in inner
        or not inner.strip(" ")
    )


def _no_plain_start(text: str) -> bool:
    """Whether ``text``, which starts with one of ``_INDICATORS``, cannot be a plain
    scalar for it: only "-" followed by something else ("-1") can."""
    return text[0] != "-" or len(text) == 1 or text[1] in _NOT_AFTER_DASH


def _key(key: str) -> ScalarNode:
    """A block mapping's key, plain or quoted (checked by ``_LINES``)."""
    if len(key) > _MAX_KEY:
        raise _Declined
    first = key[0]
    if first == "'" or first == '"':
        return ScalarNode(_STR, key[1:-1], None, None, first)
    return _NODES.get(key) or _plain(key)


class _Reader:
    """Block structure by indentation, one line at a time (each line read once)."""

    def __init__(self, lines: list[_Line]) -> None:
        self.lines = lines
        self.end = len(lines)
        self.pos = 0

    def block(self, indent: int, depth: int) -> Node:
        """The block collection whose first line (at ``pos``) is indented ``indent``."""
        if depth > MAX_DEPTH:
            raise _Declined
        if self.lines[self.pos][1]:
            return self.sequence(indent, depth)
        return self.mapping(indent, depth)

    def sequence(self, indent: int, depth: int) -> SequenceNode:
        lines = self.lines
        items: list[Node] = []
        while self.pos < self.end:
            at, dash, column, key, rest = lines[self.pos]
            if at != indent or not dash:
                if at > indent:
                    raise _Declined  # a continuation line or odd indentation
                break
            if key is not None:  # "- key: value": a mapping whose keys sit at the column of "key"
                lines[self.pos] = (column, False, column, key, rest)
                items.append(self.mapping(column, depth + 1))
            elif rest:
                items.append(_inline(rest, depth + 1))
                self.pos += 1
            else:
                self.pos += 1
                items.append(self.below(indent, depth + 1, same_indent_list=False))
        return SequenceNode(_SEQ, items, None, None, False)

    def mapping(self, indent: int, depth: int) -> MappingNode:
        lines = self.lines
        pairs: list[tuple[Node, Node]] = []
        while self.pos < self.end:
            at, dash, _, key, rest = lines[self.pos]
            if at != indent:
                if at > indent:
                    raise _Declined
                break
            if dash or key is None:
                raise _Declined  # not "key: value" (a list item, a bare scalar, "a:b: c")
            key_node = _key(key)
            self.pos += 1
            if rest:
                pairs.append((key_node, _inline(rest, depth + 1)))
            else:
                pairs.append((key_node, self.below(indent, depth + 1, same_indent_list=True)))
        return MappingNode(_MAP, pairs, None, None, False)

    def below(self, indent: int, depth: int, *, same_indent_list: bool) -> Node:
        """The value on the lines below a ``key:`` or ``-`` with nothing after it."""
        if self.pos < self.end:
            at, dash, _, _, _ = self.lines[self.pos]
            if at > indent:
                return self.block(at, depth)
            if same_indent_list and at == indent and dash:
                return self.sequence(indent, depth)  # "args:\n- a": a list at the key's column
        return ScalarNode(_NULL, "", None, None, _PLAIN)


def _inline(text: str, depth: int) -> Node:
    """A value written on the rest of a line: a flow collection or one scalar."""
    node = _NODES.get(text)
    if node is not None:
        return node  # a plain scalar read before
    first = text[0]
    if first == "[" or first == "{":
        return _flow(text, depth)
    if first == "'" or first == '"':
        if not (_SINGLE if first == "'" else _DOUBLE).fullmatch(text):
            raise _Declined
        return ScalarNode(_STR, text[1:-1], None, None, first)
    if not _PLAIN_START.match(text) or ": " in text or text[-1] == ":":
        raise _Declined
    return _plain(text)


def _plain(text: str) -> ScalarNode:
    """A plain scalar (already checked) with the tag ``Resolver.resolve`` gives it,
    by the loader's own regexes."""
    tag = _STR
    for candidate, pattern in _RESOLVERS.get(text[0], []) + _WILDCARD:
        if pattern.match(text):
            tag = candidate
            break
    node = ScalarNode(tag, text, None, None, _PLAIN)
    if len(text) <= _SHARED:
        if len(_NODES) >= _NODES_KEPT:
            _NODES.clear()
        _NODES[text] = node
    return node


def _flow(text: str, depth: int) -> Node:
    """The flow collection that is all of ``text`` (one line)."""
    flat = _flat_flow(text) if depth <= MAX_DEPTH else None
    if flat is not None:
        return flat
    tokens: list[str | ScalarNode] = []
    consumed = 0
    for spaces, indicator, colon, quoted, plain in _FLOW_TOKENS.findall(text):
        if spaces:
            consumed += len(spaces)
        elif indicator or colon:
            consumed += len(indicator or colon)
            tokens.append(indicator or colon)
        elif quoted:
            consumed += len(quoted)
            tokens.append(ScalarNode(_STR, quoted[1:-1], None, None, quoted[0]))
        else:
            consumed += len(plain)
            value = plain.rstrip(" ")
            tokens.append(_NODES.get(value) or _plain(value))
    if consumed != len(text):
        raise _Declined  # a character no token reads (findall skipped it)
    node, end = _flow_collection(tokens, 0, depth)
    if end != len(tokens):
        raise _Declined  # more after the collection closed
    return node


def _flat_flow(text: str) -> Node | None:
    """``{a: 1, b: x}`` or ``[1, x]``: plain scalars only, split on "," and ": " (the
    common case, without the token loop), or None for the token loop to read."""
    if text[0] == "{":
        pairs = _flat_pairs(text)
        if pairs is None:
            return None
        keys = [(_NODES.get(key) or _plain(key), value) for key, value in pairs]
        return MappingNode(_MAP, keys, None, None, True)
    inner = text[1:-1]
    if text[-1] != "]" or not _is_flat(inner):
        return None
    if "?" in inner or ":" in inner:
        raise _Declined  # "[a: b]", or "?" in a scalar
    items: list[Node] = []
    for part in inner.split(","):
        item = part.strip(" ")
        if not item or (item[0] in _INDICATORS and _no_plain_start(item)):
            raise _Declined  # "[a, , b]", a trailing comma, "[&a]"
        items.append(_NODES.get(item) or _plain(item))
    return SequenceNode(_SEQ, items, None, None, True)


def _flow_collection(tokens: list[str | ScalarNode], at: int, depth: int) -> tuple[Node, int]:
    """The collection opened by ``tokens[at]``, and the index after its closing token."""
    if depth > MAX_DEPTH:
        raise _Declined
    mapping = tokens[at] == "{"
    closing = "}" if mapping else "]"
    values: list[Any] = []
    key: ScalarNode | None = None
    node = (
        MappingNode(_MAP, values, None, None, True)
        if mapping
        else SequenceNode(_SEQ, values, None, None, True)
    )
    at += 1
    if at < len(tokens) and tokens[at] == closing:
        return node, at + 1  # "[]", "{}"
    while at < len(tokens):
        if mapping:
            token = tokens[at]
            # "{a: 1}" only: no "{a}", "{a:1}", "{[a]: 1}" or overlong key
            if not isinstance(token, ScalarNode) or len(token.value) > _MAX_KEY:
                raise _Declined
            key = token
            if at + 1 >= len(tokens) or tokens[at + 1] != ": ":
                raise _Declined
            at += 2
        if at >= len(tokens):
            break
        item = tokens[at]
        if isinstance(item, ScalarNode):
            value: Node = item
            at += 1
        elif item == "[" or item == "{":
            value, at = _flow_collection(tokens, at, depth + 1)
        else:
            raise _Declined  # "[a, , b]", "{a: }"
        values.append((key, value) if mapping else value)
        if at < len(tokens) and tokens[at] == closing:
            return node, at + 1
        if at + 1 >= len(tokens) or tokens[at] != "," or tokens[at + 1] == closing:
            raise _Declined  # no comma, a trailing comma, or never closed
        at += 1
    raise _Declined  # never closed on this line
