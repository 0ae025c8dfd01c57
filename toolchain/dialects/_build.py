"""Blocks from what a reader found, shared by the family readers."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from toolchain._result import ToolCall
from toolchain.dialects._catalog import Catalog
from toolchain.dialects._json import (
    FinalAnswer,
    JSONFail,
    arguments_of,
    calls_in,
    decode_exact,
    json_at,
)
from toolchain.dialects._scan import Block, Scan

__all__ = ["calls_block", "json_body", "json_call", "problem_block"]


def calls_block(
    start: int,
    end: int,
    family: str,
    found: Iterable[ToolCall | FinalAnswer],
    problems: Sequence[str] = (),
    *,
    marked: bool = True,
    exclusive: str | None = None,
) -> Block:
    """A block of calls; a ``FinalAnswer`` among them becomes the block's answer."""
    calls: list[ToolCall] = []
    answer: str | None = None
    for item in found:
        if isinstance(item, FinalAnswer):
            answer = item.text if answer is None else answer
        else:
            calls.append(item)
    return Block(
        start,
        end,
        family,
        calls=tuple(calls),
        problems=tuple(problems),
        content=answer,
        answer=answer,
        marked=marked,
        exclusive=exclusive,
    )


def json_call(
    scan: Scan, at: int, start: int, family: str, name: str, call_id: str = ""
) -> Block | None:
    """The call ``name`` whose JSON arguments start at ``start`` (its block from ``at``),
    or ``None`` when no JSON value starts there."""
    try:
        value, end = json_at(scan, start)
    except JSONFail:
        return None
    name = scan.catalog.resolve(name)
    call = ToolCall(name, arguments_of(name, value, scan.catalog), call_id)
    return calls_block(at, end, family, [call])


def problem_block(start: int, end: int, family: str, problem: str) -> Block:
    """Markup that is a call attempt gone wrong: removed from content, reported."""
    return Block(start, end, family, problems=(problem,))


def json_body(
    body: str, catalog: Catalog, where: str
) -> tuple[list[ToolCall | FinalAnswer], list[str]]:
    """The calls in a delimited JSON body (an object or a list of them)."""
    try:
        value = decode_exact(body)
    except ValueError as error:
        return [], [f"the {where} is not JSON ({error})"]
    found, problems = calls_in(value, catalog, bare=False)
    return found, [f"{where}: {problem}" for problem in problems]
