"""DeepSeek V3 / R1 / V3.1: ``<|tool▁calls▁begin|>`` then, per call,
``<|tool▁call▁begin|>function<|tool▁sep|>NAME`` and a ```` ```json ```` block (V3,
R1), or ``NAME<|tool▁sep|>{json}`` (V3.1), closed by ``<|tool▁call▁end|>``.

The bars in these tokens are the fullwidth U+FF5C, or an ASCII ``|`` as some servers
and templates write them: both are read. A call needs its end token (an unclosed one
may be cut short); its begin token may be missing, as R1 sometimes writes
``<|tool▁calls|>`` straight before the first call.
"""

from __future__ import annotations

from toolchain._result import ToolCall
from toolchain.dialects._build import calls_block
from toolchain.dialects._catalog import Catalog
from toolchain.dialects._json import arguments_of, decode_exact
from toolchain.dialects._opener import Opener
from toolchain.dialects._scan import WS, Block, Scan, Skip

__all__ = ["FAMILY", "OPENERS"]

FAMILY = "deepseek"


def _tokens(bar: str) -> dict[str, str]:
    words = {
        "calls_begin": "tool▁calls▁begin",
        "calls_short": "tool▁calls",
        "calls_end": "tool▁calls▁end",
        "call_begin": "tool▁call▁begin",
        "call_end": "tool▁call▁end",
        "sep": "tool▁sep",
    }
    return {key: f"<{bar}{word}{bar}>" for key, word in words.items()}


_FULLWIDTH_BAR = "\uff5c"
_VARIANTS = (_tokens(_FULLWIDTH_BAR), _tokens("|"))


def _read(scan: Scan, at: int, marker: str) -> Block | Skip:
    tokens = next(t for t in _VARIANTS if marker in t.values())
    text = scan.text
    body_start = at + len(marker)
    if marker == tokens["call_begin"]:  # a call with no section around it
        stop = scan.find(tokens["call_end"], body_start)
        if stop < 0:
            return Skip(body_start)
        calls, problems = _section_calls(
            text[at : stop + len(tokens["call_end"])], tokens, scan.catalog
        )
        return calls_block(at, stop + len(tokens["call_end"]), FAMILY, calls, problems)
    stop = scan.find(tokens["calls_end"], body_start)
    end = len(text) if stop < 0 else stop + len(tokens["calls_end"])
    body = text[body_start : len(text) if stop < 0 else stop]
    calls, problems = _section_calls(body, tokens, scan.catalog)
    return calls_block(at, end, FAMILY, calls, problems)


def _section_calls(
    body: str, tokens: dict[str, str], catalog: Catalog
) -> tuple[list[ToolCall], list[str]]:
    calls: list[ToolCall] = []
    problems: list[str] = []
    pieces = body.split(tokens["call_end"])
    for index, piece in enumerate(pieces):
        closed = index < len(pieces) - 1
        piece = piece.strip(WS).removeprefix(tokens["call_begin"]).strip(WS)
        if not piece:
            continue
        if not closed:
            problems.append("a DeepSeek tool call has no end token")
            continue
        found = _call(piece, tokens["sep"], catalog)
        if isinstance(found, str):
            problems.append(found)
        else:
            calls.append(found)
    return calls, problems


def _call(piece: str, sep: str, catalog: Catalog) -> ToolCall | str:
    kind, found_sep, rest = piece.partition(sep)
    if not found_sep:
        return "a DeepSeek tool call has no separator token"
    kind = kind.strip(WS)
    if kind in ("function", ""):  # V3 / R1: NAME on its own line, then fenced JSON
        name, _, args = rest.partition("\n")
    else:  # V3.1: NAME<sep>{json}
        name, args = kind, rest
    name = catalog.resolve(name.strip(WS))
    args = args.strip(WS)
    if args.startswith("```"):
        args = args.removeprefix("```json").removeprefix("```").removesuffix("```")
    try:
        value = decode_exact(args) if args.strip(WS) else None
    except ValueError as error:
        return f"the arguments of {name} are not JSON ({error})"
    return ToolCall(name, arguments_of(name, value, catalog))


OPENERS = tuple(
    Opener(tokens[key], FAMILY, _read)
    for tokens in _VARIANTS
    for key in ("calls_begin", "calls_short", "call_begin")
)
