"""Both agents show tool outputs in the chain's ``observations`` encoding: ReActAgent in
its observation message, ToolCallingAgent in each call's tool message."""

from __future__ import annotations

import pytest

from agents.models import ScriptedModel
from tests.support.agent_kinds import KINDS, Kind, agent, answer, call
from toolchain import JSONToolChain, ObservationEncoding, tool

FLIGHTS: list[dict[str, object]] = [
    {"flight": "AA100", "departs": "08:00", "price": 299},
    {"flight": "AA102", "departs": "20:00", "price": 279},
]
TABLE = '[2]{flight,departs,price}:\n  AA100,"08:00",299\n  AA102,"20:00",279'


@tool
def search_flights(origin: str, destination: str) -> list[dict[str, object]]:
    """Flights between two airports."""
    return FLIGHTS


@tool
def cancel(booking_id: str) -> str:
    """Cancel a booking."""
    raise RuntimeError("the booking is locked")


def run(
    kind: Kind, observations: ObservationEncoding, *calls: tuple[str, dict[str, object]]
) -> ScriptedModel:
    chain = JSONToolChain(observations=observations)
    chain.register_tool(search_flights).register_tool(cancel)
    model = ScriptedModel([*(call(kind, name, **args) for name, args in calls), answer(kind)])
    result = agent(kind, model, chain).run_sync("Find me a flight.")
    assert result.ok
    return model


def shown(model: ScriptedModel, kind: Kind) -> str:
    """What the model was shown of the first call's result, in its second request."""
    messages = model.requests[1].messages
    if kind == "native":
        [reply] = [m for m in messages if m.role == "tool"]
        return reply.text_content()
    return messages[-1].text_content()


@KINDS
@pytest.mark.parametrize("observations", ["toon", "auto"])
def test_the_records_reach_the_model_as_a_table(
    kind: Kind, observations: ObservationEncoding
) -> None:
    model = run(kind, observations, ("search_flights", {"origin": "JFK", "destination": "LAX"}))
    text = shown(model, kind)
    if kind == "native":
        assert text == TABLE  # the tool message is the table itself
    else:
        assert (
            text == f"<observation>\n<search_flights>\n{TABLE}\n</search_flights>\n</observation>"
        )


@KINDS
def test_json_stays_the_default(kind: Kind) -> None:
    model = run(kind, "json", ("search_flights", {"origin": "JFK", "destination": "LAX"}))
    assert '[{"flight":"AA100","departs":"08:00","price":299},' in shown(model, kind)


@KINDS
@pytest.mark.parametrize("observations", ["toon", "auto"])
def test_a_failed_call_is_still_an_error(kind: Kind, observations: ObservationEncoding) -> None:
    model = run(kind, observations, ("cancel", {"booking_id": "BK001"}))
    assert "Error: cancel failed: RuntimeError: the booking is locked" in shown(model, kind)
