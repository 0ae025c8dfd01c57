"""A program stopped where it waits on calls, kept as Monty's snapshot, and resumed in
another worker from that point: the calls before it are not made again. (Internal: the
approvals of code mode stand on it.)"""

from __future__ import annotations

from collections.abc import Sequence

from toolchain import tool
from toolchain.code._sandbox import (
    HOLD,
    Finished,
    Limits,
    Paused,
    ToolReply,
    ToolRequest,
    resume_program,
    run_program,
)
from toolchain.code._stubs import tool_stubs


@tool
def fetch(n: int) -> int:
    """Fetch a number."""
    return n


STUBS = tool_stubs([fetch])
LIMITS = Limits(timeout=5.0, memory=2**26, tool_calls=50, print_chars=10_000, recursion=100)
PROGRAM = (
    "import asyncio\n"
    "first = await fetch(1)\n"
    'print("first", first)\n'
    "a, b = await asyncio.gather(fetch(2), fetch(3))\n"
    'print("then", a, b)\n'
    "last = await fetch(4)\n"
    "first + a + b + last"
)


async def test_a_paused_program_goes_on_from_where_it_waited() -> None:
    asked: list[list[tuple[str, dict[str, object]]]] = []

    async def answer(requests: Sequence[ToolRequest]) -> list[ToolReply] | None:
        asked.append([(r.name, r.args) for r in requests])
        if len(asked) == 2:  # the gathered pair waits for a person
            return HOLD
        return [ToolReply(int(str(r.args["n"])) * 10) for r in requests]

    paused = await run_program(PROGRAM, STUBS, LIMITS, answer)
    assert isinstance(paused, Paused)
    assert [r.args for r in paused.due] == [{"n": 2}, {"n": 3}]
    assert paused.printed == "first 10\n"
    # Resumed with the pair's answers: only the calls after the pause are asked for.
    done = await resume_program(paused, [ToolReply(20), ToolReply(30)], STUBS, LIMITS, answer)
    assert isinstance(done, Finished)
    assert done.printed == "first 10\nthen 20 30\n"
    assert done.value == 100
    assert asked == [
        [("fetch", {"n": 1})],
        [("fetch", {"n": 2}), ("fetch", {"n": 3})],
        [("fetch", {"n": 4})],
    ]


async def test_a_denied_call_raises_where_the_program_waited() -> None:
    async def answer(requests: Sequence[ToolRequest]) -> list[ToolReply] | None:
        return HOLD

    paused = await run_program(
        "try:\n    await fetch(1)\nexcept Exception as e:\n    print('told:', e)",
        STUBS,
        LIMITS,
        answer,
    )
    assert isinstance(paused, Paused)
    refused = [ToolReply(error="fetch was not approved: not today")]
    done = await resume_program(paused, refused, STUBS, LIMITS, answer)
    assert isinstance(done, Finished)
    assert done.printed == "told: fetch was not approved: not today\n"
