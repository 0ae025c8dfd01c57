"""The named values of a prompt's system part (``def_``, ``def_data``): each a
`Definition`, its text fitted to a token budget when one is given.

Text keeps its head or tail; a list keeps the items that fit (the first, the last or
an even sample); either way the text says what was left out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, cast

import yaml

from agents._errors import AgentValueError
from toolchain.runtime import count_tokens

__all__ = ["Definition", "Sampling", "check_name", "fit_data", "fit_text"]

Sampling = Literal["head", "tail", "sample"]

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,63}")


@dataclass(frozen=True, slots=True)
class Definition:
    """A named value of the system prompt: its text as the model sees it."""

    name: str
    kind: Literal["text", "data"]
    text: str
    value: object
    """What was given (the text, or the data before it was written as YAML)."""
    trimmed: bool = False
    """Whether a token budget cut it (the text then says what was left out)."""


def check_name(name: str) -> None:
    """Refuse a name the model could not be pointed to as ``<NAME>``."""
    if not isinstance(cast(object, name), str) or not _NAME.fullmatch(name):
        raise AgentValueError(
            f"{name!r} is not a usable name: letters, digits, '_', '.', '-', at most 64, "
            "not starting with a digit"
        )


def fit_text(text: str, budget: int | None, keep: Literal["head", "tail"]) -> tuple[str, bool]:
    """``text`` within ``budget`` o200k tokens (its ``keep`` end), and whether it was cut."""
    if budget is None:
        return text, False
    if budget < 1:
        raise AgentValueError("budget_tokens must be at least 1")
    total = count_tokens(text)
    if total <= budget:
        return text, False
    # Characters per token vary; shrink by the measured ratio until the cut fits.
    size = max(1, len(text) * budget // total)
    while True:
        part = text[:size] if keep == "head" else text[-size:]
        if count_tokens(part) <= budget or size == 1:
            break
        size = max(1, size * 9 // 10)
    note = f"[… {total - count_tokens(part)} of {total} tokens left out]"
    return (f"{part}\n{note}" if keep == "head" else f"{note}\n{part}"), True


def _yaml(data: object) -> str:
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100).rstrip("\n")


def fit_data(data: object, budget: int | None, sampling: Sampling) -> tuple[str, bool]:
    """``data`` as YAML within ``budget`` tokens, and whether it was cut."""
    text = _yaml(data)
    if budget is None:
        return text, False
    if budget < 1:
        raise AgentValueError("budget_tokens must be at least 1")
    if count_tokens(text) <= budget:
        return text, False
    if not isinstance(data, list):
        return fit_text(text, budget, "head")
    items = cast("list[object]", data)
    # The largest count of items whose YAML (and the note) fits: a binary search.
    low, high = 0, len(items)
    while low < high:
        mid = (low + high + 1) // 2
        if count_tokens(_yaml(_choose(items, mid, sampling))) + 16 <= budget:
            low = mid
        else:
            high = mid - 1
    chosen = _choose(items, low, sampling)
    how = {
        "head": "the first are shown",
        "tail": "the last are shown",
        "sample": "an even sample is shown",
    }
    note = f"# {len(items) - low} of {len(items)} items left out ({how[sampling]})"
    return (f"{_yaml(chosen)}\n{note}" if chosen else note), True


def _choose(items: list[object], count: int, sampling: Sampling) -> list[object]:
    if count <= 0:
        return []
    if sampling == "head":
        return items[:count]
    if sampling == "tail":
        return items[-count:]
    step = len(items) / count
    return [items[int(i * step)] for i in range(count)]
