"""The demo airline's in-memory data set (SkyWings): customers, flights, bookings, policy.

``AirlineData.fresh()`` returns a new copy, so each run can change bookings safely.
"""

from __future__ import annotations

import copy
import datetime as dt
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["DEMO_TODAY", "AirlineData", "Booking", "Customer", "Flight", "PolicyEntry", "Seat"]

DEMO_TODAY = dt.date(2026, 3, 5)
TOMORROW = DEMO_TODAY + dt.timedelta(days=1)

CabinClass = Literal["economy", "business", "first"]
Position = Literal["window", "middle", "aisle"]
_BUSINESS: tuple[tuple[str, Position], ...] = (
    ("A", "window"),
    ("C", "aisle"),
    ("D", "aisle"),
    ("F", "window"),
)
_ECONOMY: tuple[tuple[str, Position], ...] = (("A", "window"), ("B", "middle"), ("C", "aisle"))


@dataclass
class Customer:
    customer_id: str
    name: str
    email: str
    tier: Literal["none", "silver", "gold", "platinum"]
    booking_ids: list[str]


@dataclass
class Flight:
    flight_number: str
    origin: str
    destination: str
    departure: str
    arrival: str
    aircraft: str
    prices: dict[CabinClass, int]


@dataclass
class Seat:
    seat_number: str
    seat_class: CabinClass
    position: Position
    available: bool


@dataclass
class Booking:
    booking_id: str
    customer_id: str
    flight_number: str
    seat_number: str
    seat_class: CabinClass
    status: Literal["confirmed", "cancelled"]
    total_price: int
    meal_preference: str
    history: list[str] = field(default_factory=list[str])


@dataclass
class PolicyEntry:
    title: str
    keywords: list[str]
    content: str


def _at(hour: int, minute: int = 0) -> str:
    return dt.datetime.combine(TOMORROW, dt.time(hour, minute), tzinfo=dt.UTC).isoformat()


def _seats(taken: set[str]) -> list[Seat]:
    seats = [
        Seat(f"{row}{letter}", "business", position, f"{row}{letter}" not in taken)
        for row in (2, 3)
        for letter, position in _BUSINESS
    ]
    seats += [
        Seat(f"{row}{letter}", "economy", position, f"{row}{letter}" not in taken)
        for row in (12, 14, 21)
        for letter, position in _ECONOMY
    ]
    return seats


@dataclass
class AirlineData:
    customers: dict[str, Customer]
    flights: dict[str, Flight]
    seats: dict[str, list[Seat]]
    bookings: dict[str, Booking]
    policies: list[PolicyEntry]

    @classmethod
    def fresh(cls) -> AirlineData:
        return copy.deepcopy(_SEED)


_SEED = AirlineData(
    customers={
        "C001": Customer("C001", "John Smith", "john.smith@email.com", "gold", ["BK001", "BK002"]),
        "C002": Customer("C002", "Ana Lima", "ana.lima@email.com", "none", ["BK003"]),
    },
    flights={
        "AA100": Flight(
            "AA100",
            "JFK",
            "LAX",
            _at(8),
            _at(11, 30),
            "Boeing 777",
            {"economy": 299, "business": 899, "first": 1599},
        ),
        "AA101": Flight(
            "AA101",
            "JFK",
            "LAX",
            _at(14),
            _at(17, 30),
            "Airbus A321",
            {"economy": 329, "business": 949, "first": 1699},
        ),
        "AA102": Flight(
            "AA102",
            "JFK",
            "LAX",
            _at(20),
            _at(23, 30),
            "Boeing 787",
            {"economy": 279, "business": 849, "first": 1499},
        ),
        "AA200": Flight(
            "AA200",
            "LAX",
            "SFO",
            _at(9),
            _at(10, 25),
            "Embraer 175",
            {"economy": 129, "business": 399, "first": 699},
        ),
    },
    seats={
        "AA100": _seats({"12A", "14B"}),
        "AA101": _seats({"12A", "14A", "21A", "2A", "3F"}),
        "AA102": _seats({"12A", "21A", "2F"}),
        "AA200": _seats(set()),
    },
    bookings={
        "BK001": Booking(
            "BK001", "C001", "AA100", "12A", "economy", "confirmed", 299, "vegetarian"
        ),
        "BK002": Booking("BK002", "C001", "AA200", "3C", "business", "confirmed", 399, "regular"),
        "BK003": Booking("BK003", "C002", "AA101", "21B", "economy", "confirmed", 329, "regular"),
    },
    policies=[
        PolicyEntry(
            "Flight change and rescheduling",
            ["change", "reschedule", "fee"],
            "Changes 24+ hours before departure: $50 fee in economy, free in business and "
            "first. Within 24 hours: $150 in economy, $75 in business, free in first. Gold "
            "and Platinum members change once per booking for free. A more expensive new "
            "flight costs the fare difference; a cheaper one gives the difference as travel "
            "credit.",
        ),
        PolicyEntry(
            "Cancellation and refunds",
            ["cancel", "refund"],
            "Cancellations 24+ hours before departure are refunded minus a $100 fee in "
            "economy; business and first are refunded in full.",
        ),
        PolicyEntry(
            "Baggage",
            ["baggage", "bag", "luggage"],
            "One carry-on and one personal item are free. Checked bags cost $35 each in "
            "economy and are free in business and first.",
        ),
    ],
)
