"""Functionary v3.2: ``>>>NAME\\n{json}`` per call, ``>>>all\\n`` for text, and raw code
for its ``python`` tool; the first recipient has no ``>>>`` (the template wrote it), so
an output that *is* ``NAME\\n{json}`` or ``python\\n<code>`` is one call too.
"""

from __future__ import annotations

import re

from toolchain._result import ToolCall
from toolchain.dialects._build import calls_block, json_call
from toolchain.dialects._catalog import Catalog
from toolchain.dialects._json import decode_exact
from toolchain.dialects._opener import Opener
from toolchain.dialects._scan import Block, Scan, Skip
from toolchain.dialects._values import as_mapping

__all__ = ["FAMILY", "OPENERS", "start_call"]

FAMILY = "functionary"
_MARK = ">>>"
_NAME = re.compile(r"[^\W\d][\w.\-]{0,127}")
_CONTENT = "all"
_CODE_TOOL = "python"


def start_call(text: str, catalog: Catalog) -> ToolCall | None:
    """The whole output as a first-recipient call, or ``None``."""
    first, _, rest = text.strip().partition("\n")
    name = first.strip()
    if not _NAME.fullmatch(name) or name == _CONTENT or not rest.strip():
        return None
    name = catalog.resolve(name)
    if rest.lstrip().startswith("{"):
        try:
            value = decode_exact(rest)
        except ValueError:
            return None
        args = as_mapping(value)
        return ToolCall(name, args) if args is not None else None
    if name == _CODE_TOOL:
        return ToolCall(name, {"code": rest.strip("\n")})
    return None


def _read(scan: Scan, at: int, marker: str) -> Block | Skip:
    text = scan.text
    name_at = at + len(marker)
    newline = scan.find("\n", name_at)
    name = text[name_at:newline] if newline >= 0 else ""
    if not _NAME.fullmatch(name):
        return Skip(name_at)
    if name in (_CONTENT, _CODE_TOOL):
        stop = scan.find(_MARK, newline + 1)
        end = len(text) if stop < 0 else stop
        body = text[newline + 1 : end]
        if name == _CONTENT:
            return Block(at, end, FAMILY, content=body)
        if not body.lstrip().startswith("{"):
            return calls_block(at, end, FAMILY, [ToolCall(name, {"code": body.strip("\n")})])
    start = scan.skip_ws(newline + 1)
    found = json_call(scan, at, start, FAMILY, name) if scan.char(start) == "{" else None
    return found if found is not None else Skip(name_at)


OPENERS = (Opener(_MARK, FAMILY, _read),)
