"""The demo airline's typed tools, over one ``AirlineData`` per run."""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

from pydantic import BaseModel, Field

from agents.demo.data import AirlineData, Booking, CabinClass, Customer, Flight, PolicyEntry, Seat
from toolchain import ExecutionContext, Tool, ToolError, ToolResult

__all__ = ["airline_tools"]


class CustomerQuery(BaseModel):
    customer_id: str | None = Field(None, description="Customer ID, e.g. C001")
    email: str | None = Field(None, description="The customer's email address")


class BookingQuery(BaseModel):
    booking_id: str = Field(description="Booking reference, e.g. BK001")


class FlightQuery(BaseModel):
    flight_number: str = Field(description="Flight number, e.g. AA100")


class ScheduleQuery(BaseModel):
    origin: str = Field(description="Origin airport code, e.g. JFK")
    destination: str = Field(description="Destination airport code, e.g. LAX")
    date: str = Field(description="Travel date, YYYY-MM-DD")


class SeatQuery(BaseModel):
    flight_number: str
    seat_class: CabinClass | None = Field(None, description="Only this cabin class")
    available_only: bool = True


class PolicyQuery(BaseModel):
    keyword: str = Field(description="A word such as change, cancel, baggage")


class RescheduleRequest(BaseModel):
    booking_id: str
    new_flight_number: str
    new_seat_number: str | None = Field(None, description="A free seat on the new flight")


class RescheduleOutcome(BaseModel):
    booking: dict[str, Any]
    change_fee: int
    fare_difference: int
    settlement: Literal["charge", "travel_credit", "none"]


class _AirlineTool:
    def __init__(self, data: AirlineData) -> None:
        self.data = data

    def customer(self, customer_id: str) -> Customer:
        found = self.data.customers.get(customer_id)
        if found is None:
            raise ToolError(f"no customer {customer_id}")
        return found

    def flight(self, number: str) -> Flight:
        found = self.data.flights.get(number.upper())
        if found is None:
            raise ToolError(f"no flight {number}; check the number or search the schedule")
        return found

    def booking(self, booking_id: str) -> Booking:
        found = self.data.bookings.get(booking_id.upper())
        if found is None:
            raise ToolError(f"no booking {booking_id}")
        return found


class GetCustomerInfo(_AirlineTool, Tool[CustomerQuery, Customer]):
    name = "get_customer_info"
    description = "Find a customer by customer ID or email address."

    def call(self, ctx: ExecutionContext, input: CustomerQuery) -> ToolResult[Customer]:
        if input.customer_id:
            return ToolResult(self.customer(input.customer_id))
        if input.email:
            for customer in self.data.customers.values():
                if customer.email.lower() == input.email.strip().lower():
                    return ToolResult(customer)
            raise ToolError(f"no customer with email {input.email}")
        raise ToolError("give customer_id or email")


class GetBookingInfo(_AirlineTool, Tool[BookingQuery, Booking]):
    name = "get_booking_info"
    description = "Booking details by booking reference."

    def call(self, ctx: ExecutionContext, input: BookingQuery) -> ToolResult[Booking]:
        return ToolResult(self.booking(input.booking_id))


class GetFlightInfo(_AirlineTool, Tool[FlightQuery, Flight]):
    name = "get_flight_info"
    description = "Flight details (route, times in UTC, aircraft, prices) by flight number."

    def call(self, ctx: ExecutionContext, input: FlightQuery) -> ToolResult[Flight]:
        return ToolResult(self.flight(input.flight_number))


class SearchFlightSchedule(_AirlineTool, Tool[ScheduleQuery, list[Flight]]):
    name = "search_flight_schedule"
    description = "Flights between two airports on a date, earliest first."

    def call(self, ctx: ExecutionContext, input: ScheduleQuery) -> ToolResult[list[Flight]]:
        flights = sorted(
            (
                f
                for f in self.data.flights.values()
                if f.origin == input.origin.upper()
                and f.destination == input.destination.upper()
                and f.departure.startswith(input.date)
            ),
            key=lambda f: f.departure,
        )
        return ToolResult(flights)


class GetFlightSeats(_AirlineTool, Tool[SeatQuery, list[Seat]]):
    name = "get_flight_seats"
    description = "Seats on a flight with class, position (window/middle/aisle) and availability."

    def call(self, ctx: ExecutionContext, input: SeatQuery) -> ToolResult[list[Seat]]:
        self.flight(input.flight_number)
        seats = [
            s
            for s in self.data.seats[input.flight_number.upper()]
            if (input.seat_class is None or s.seat_class == input.seat_class)
            and (s.available or not input.available_only)
        ]
        return ToolResult(seats)


class SearchAirlinePolicy(_AirlineTool, Tool[PolicyQuery, list[PolicyEntry]]):
    name = "search_airline_policy"
    description = "Search the airline's policies by keyword."
    policy = "Read the relevant policy before changing or cancelling anything."

    def call(self, ctx: ExecutionContext, input: PolicyQuery) -> ToolResult[list[PolicyEntry]]:
        word = input.keyword.lower()
        found = [p for p in self.data.policies if word in p.title.lower() or word in p.keywords]
        return ToolResult(found)


class RescheduleBooking(_AirlineTool, Tool[RescheduleRequest, RescheduleOutcome]):
    name = "reschedule_booking"
    description = "Move a booking to another flight (same cabin class), optionally choosing a seat."
    policy = "Only after the customer agreed to the fees the change policy gives."

    def call(
        self, ctx: ExecutionContext, input: RescheduleRequest
    ) -> ToolResult[RescheduleOutcome]:
        booking = self.booking(input.booking_id)
        old, new = self.flight(booking.flight_number), self.flight(input.new_flight_number)
        if (old.origin, old.destination) != (new.origin, new.destination):
            raise ToolError(
                f"{new.flight_number} flies {new.origin}-{new.destination}, not "
                f"{old.origin}-{old.destination}"
            )
        seats = {s.seat_number: s for s in self.data.seats[new.flight_number]}
        seat_number = input.new_seat_number or next(
            (
                s.seat_number
                for s in seats.values()
                if s.available and s.seat_class == booking.seat_class
            ),
            None,
        )
        seat = seats.get(seat_number or "")
        if seat is None or not seat.available or seat.seat_class != booking.seat_class:
            raise ToolError(
                f"seat {seat_number} is not free in {booking.seat_class} on "
                f"{new.flight_number}; check get_flight_seats"
            )
        tier = self.customer(booking.customer_id).tier
        fee = 0 if tier in ("gold", "platinum") or booking.seat_class != "economy" else 50
        difference = new.prices[booking.seat_class] - old.prices[booking.seat_class]
        seat.available = False
        booking.history.append(f"moved from {old.flight_number} seat {booking.seat_number}")
        booking.flight_number, booking.seat_number = new.flight_number, seat.seat_number
        booking.total_price = new.prices[booking.seat_class]
        settlement: Literal["charge", "travel_credit", "none"] = (
            "charge" if difference > 0 else "travel_credit" if difference < 0 else "none"
        )
        return ToolResult(
            RescheduleOutcome(
                booking=dataclasses.asdict(booking),
                change_fee=fee,
                fare_difference=difference,
                settlement=settlement,
            ),
            instructions="Confirm the new flight, seat, fee and fare difference to the customer.",
        )


def airline_tools(data: AirlineData) -> list[Tool[Any, Any]]:
    """One instance of every demo tool, sharing ``data``."""
    return [
        GetCustomerInfo(data),
        GetBookingInfo(data),
        GetFlightInfo(data),
        SearchFlightSchedule(data),
        GetFlightSeats(data),
        SearchAirlinePolicy(data),
        RescheduleBooking(data),
    ]
