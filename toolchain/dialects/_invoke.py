"""The ``<invoke name="N"><parameter name="K">V</parameter></invoke>`` grammar and the
blocks that hold it: DeepSeek V3.2's DSML (every tag prefixed ``|DSML|``, bars the
fullwidth U+FF5C, parameters carrying ``string="true|false"``), the same without the
prefix, MiniMax-M2's ``<minimax:tool_call>`` and Claude-style ``<function_calls>``
(whose body may instead be Olmo 3's Python-style calls, one per line).

A parameter's value: with ``string="false"`` JSON, whose syntax carries the type (read
as the schema says only when the JSON's type is not allowed and that reading is);
with ``string="true"`` the text itself, typed by the tool's schema when it declares
another type (the model may mark a number as a string). Without the attribute it is text typed
by the schema, or with none a number or ``true``/``false``/``null`` when it spells one;
XML entities are resolved there (the Claude style escapes them), never in DSML's raw
strings. A lone
``arguments`` or ``input`` parameter holding an object the tool does not declare is the
arguments themselves. A body that is a JSON object is the arguments.

An invoke whose body holds anything else (text, an unclosed parameter) is a call
rejected with the reason, never a call with fewer arguments. A DSML tag is never
prose: an unclosed DSML block is reported; a plain ``<invoke`` left open stays text.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from dataclasses import dataclass

from toolchain._result import ToolCall
from toolchain.dialects import _pythonic as pythonic
from toolchain.dialects._build import calls_block, problem_block
from toolchain.dialects._catalog import Catalog, fits
from toolchain.dialects._json import decode_exact
from toolchain.dialects._literals import LiteralError, LiteralReader
from toolchain.dialects._opener import Opener, Reader
from toolchain.dialects._scan import WS, Block, Scan, Skip, rejected_call
from toolchain.dialects._values import as_mapping

__all__ = ["DSML", "INVOKE", "OLMO", "OPENERS", "wrapper_reader"]

DSML = "dsml"
INVOKE = "invoke_xml"
OLMO = "olmo3"
_PREFIXES = ("\uff5cDSML\uff5c", "|DSML|", "\uff5cGCML\uff5c")
_PREFIX = "(?:" + "|".join(re.escape(p) for p in _PREFIXES) + ")?"
_INVOKE_OPEN = re.compile(f"<{_PREFIX}invoke(?=[\\s/>])")
_PARAM_OPEN = re.compile(f"<({_PREFIX})parameter(?=[\\s/>])")
_ATTR = re.compile(
    r"""[ \t\r\n]+([\w:.\-]+)[ \t\r\n]*=[ \t\r\n]*(?:"([^"]*)"|'([^']*)'|([^\s>"'/]+))"""
)
_TAG_END = re.compile(r"[ \t\r\n]*(/?)>")
_QWEN_PARAM = re.compile(r"<parameter=([^>\n]{1,128})>")
_CHILD = re.compile(r"<([^\W\d][\w\-.:]*)>")
_WRAPPER_KEYS = ("arguments", "input")


def _closes(word: str) -> tuple[str, ...]:
    return tuple(f"</{prefix}{word}>" for prefix in ("", *_PREFIXES))


_INVOKE_CLOSES = _closes("invoke")
_PARAM_CLOSES = _closes("parameter")


@dataclass(frozen=True, slots=True)
class _Tag:
    """An opening tag: its attributes, where it ends, and whether it closed itself."""

    attrs: dict[str, str]
    end: int
    empty: bool


def _tag(text: str, at: int) -> _Tag | None:
    """The attributes of the tag whose name ends at ``at``, up to its ``>``."""
    attrs: dict[str, str] = {}
    while True:
        attr = _ATTR.match(text, at)
        if attr is None:
            break
        attrs[attr.group(1)] = next(g for g in attr.groups()[1:] if g is not None)
        at = attr.end()
    closing = _TAG_END.match(text, at)
    if closing is None:
        return None
    return _Tag(attrs, closing.end(), closing.group(1) == "/")


def _read_invoke(scan: Scan, at: int, marker: str) -> Block | Skip:
    """A standalone invoke (no block around it: a V4 habit, or Claude style)."""
    dsml = marker != "<invoke"
    family = DSML if dsml else INVOKE
    head_end = scan.find(">", at)
    tag = _tag(scan.text, at + len(marker)) if head_end >= 0 else None
    if tag is None or tag.end != head_end + 1 or "name" not in tag.attrs:
        if dsml:
            end = head_end + 1 if head_end >= 0 else len(scan.text)
            return problem_block(at, end, family, "a DSML invoke tag is malformed")
        return Skip(at + 1, retire=head_end < 0)
    if tag.empty:
        return calls_block(at, tag.end, family, [ToolCall(_name(tag, scan.catalog))])
    close, which = scan.find_any(_INVOKE_CLOSES, tag.end)
    if close < 0:
        if dsml:
            return problem_block(at, len(scan.text), family, "a DSML invoke is not closed")
        return Skip(at + 1, retire=True)  # no later invoke is closed either
    call = invoke_call(scan.text[tag.end : close], _name(tag, scan.catalog), scan.catalog)
    return calls_block(at, close + len(which), family, [call])


def _name(tag: _Tag, catalog: Catalog) -> str:
    return catalog.resolve(html.unescape(tag.attrs["name"]).strip())


def invoke_call(body: str, name: str, catalog: Catalog) -> ToolCall:
    """The call an invoke's body spells, or ``name`` rejected with why it cannot."""
    stripped = body.strip(WS)
    if not stripped:
        return ToolCall(name)
    if stripped.startswith("{"):
        try:
            whole = as_mapping(decode_exact(stripped))
        except ValueError as error:
            return rejected_call(name, f"the arguments of {name} are not JSON ({error})")
        if whole is None:
            return rejected_call(name, f"the arguments of {name} are not a JSON object")
        return ToolCall(name, whole)
    args: dict[str, object] = {}
    cursor = 0
    while True:
        while cursor < len(body) and body[cursor] in WS:
            cursor += 1
        if cursor == len(body):
            return ToolCall(name, _unwrapped(name, args, catalog))
        found = _parameter(body, cursor, name, catalog)
        if isinstance(found, str):
            return rejected_call(name, found)
        key, value, cursor = found
        args[key] = value


def _parameter(body: str, at: int, name: str, catalog: Catalog) -> tuple[str, object, int] | str:
    """The parameter at ``at`` (any of the three spellings), or what is wrong there."""
    opened = _PARAM_OPEN.match(body, at)
    if opened is not None:
        tag = _tag(body, opened.end())
        if tag is None or "name" not in tag.attrs:
            return f"a parameter tag of {name} is malformed"
        key = html.unescape(tag.attrs["name"])
        if tag.empty:
            return key, "", tag.end
        close, which = _first(body, _PARAM_CLOSES, tag.end)
        if close < 0:
            return f"the parameter {key} of {name} is not closed"
        raw = body[tag.end : close]
        return (
            key,
            _value(raw, tag.attrs, bool(opened.group(1)), name, key, catalog),
            close + len(which),
        )
    qwen = _QWEN_PARAM.match(body, at)
    if qwen is not None:
        key = qwen.group(1).strip()
        close, which = _first(body, _PARAM_CLOSES, qwen.end())
        if close < 0:
            return f"the parameter {key} of {name} is not closed"
        raw = body[qwen.end() : close].removeprefix("\n").removesuffix("\n")
        return key, catalog.typed(name, key, raw, "infer"), close + len(which)
    child = _CHILD.match(body, at)
    if child is not None:
        key = child.group(1)
        close = body.find(f"</{key}>", child.end())
        if close >= 0:
            raw = html.unescape(body[child.end() : close])
            return key, catalog.typed(name, key, raw, "infer"), close + len(key) + 3
    snippet = body[at : at + 40].split("\n", 1)[0]
    return f"the body of {name} holds {snippet!r} where a parameter belongs"


def _value(
    raw: str, attrs: dict[str, str], dsml: bool, name: str, key: str, catalog: Catalog
) -> object:
    marked = attrs.get("string", "").lower()
    if marked == "false":
        return _json_value(raw, name, key, catalog)
    if marked == "true":
        return catalog.typed(name, key, raw)
    return catalog.typed(name, key, raw if dsml else html.unescape(raw), "infer")


def _json_value(raw: str, name: str, key: str, catalog: Catalog) -> object:
    """A ``string="false"`` value: the JSON (or Python literal) it spells, whose syntax
    carries its type; unless that type is one the schema does not allow and the text
    read by the schema is (``null`` for a string parameter is the text ``null``)."""
    text = raw.strip(WS)
    try:
        value: object = decode_exact(text)
    except ValueError:
        reader = LiteralReader(text)
        try:
            value, end = reader.value(0)
        except LiteralError:
            return catalog.typed(name, key, raw, "infer")
        if end != len(text) or reader.problems:
            return catalog.typed(name, key, raw, "infer")
    kinds = catalog.param_kinds(name, key)
    if not kinds or fits(value, kinds):
        return value
    typed = catalog.typed(name, key, raw)
    return typed if fits(typed, kinds) else value


def _unwrapped(name: str, args: dict[str, object], catalog: Catalog) -> dict[str, object]:
    """``{"arguments": {…}}`` is ``{…}`` unless the tool has such a parameter."""
    if len(args) != 1:
        return args
    key, value = next(iter(args.items()))
    inner = as_mapping(value)
    if key in _WRAPPER_KEYS and inner is not None and not catalog.param_kinds(name, key):
        return inner
    return args


def _first(text: str, subs: tuple[str, ...], start: int) -> tuple[int, str]:
    found = [(text.find(sub, start), sub) for sub in subs]
    hits = [hit for hit in found if hit[0] >= 0]
    return min(hits) if hits else (-1, "")


# -- blocks of invokes ---------------------------------------------------------------

_DSML_WRAPPERS = tuple(f"<{p}{w}>" for p in _PREFIXES for w in ("function_calls", "tool_calls"))
_DSML_CLOSES = tuple(
    f"</{p}{w}>" for p in ("", *_PREFIXES) for w in ("function_calls", "tool_calls")
)
_WRAPPER_CLOSES = {
    "<function_calls>": ("</function_calls>",),
    "<minimax:tool_call>": ("</minimax:tool_call>",),
    **dict.fromkeys(_DSML_WRAPPERS, _DSML_CLOSES),
}


def wrapper_reader(marker: str, *, invoke: bool, olmo: bool) -> Reader:
    """The reader of a block of calls opened by ``marker``: invokes (when ``invoke``)
    or, in ``<function_calls>``, Olmo 3's Python-style lines (when ``olmo``)."""
    closes = _WRAPPER_CLOSES[marker]
    family = DSML if marker in _DSML_WRAPPERS else INVOKE
    strict = family == DSML

    def read(scan: Scan, at: int, matched: str) -> Block | Skip:
        body_start = at + len(matched)
        close, which = scan.find_any((*closes, marker), body_start)
        closed = which in closes
        body_end = close if close >= 0 else len(scan.text)
        end = close + len(which) if closed else body_end
        body = scan.text[body_start:body_end]
        first = scan.skip_ws(body_start)
        if invoke and _INVOKE_OPEN.match(scan.text, first):
            return _invokes(at, end, body, family, scan.catalog, closed)
        if olmo and marker == "<function_calls>" and body.strip(WS):
            found, problems = pythonic.call_lines(body, scan.catalog)
            if found:
                return calls_block(at, end, OLMO, found, problems)
            why = "holds no call" if closed else "is not closed and holds no call"
            return problem_block(at, end, OLMO, f"a <function_calls> block {why}")
        if not body.strip(WS):
            if closed:
                return Block(at, end, family, kind="token")
            return problem_block(at, end, family, f"{marker} was opened but holds no call")
        if closed or strict:
            return problem_block(at, end, family, f"a {marker} block holds no call")
        return Skip(body_start)

    return read


def _invokes(at: int, end: int, body: str, family: str, catalog: Catalog, closed: bool) -> Block:
    """Every invoke of a block; text between them is reported, the calls kept."""
    calls: list[ToolCall] = []
    problems: list[str] = []
    cursor = 0
    while True:
        opened = _INVOKE_OPEN.search(body, cursor)
        stray = body[cursor : opened.start() if opened is not None else len(body)]
        if stray.strip(WS):
            problems.append(f"text between calls is not a call: {stray.strip(WS)[:60]!r}")
        if opened is None:
            return calls_block(at, end, family, calls, problems)
        tag = _tag(body, opened.end())
        if tag is None or "name" not in tag.attrs:
            problems.append("an invoke tag is malformed")
            cursor = opened.end()
            continue
        name = _name(tag, catalog)
        if tag.empty:
            calls.append(ToolCall(name))
            cursor = tag.end
            continue
        close, which = _first(body, _INVOKE_CLOSES, tag.end)
        if close < 0:
            why = "is not closed" if closed else "was cut off"
            problems.append(f"the call to {name} {why}")
            return calls_block(at, end, family, calls, problems)
        calls.append(invoke_call(body[tag.end : close], name, catalog))
        cursor = close + len(which)


def _standalone(marker: str) -> Callable[[Scan, int, str], Block | Skip]:
    def read(scan: Scan, at: int, matched: str) -> Block | Skip:
        return _read_invoke(scan, at, marker)

    return read


OPENERS = (
    Opener("<invoke", INVOKE, _standalone("<invoke")),
    *(Opener(f"<{p}invoke", DSML, _standalone(f"<{p}invoke")) for p in _PREFIXES),
)
WRAPPERS = {"<function_calls>": INVOKE, "<minimax:tool_call>": INVOKE} | dict.fromkeys(
    _DSML_WRAPPERS, DSML
)
"""Block openers, built per policy by the registry (``wrapper_reader``)."""
