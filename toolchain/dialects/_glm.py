"""GLM-4.5/4.7 ``NAME<arg_key>K</arg_key><arg_value>V</arg_value>…`` (inside
``<tool_call>`` or, as mlx-lm hands it over, alone), LongCat's ``longcat_``-prefixed
tags, and GLM-4.7's plain ``NAME k=v k=v``.

Values are text unless the tool's schema declares another type. The plain ``k=v`` form
is too close to prose to read without tools: it is read only as a whole output, naming
an offered tool and only its parameters.
"""

from __future__ import annotations

import re

from toolchain._result import ToolCall
from toolchain.dialects._build import calls_block
from toolchain.dialects._catalog import Catalog
from toolchain.dialects._opener import Opener
from toolchain.dialects._scan import WS, Block, Scan, Skip

__all__ = ["FAMILY", "OPENERS", "body_call", "kv_call"]

FAMILY = "glm"
_TAGS = tuple(
    (f"<{p}arg_key>", f"</{p}arg_key>", f"<{p}arg_value>", f"</{p}arg_value>")
    for p in ("", "longcat_")
)
_NAME = re.compile(r"[^\s<>]{1,128}")
_KV = re.compile(r"([^\s=]+)=(\S+)")


def body_call(body: str, catalog: Catalog) -> ToolCall | None:
    """The call in a ``<tool_call>`` body written the GLM way, or ``None``."""
    stripped = body.strip(WS)
    tags = next((t for t in _TAGS if t[0] in stripped), _TAGS[0])
    cut = stripped.find(tags[0])
    name = (stripped if cut < 0 else stripped[:cut]).strip(WS)
    if not _NAME.fullmatch(name):
        return None
    name = catalog.resolve(name)
    scan = Scan(stripped, True, catalog)
    empty: dict[str, object] = {}
    pairs = _pairs(scan, cut, tags, name) if cut >= 0 else (empty, len(name))
    if pairs is None or stripped[pairs[1] :].strip(WS):
        return None
    return ToolCall(name, pairs[0])


def kv_call(text: str, catalog: Catalog) -> ToolCall | None:
    """``NAME k=v …`` as a whole output, for an offered tool and its own parameters."""
    if catalog.names is None:
        return None
    head = text.split(None, 1)
    if len(head) < 2 or head[0] not in catalog.names:
        return None
    words = text.split()
    name = words[0]
    args: dict[str, object] = {}
    for word in words[1:]:
        pair = _KV.fullmatch(word)
        if pair is None or catalog.param_type(name, pair.group(1)) is None:
            return None
        args[pair.group(1)] = catalog.typed(name, pair.group(1), pair.group(2))
    return ToolCall(name, args)


def _pairs(
    scan: Scan, at: int, tags: tuple[str, str, str, str], name: str
) -> tuple[dict[str, object], int] | None:
    """The key/value pairs from ``at`` and where the last one ends; ``None`` when a
    pair is broken. On a growing text it waits until the run of pairs has ended."""
    key_open, key_close, value_open, value_close = tags
    text = scan.text
    args: dict[str, object] = {}
    end = at
    while True:
        at = scan.skip_ws(end)
        if not scan.has(key_open, at):
            return args, end
        key_end = scan.find(key_close, at)
        if key_end < 0:
            return None
        value_at = scan.skip_ws(key_end + len(key_close))
        if not scan.has(value_open, value_at):
            return None
        value_end = scan.find(value_close, value_at)
        if value_end < 0:
            return None
        key = text[at + len(key_open) : key_end].strip(WS)
        raw = text[value_at + len(value_open) : value_end]
        args[key] = scan.catalog.typed(name, key, raw)
        end = value_end + len(value_close)


def _read(scan: Scan, at: int, marker: str) -> Block | Skip:
    """``NAME<arg_key>…`` with no wrapper: the name is written just before the tag, or
    alone on the line before it (GLM-4.5/4.6 write a newline after the name)."""
    text = scan.text
    line = scan.line_start(at)
    start = at
    while start > line and text[start - 1] not in WS + "<>":
        start -= 1
    name = text[start:at]
    if not name and line > scan.floor and text[line - 1] == "\n" and not text[line:at].strip(WS):
        previous = scan.line_start(at, lines=2)
        name = text[previous : line - 1].strip(WS)
        start = text.find(name, previous) if name else at
    if not _NAME.fullmatch(name):
        return Skip(at + 1)
    tags = next(t for t in _TAGS if t[0] == marker)
    name = scan.catalog.resolve(name)
    found = _pairs(scan, at, tags, name)
    if found is None:
        return Skip(at + 1)
    return calls_block(start, found[1], FAMILY, [ToolCall(name, found[0])])


OPENERS = tuple(Opener(tags[0], FAMILY, _read) for tags in _TAGS)
