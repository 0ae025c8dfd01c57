"""What a conversation's variables carry on to its next run: their names and store
entries (not their values), the per-tool counts that number the next names, and why
dropped ones are gone; checked field by field when taken up again."""

from __future__ import annotations

from typing import Annotated

import msgspec

from toolchain import ExecutionContext
from toolchain._oneline import one_line
from toolchain.stores._entries import scope_of, share_scope
from toolchain.stores._results import UNLOADED, Variable, results_of
from toolchain.variables._keeping import MAX_DROPPED, KeepSettings, over_bounds, why_dropped
from toolchain.variables._listing import PREVIEW

__all__ = ["saved_variables", "take_up"]


_Name = Annotated[str, msgspec.Meta(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,199}$")]
_Short = Annotated[str, msgspec.Meta(max_length=1_000)]


class _SavedVariable(msgspec.Struct):
    name: _Name
    tool: _Short
    entry: _Short
    bytes: Annotated[int, msgspec.Meta(ge=0)]
    kind: _Short = ""
    preview: _Short = ""
    shared: bool = False


_Many = msgspec.Meta(max_length=100_000)
_Count = Annotated[int, msgspec.Meta(ge=0)]


class _Saved(msgspec.Struct):
    """What ``save_state`` writes; ``load_state`` refuses anything else (logged)."""

    scope: Annotated[str, msgspec.Meta(min_length=1, max_length=1_000)]
    variables: Annotated[list[_SavedVariable], _Many] = msgspec.field(
        default_factory=lambda: list[_SavedVariable]()
    )
    counts: Annotated[dict[_Short, _Count], _Many] = msgspec.field(
        default_factory=lambda: dict[str, int]()
    )
    dropped: Annotated[dict[_Short, _Short], _Many] = msgspec.field(
        default_factory=lambda: dict[str, str]()
    )


def saved_variables(ctx: ExecutionContext) -> object | None:
    """The conversation's variables (names and store entries, not values), the
    per-tool counts that number the next names, and why dropped ones are gone."""
    results = results_of(ctx)
    if not (results.variables or results.counts or results.dropped):
        return None
    dropped = dict(results.dropped)
    kept: list[dict[str, object]] = []
    for v in results.variables.values():
        if v.entry:
            # _SavedVariable as plain data, written directly: every run saves its
            # variables, and a struct each then to_builtins took twice as long.
            kept.append(
                {
                    "name": v.name,
                    "tool": v.tool,
                    "entry": v.entry,
                    "bytes": v.size,
                    "kind": v.kind,
                    "preview": v.preview,
                    "shared": v.shared,
                }
            )
        else:  # a store that failed: the next run can only say so
            dropped[v.name] = "its value could not be stored for later turns"
    if len(dropped) > MAX_DROPPED:
        dropped = dict(list(dropped.items())[-MAX_DROPPED:])
    return {
        "scope": scope_of(ctx),
        "variables": kept,
        "counts": dict(results.counts),
        "dropped": dropped,
    }


def take_up(settings: KeepSettings, ctx: ExecutionContext, state: object) -> bool:
    """Takes up the variables an earlier run saved: their values are read from the
    store before the first step (``load``). Whether any was taken up."""
    saved = msgspec.convert(state, _Saved)
    share_scope(ctx, saved.scope)  # the entries live under the conversation's scope
    results = results_of(ctx)
    for name, count in saved.counts.items():
        results.counts[name] = max(count, results.counts.get(name, 0))
    for name, why in saved.dropped.items():
        if name not in results.variables:
            results.dropped[name] = one_line(why, 300)
    taken = False
    for s in saved.variables:
        if s.name in results.variables:
            continue
        taken = True
        kind, preview = one_line(s.kind, 200), one_line(s.preview, PREVIEW)
        results.variables[s.name] = Variable(
            s.name, s.tool, UNLOADED, "", kind, preview, s.bytes, s.entry, s.shared
        )
        results.size += s.bytes
        results.dropped.pop(s.name, None)
        results.waiting += 1
    for name in over_bounds(settings, results, keep=""):  # saved under larger bounds
        v = results.drop(name, why_dropped(settings, results, name), keep=MAX_DROPPED)
        if v is not None and v.value is UNLOADED:
            results.waiting -= 1
    return taken
