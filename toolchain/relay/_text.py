"""A stored value's text cut into what a reader tool may return: lines split and read by
range, any output fit to its bound with a note saying how to read on, and the work on a
large value moved off the event loop."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TypeVar

from toolchain import ToolError
from toolchain._concurrency import WorkersStuck, run_in_worker

__all__ = [
    "MAX_LINES",
    "OFFLOAD_CHARS",
    "compute",
    "fit",
    "plural",
    "read_lines",
    "shown_line",
    "split_lines",
]

MAX_LINES = 200
"""Lines ``internal_resource_read_lines`` returns at most per call."""
OFFLOAD_CHARS = 1_000_000
"""Values longer than this are split and searched on a worker thread, off the loop."""


def plural(count: int, word: str) -> str:
    return word if count == 1 else word + "s"


def fit(text: str, max_chars: int, note: Callable[[int], str]) -> str:
    """``text``, or as much of it as fits in ``max_chars`` with ``note(kept)`` after."""
    if len(text) <= max_chars:
        return text
    kept = max(0, max_chars - len(note(max_chars)))  # the note's longest form
    return text[:kept] + note(kept)


_ResultT = TypeVar("_ResultT")


async def compute(text: str, work: Callable[[], _ResultT]) -> _ResultT:
    """``work()``: on a worker thread for a large value, so the loop stays free (on the
    loop after all when the pool refuses it: finite work, done late, beats no answer)."""
    if len(text) > OFFLOAD_CHARS:
        with contextlib.suppress(WorkersStuck):
            return await run_in_worker(work, tool="internal_resource reading")
    return work()


def split_lines(text: str) -> list[str]:
    """Lines split at ``\\n``; a final newline ends the last line (no empty line after)."""
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def shown_line(line: str) -> str:
    return line[:-1] if line.endswith("\r") else line


def read_lines(text: str, start_line: int, line_count: int, max_chars: int) -> str:
    lines = split_lines(text)
    total = len(lines)
    if total == 0:
        return "[the value is empty]"
    start = max(0, total + start_line) if start_line < 0 else start_line
    if start >= total:
        raise ToolError(
            f"start_line {start_line} is past the end: the value has {total} "
            f"{plural(total, 'line')} (0 to {total - 1}, or negative from the end)"
        )
    asked = min(total, start + line_count)
    stop = min(asked, start + MAX_LINES)
    why = f"{MAX_LINES} lines"
    budget = max_chars - 200  # the footer's room
    rows: list[str] = []
    used = 0
    for index in range(start, stop):
        row = shown_line(lines[index])
        if used + len(row) + 1 > budget:
            if not rows:  # one line longer than the whole budget: show its start
                kept = max(0, budget)
                offset = sum(len(line) + 1 for line in lines[:index])
                return (
                    row[:kept] + f"\n[line {index} cut at {kept} of its {len(row)} characters; "
                    f"read on with internal_resource_read_slice from start_index "
                    f"{offset + kept}]"
                )
            why = f"{max_chars} characters"
            break
        rows.append(row)
        used += len(row) + 1
    last = start + len(rows) - 1
    footer = f"[lines {start}-{last} of {total}"
    if last + 1 < total:
        footer += f"; next start_line {last + 1}"
    if last + 1 < asked:
        footer += f" (at most {why} per call)"
    return "\n".join([*rows, footer + "]"])
