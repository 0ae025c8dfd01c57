"""`Limits.exceeded` and `Stats` as a loop reads them before each step: the same answers
whichever bounds are set, in the documented order, with the per-tool bounds read live."""

from __future__ import annotations

import dataclasses

import pytest

from toolchain import Limits, Stats


def test_the_first_limit_passed_is_named_in_order() -> None:
    limits = Limits(
        max_steps=2,
        max_tool_calls=1,
        max_output_tokens=10,
        max_consecutive_tool_errors=None,
        max_tool_calls_per_tool={"add": 0},
    )
    stats = Stats()
    assert limits.exceeded(stats) is None
    stats.count_call(Stats.TOOL_CALLS, "add")  # past the per-tool bound only
    assert limits.exceeded(stats) == "max_tool_calls_per_tool[add]"
    stats.increment(Stats.OUTPUT_TOKENS, 11)
    assert limits.exceeded(stats) == "max_output_tokens"
    stats.count_call(Stats.TOOL_CALLS, "sub")
    assert limits.exceeded(stats) == "max_tool_calls"
    stats.increment(Stats.STEPS, 2)  # reached, not passed; the next step would pass it
    assert limits.exceeded(stats) == "max_tool_calls"
    assert limits.exceeded(stats, starting_step=True) == "max_steps"


def test_a_bound_left_unset_is_never_checked() -> None:
    stats = Stats()
    stats.increment(Stats.CONSECUTIVE_TOOL_ERRORS, 100)
    stats.increment(Stats.STEPS, 100)
    unbounded = Limits(max_steps=None, max_consecutive_tool_errors=None)
    assert unbounded.exceeded(stats, starting_step=True) is None
    assert Limits(max_steps=None).exceeded(stats) == "max_consecutive_tool_errors"


def test_per_tool_bounds_are_read_when_checked() -> None:
    per_tool = {"add": 5}
    limits = Limits(max_tool_calls_per_tool=per_tool)
    stats = Stats()
    stats.count_call(Stats.TOOL_CALLS, "add")
    assert limits.exceeded(stats) is None
    per_tool["add"] = 0  # the dict given is the one read
    assert limits.exceeded(stats) == "max_tool_calls_per_tool[add]"


def test_limits_compare_show_and_copy_by_their_bounds() -> None:
    limits = Limits(max_steps=3, max_tool_calls=2)
    assert limits == Limits(max_steps=3, max_tool_calls=2) != Limits(max_steps=3)
    assert "_bounds" not in repr(limits)
    loosened = dataclasses.replace(limits, max_tool_calls=None)
    stats = Stats()
    stats.increment(Stats.TOOL_CALLS, 3)
    assert limits.exceeded(stats) == "max_tool_calls"
    assert loosened.exceeded(stats) is None


def test_stats_read_zero_for_a_counter_never_counted_and_stay_usable_after_an_error() -> None:
    stats = Stats()
    assert stats.get("never") == 0
    stats.set(Stats.CONSECUTIVE_PARSE_ERRORS, 0)
    assert stats.snapshot() == {Stats.CONSECUTIVE_PARSE_ERRORS: 0}  # set shows; reads do not
    with pytest.raises(TypeError):
        stats.increment(Stats.TOOL_CALLS, "one")  # type: ignore[arg-type]  # a caller's bug
    stats.increment(Stats.TOOL_CALLS)  # the lock was released: this does not hang
    assert stats.first_over([("calls", 0, Stats.TOOL_CALLS)]) == "calls"
    assert stats.snapshot() == {Stats.CONSECUTIVE_PARSE_ERRORS: 0, Stats.TOOL_CALLS: 1}
