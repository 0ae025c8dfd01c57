"""The extension-parts benchmark (``python -m benchmarks.extension_parts``): each stand-in
replaces a name the library still has, is put back after, and leaves a run that
finishes as scripted (the benchmark's figures would mean nothing otherwise)."""

from __future__ import annotations

import asyncio

import pytest

from benchmarks import loop_overhead as loop
from benchmarks._extension_overhead import EXTENSIONS, agent_for
from benchmarks.extension_parts import PARTS, Part, Swap, Swapped

_CASES = [
    (key, part, native)
    for key, parts in PARTS.items()
    for part in parts
    for native in (False, True)
]


@pytest.mark.parametrize(
    ("key", "part", "native"),
    _CASES,
    ids=[f"{key}-{part.label[:40]}-{'native' if n else 'text'}" for key, part, n in _CASES],
)
def test_a_part_made_free_leaves_a_finished_run_and_is_put_back(
    key: str, part: Part, native: bool
) -> None:
    originals = [(s.owner, s.name, getattr(s.owner, s.name)) for s in part.swaps]
    label = next(name for name in EXTENSIONS if name.startswith(key))
    agent, model, _ = agent_for(native=native, extensions=EXTENSIONS[label]())
    with Swapped(part):
        for swap in part.swaps:
            assert getattr(swap.owner, swap.name) is swap.stand_in
        asyncio.run(loop.agent_run(agent, model))  # raises unless it ran as scripted
    for owner, name, original in originals:
        assert getattr(owner, name) is original
    asyncio.run(loop.agent_run(agent, model))  # and as it is, after


def test_a_stand_in_for_a_name_the_library_lost_is_refused() -> None:
    class Holder:
        kept = 1

    part = Part("gone", (Swap(Holder, "kept", 3), Swap(Holder, "gone", 2)))
    with (
        pytest.raises(AttributeError, match="has no 'gone': update extension_parts"),
        Swapped(part),
    ):
        pass
    assert Holder.kept == 1  # checked before any was swapped
    assert not hasattr(Holder, "gone")
