"""What the offline demo's model "says": realistic ReAct outputs, rendered in the
agent's own format and call syntax so the same script drives every combination, and
the same steps as native tool calls (`demo_native_replies`) for ``ToolCallingAgent``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import msgspec

from agents.models import ScriptedReply, ToolCallRequest
from formats import TextFormat
from toolchain import to_yaml

__all__ = ["DEMO_TASK", "Step", "demo_native_replies", "demo_outputs"]

DEMO_TASK = (
    "Hi, I'm John Smith (john.smith@email.com). My meeting tomorrow runs late, so flight "
    "AA100 from JFK to LAX is too early for me. Please move me to an evening flight the "
    "same day if there is no change fee, and I'd like a window seat."
)


@dataclass(frozen=True, slots=True)
class Step:
    thinking: str
    calls: tuple[tuple[str, dict[str, Any]], ...] = ()
    answer: str = ""


STEPS = (
    Step(
        "The customer gave an email and a flight. I need to verify the customer, see when "
        "AA100 leaves and read the change policy before touching the booking. These three "
        "lookups are independent, so I'll run them together.",
        (
            ("get_customer_info", {"email": "john.smith@email.com"}),
            ("get_flight_info", {"flight_number": "AA100"}),
            ("search_airline_policy", {"keyword": "change"}),
        ),
    ),
    Step(
        "John Smith is C001, a Gold member, with bookings BK001 and BK002. AA100 leaves "
        "2026-03-06 at 08:00 UTC. Gold members change once per booking for free, so there "
        "is no change fee. Next: which booking is on AA100, and which evening flights "
        "exist on 2026-03-06 from JFK to LAX.",
        (
            ("get_booking_info", {"booking_id": "BK001"}),
            ("get_booking_info", {"booking_id": "BK002"}),
            (
                "search_flight_schedule",
                {"origin": "JFK", "destination": "LAX", "date": "2026-03-06"},
            ),
        ),
    ),
    Step(
        "BK001 is the AA100 booking: economy, seat 12A, $299, vegetarian meal. The evening "
        "option is AA102 at 20:00 UTC, economy $279, $20 cheaper. I'll look for a free "
        "economy window seat on AA102.",
        (
            (
                "get_flight_seats",
                {"flight_number": "AA102", "seat_class": "economy", "available_only": True},
            ),
        ),
    ),
    Step(
        "Free economy window seats on AA102: 12A is taken, 14A is free. The customer "
        "asked for the change if there is no fee, and there is none, so I'll move BK001 to "
        "AA102, seat 14A.",
        (
            (
                "reschedule_booking",
                {"booking_id": "BK001", "new_flight_number": "AA102", "new_seat_number": "14A"},
            ),
        ),
    ),
    Step(
        "The change went through: BK001 is on AA102, seat 14A, no change fee, and the $20 "
        "fare difference becomes travel credit. Everything I say comes from the tools.",
        answer=(
            "All done, Mr. Smith. Booking BK001 is now on flight AA102 from JFK to LAX on "
            "2026-03-06, departing 20:00 UTC and arriving 23:30 UTC, in economy window seat "
            "14A. As a Gold member you pay no change fee, and because AA102 is $20 cheaper "
            "than AA100, the $20 difference is added to your account as travel credit. Your "
            "vegetarian meal preference carries over."
        ),
    ),
)


def render_calls(calls: tuple[tuple[str, dict[str, Any]], ...], syntax: str) -> str:
    items = [{"tool": name, "args": args} for name, args in calls]
    if syntax == "json":
        return msgspec.json.encode(items).decode("utf-8")
    return to_yaml(items)


def demo_outputs(text_format: TextFormat, syntax: Literal["json", "yaml"]) -> list[str]:
    """The scripted model outputs for this format and call syntax."""
    outputs: list[str] = []
    for step in STEPS:
        parts = [text_format.format_section("thinking", step.thinking)]
        if step.calls:
            parts.append(text_format.format_section("action", render_calls(step.calls, syntax)))
        if step.answer:
            parts.append(text_format.format_section("answer", step.answer))
        outputs.append("\n".join(parts))
    return outputs


def demo_native_replies() -> list[ScriptedReply | str]:
    """The same steps as native tool calls: what a tool-calling model replies.

    Each step's thinking is the reply's text, said alongside its calls (as Claude and
    GPT models do); the calls are numbered ``call_1``, ``call_2`` … across the run.
    The last reply has no calls: its text is the answer.

    >>> replies = demo_native_replies()
    >>> [call.name for call in replies[0].tool_calls]
    ['get_customer_info', 'get_flight_info', 'search_airline_policy']
    >>> replies[-1].startswith("All done")
    True
    """
    replies: list[ScriptedReply | str] = []
    numbered = 0
    for step in STEPS:
        if not step.calls:
            replies.append(step.answer)
            continue
        calls: list[ToolCallRequest] = []
        for name, args in step.calls:
            numbered += 1
            arguments = msgspec.json.encode(args).decode("utf-8")
            calls.append(ToolCallRequest(f"call_{numbered}", name, arguments))
        replies.append(ScriptedReply(step.thinking, tuple(calls)))
    return replies
