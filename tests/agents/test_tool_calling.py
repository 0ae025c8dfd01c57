"""ToolCallingAgent on a scripted model: what each call is answered with, and how runs end."""

from __future__ import annotations

import asyncio
import dataclasses
import io
import json
from collections.abc import AsyncIterator, Sequence
from typing import Any

import pydantic
import pytest
from typing_extensions import Unpack

from agents import (
    AgentResult,
    JSONLTraceWriter,
    Limits,
    ModelTextDelta,
    ModelToolCallDelta,
    RunEvent,
    RunFinished,
    ToolCallFinished,
    ToolCallingAgent,
    ToolCallingOptions,
    ToolCallStarted,
    TypedTermination,
)
from agents.models import (
    GenerateOptions,
    Message,
    ModelResponse,
    ScriptedModel,
    ScriptedReply,
    TextDelta,
    ToolCallDelta,
    ToolCallRequest,
    Usage,
    messages_from_json,
    messages_to_json,
)
from toolchain import (
    ExecutionContext,
    ImageContent,
    JSONToolChain,
    TextContent,
    ToolDefinitionError,
    ToolResult,
    YAMLToolChain,
    tool,
)
from toolchain.code import PythonToolChain
from toolchain.testing import fixed_clock

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def weather(city: str) -> dict[str, object]:
    """Today's weather in a city."""
    if city == "Atlantis":
        raise LookupError("no such city")
    return {"city": city, "temp_c": 21}


@tool
def chart(city: str) -> ToolResult[str]:
    """A temperature chart of a city."""
    return ToolResult(
        f"chart of {city}",
        media=(ImageContent(data=PNG, media_type="image/png"),),
        instructions="Describe the trend in one sentence.",
    )


def chain() -> JSONToolChain:
    return JSONToolChain().register_tool(add).register_tool(weather).register_tool(chart)


def agent(model: ScriptedModel, **options: Unpack[ToolCallingOptions]) -> ToolCallingAgent[str]:
    settings: ToolCallingOptions = {"tool_chain": chain(), "clock": fixed_clock, **options}
    return ToolCallingAgent(model, **settings)


def two_calls(*calls: tuple[str, str, str]) -> ScriptedReply:
    return ScriptedReply("", tuple(ToolCallRequest(i, n, a) for i, n, a in calls))


def tool_messages(result: AgentResult[Any]) -> list[Message]:
    return [m for m in result.messages if m.role == "tool"]


# -- answering each call ---------------------------------------------------------------


def test_each_call_gets_its_own_tool_message_in_call_order() -> None:
    model = ScriptedModel(
        [
            two_calls(("c1", "weather", '{"city": "Paris"}'), ("c2", "add", '{"a": 2, "b": 3}')),
            "Paris is 21 C and 2 + 3 = 5.",
        ]
    )
    result = agent(model).run_sync("Weather in Paris, and 2 + 3?")
    assert result.ok and result.answer == "Paris is 21 C and 2 + 3 = 5."
    replies = tool_messages(result)
    assert [(m.tool_call_id, m.name) for m in replies] == [("c1", "weather"), ("c2", "add")]
    assert json.loads(replies[0].text_content()) == {"city": "Paris", "temp_c": 21}
    assert replies[1].text_content() == "5"
    # The model's next request holds the assistant turn with both calls, then the results.
    second = model.requests[1].messages
    assert [m.role for m in second] == ["system", "user", "assistant", "tool", "tool"]
    assert [c.id for c in second[2].tool_calls] == ["c1", "c2"]
    raw = result.steps[0].tool_results[0].raw
    assert raw.output(1, int) == 5
    assert result.steps[0].tool_calls == second[2].tool_calls


def test_a_yaml_chain_serialises_tool_messages_as_yaml() -> None:
    model = ScriptedModel([ScriptedModel.call("weather", city="Oslo"), "Cold."])
    yaml_chain = YAMLToolChain().register_tool(weather)
    result = ToolCallingAgent(model, tool_chain=yaml_chain).run_sync("Oslo?")
    assert tool_messages(result)[0].text_content() == "city: Oslo\ntemp_c: 21"


def test_errors_are_answered_per_call_id_and_the_others_still_run() -> None:
    model = ScriptedModel(
        [
            two_calls(
                ("c1", "weather", '{"city": "Par'),  # cut off: not JSON
                ("c2", "wether", '{"city": "Paris"}'),  # unknown tool
                ("c3", "weather", '{"city": "Atlantis"}'),  # the tool raises
                ("c4", "add", '{"a": "two", "b": 3}'),  # invalid arguments
                ("c5", "add", '{"a": 1, "b": 1}'),
            ),
            "Done.",
        ]
    )
    result = agent(model).run_sync("Go.")
    texts = {m.tool_call_id: m.text_content() for m in tool_messages(result)}
    assert texts["c1"].startswith("Error: the arguments are not valid JSON")
    assert "send the call again with its arguments as one JSON object" in texts["c1"]
    assert "unknown tool 'wether'. Did you mean 'weather'?" in texts["c2"]
    assert "no such city" in texts["c3"]
    assert texts["c4"].startswith("Error: ") and "a" in texts["c4"]
    assert texts["c5"] == "2"
    errors = result.steps[0].tool_results[0].raw.errors
    assert [e.kind if e else None for e in errors] == [
        "invalid_arguments",
        "unknown_tool",
        "tool_error",
        "invalid_arguments",
        None,
    ]
    assert result.stats["tool_errors"] == 4


def test_calls_without_ids_get_ids_their_tool_messages_answer() -> None:
    model = ScriptedModel([two_calls(("", "add", '{"a": 1, "b": 2}')), "3"])
    result = agent(model).run_sync("1 + 2?")
    call = result.messages[2].tool_calls[0]
    assert call.id and tool_messages(result)[0].tool_call_id == call.id


def test_media_stays_with_its_tool_message_and_is_listed_in_the_text() -> None:
    model = ScriptedModel([ScriptedModel.call("chart", city="Rome", id="c1"), "Warming."])
    result = agent(model).run_sync("Chart Rome.")
    [reply] = tool_messages(result)
    text, image = reply.content
    assert isinstance(text, TextContent) and isinstance(image, ImageContent)
    assert text.text == (
        "chart of Rome\n\n"
        "<instructions>\nDescribe the trend in one sentence.\n</instructions>\n\n"
        "<attachments>\n[1] image (image/png, 16 bytes)\n</attachments>"
    )
    assert image.data == PNG


def test_calls_of_one_turn_run_concurrently() -> None:
    both_started = asyncio.Event()
    started: list[str] = []

    @tool
    async def wait_for_other(name: str) -> str:
        """Wait until both calls are running."""
        started.append(name)
        if len(started) == 2:
            both_started.set()
        await asyncio.wait_for(both_started.wait(), 5)
        return name

    model = ScriptedModel(
        [
            two_calls(
                ("a", "wait_for_other", '{"name": "a"}'), ("b", "wait_for_other", '{"name": "b"}')
            ),
            "ok",
        ]
    )
    result = ToolCallingAgent(
        model, tool_chain=JSONToolChain().register_tool(wait_for_other)
    ).run_sync("Go")
    assert result.ok and [m.text_content() for m in tool_messages(result)] == ["a", "b"]


# -- specs, options and the system prompt -----------------------------------------------


def test_the_model_gets_tool_specs_and_a_native_system_prompt() -> None:
    model = ScriptedModel(["Hi."])
    agent(model, behavior="You help.").run_sync("Hello")
    options = model.requests[0].options
    assert [spec.name for spec in options.tools] == ["add", "weather", "chart"]
    spec = options.tools[0]
    assert spec.strict and spec.parameters["required"] == ["a", "b"]
    assert spec.parameters["additionalProperties"] is False
    assert options.tool_choice == "auto"
    system = model.requests[0].messages[0].text_content()
    assert "You help." in system and "available_tools" not in system
    assert model.requests[0].messages[1] == Message.text("user", "Hello")


def test_each_run_sends_the_chain_and_options_as_they_are_when_it_starts() -> None:
    # The specs an agent made are reused while its chain and options stay the same: a
    # tool registered since, or options replaced, are what the next run sends.
    tools = JSONToolChain().register_tool(add)
    model = ScriptedModel(["One.", "Two.", "Three.", "Four."])
    native = ToolCallingAgent(model, tool_chain=tools, clock=fixed_clock)
    native.run_sync("Hello")
    native.run_sync("Hello")
    tools.register_tool(weather)
    native.run_sync("Hello")
    native.generate_options = GenerateOptions(temperature=0.5, tool_choice="required")
    native.run_sync("Hello")
    sent = [request.options for request in model.requests]
    assert [[spec.name for spec in options.tools] for options in sent] == [
        ["add"],
        ["add"],
        ["add", "weather"],
        ["add", "weather"],
    ]
    assert sent[0] == sent[1] and sent[1] != sent[2]
    assert (sent[2].temperature, sent[2].tool_choice) == (None, "auto")
    assert (sent[3].temperature, sent[3].tool_choice) == (0.5, "required")
    assert sent[3].tools == sent[2].tools


class Swapped:
    """A chain written against the ``ToolChain`` protocol alone, whose tools can be
    swapped for others of the same names (its ``tools`` is a new mapping every read)."""

    def __init__(self, inner: JSONToolChain) -> None:
        self.inner = inner
        self.name, self.guidance = inner.name, inner.guidance

    @property
    def tools(self) -> Any:
        return self.inner.tools

    def __getattr__(self, name: str) -> Any:  # the rest of the protocol, as the inner chain's
        return getattr(self.inner, name)


def test_a_protocol_chain_whose_tool_changed_under_its_name_sends_the_new_spec() -> None:
    @tool(name="add")
    def add_twice(a: int, b: int) -> int:
        """Add two integers, twice."""
        return 2 * (a + b)

    tools = Swapped(JSONToolChain().register_tool(add))
    model = ScriptedModel(["One.", "Two."])
    # pyright cannot see the protocol's methods through __getattr__ (mypy can).
    native = ToolCallingAgent(
        model,
        tool_chain=tools,  # pyright: ignore[reportArgumentType]
        clock=fixed_clock,
    )
    native.run_sync("Hello")
    tools.inner = JSONToolChain().register_tool(add_twice)
    native.run_sync("Hello")
    descriptions = [[s.description for s in r.options.tools] for r in model.requests]
    assert descriptions == [["Add two integers."], ["Add two integers, twice."]]


# -- answers ----------------------------------------------------------------------------


class Booking(pydantic.BaseModel):
    flight: str
    seats: int


def positive(booking: Booking) -> str | None:
    return None if booking.seats > 0 else "seats must be at least 1"


def typed(model: ScriptedModel) -> ToolCallingAgent[Booking]:
    termination = TypedTermination(Booking, validators=[positive])
    return ToolCallingAgent(model, termination=termination, tool_chain=chain())


def test_a_typed_answer_comes_through_the_final_answer_tool() -> None:
    model = ScriptedModel(
        [
            ScriptedModel.call("final_answer", flight="AA102", seats=0, id="a1"),
            ScriptedModel.call("final_answer", flight="AA102", seats=2, id="a2"),
        ]
    )
    result = typed(model).run_sync("Book it.")
    assert result.ok and result.answer == Booking(flight="AA102", seats=2)
    first = model.requests[0].options
    assert first.tool_choice == "required"
    answer_spec = first.tools[-1]
    assert answer_spec.name == "final_answer"
    assert answer_spec.parameters["properties"] == Booking.model_json_schema()["properties"]
    replies = tool_messages(result)
    assert replies[0].tool_call_id == "a1"
    assert replies[0].text_content() == "Error: answer rejected: seats must be at least 1"
    assert replies[1].text_content() == "Answer accepted."
    assert result.steps[0].feedback == "answer rejected: seats must be at least 1"
    assert result.stats["parse_errors"] == 1


def test_a_final_answer_beside_other_calls_is_not_taken() -> None:
    model = ScriptedModel(
        [
            two_calls(
                ("t", "add", '{"a": 1, "b": 1}'),
                ("f", "final_answer", '{"flight": "X", "seats": 1}'),
            ),
            ScriptedModel.call("final_answer", flight="X", seats=2),
        ]
    )
    result = typed(model).run_sync("Go.")
    texts = {m.tool_call_id: m.text_content() for m in tool_messages(result)}
    assert texts["t"] == "2"
    assert "called other tools in the same turn" in texts["f"]
    assert result.answer == Booking(flight="X", seats=2)
    assert len(result.steps) == 2


def test_typed_answer_written_as_text_is_taken_or_redirected() -> None:
    ok = typed(ScriptedModel(['{"flight": "AA1", "seats": 1}'])).run_sync("Go.")
    assert ok.answer == Booking(flight="AA1", seats=1)
    model = ScriptedModel(
        ["Sure, booked!", ScriptedModel.call("final_answer", flight="B", seats=1)]
    )
    redirected = typed(model).run_sync("Go.")
    assert redirected.ok
    feedback = model.requests[1].messages[-1]
    assert feedback.role == "user" and "call the final_answer tool" in feedback.text_content()


def test_a_tool_named_like_the_answer_tool_is_refused() -> None:
    @tool
    def final_answer(text: str) -> str:
        """Clash."""
        return text

    clash = JSONToolChain().register_tool(final_answer)
    with pytest.raises(ToolDefinitionError, match="answer_tool"):
        ToolCallingAgent(ScriptedModel([]), termination=TypedTermination(Booking), tool_chain=clash)
    renamed = ToolCallingAgent(
        ScriptedModel([ScriptedModel.call("submit", flight="F", seats=1)]),
        termination=TypedTermination(Booking),
        tool_chain=clash,
        answer_tool="submit",
    )
    assert renamed.run_sync("Go.").answer == Booking(flight="F", seats=1)


def test_an_empty_reply_gets_feedback() -> None:
    model = ScriptedModel(["", "Here."])
    result = agent(model).run_sync("Hi")
    assert result.answer == "Here."
    assert result.steps[0].feedback == "your reply was empty: answer, or call a tool"
    assert model.requests[1].messages[-1] == Message.text(
        "user", "your reply was empty: answer, or call a tool"
    )


# -- limits, cancellation, streaming ------------------------------------------------------


def test_limits_end_the_run_and_keep_every_call_answered() -> None:
    model = ScriptedModel([ScriptedModel.call("add", a=1, b=1)] * 5)
    result = agent(model, limits=Limits(max_steps=2)).run_sync("Loop.")
    assert result.stopped_by == "limit" and result.limit == "max_steps"
    assert len(result.steps) == 2
    roles = [m.role for m in result.messages]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "tool"]


def test_the_deadline_answers_unfinished_calls_and_keeps_them() -> None:
    @tool
    async def slow(seconds: float) -> str:
        """Sleep."""
        await asyncio.sleep(seconds)
        return "woke"

    model = ScriptedModel(
        [two_calls(("fast", "slow", '{"seconds": 0}'), ("hang", "slow", '{"seconds": 30}'))]
    )
    native = ToolCallingAgent(
        model, tool_chain=JSONToolChain().register_tool(slow), limits=Limits(timeout=0.2)
    )
    result = native.run_sync("Go.")
    assert result.stopped_by == "limit" and result.limit == "timeout"
    texts = {m.tool_call_id: m.text_content() for m in tool_messages(result)}
    assert texts["fast"] == "woke"
    assert texts["hang"].startswith("Error:")
    # The conversation can go on: every call has its answer.
    follow = ScriptedModel(["Sorry, that took too long."])
    again = ToolCallingAgent(follow, tool_chain=JSONToolChain().register_tool(slow))
    assert again.run_sync("And now?", history=result.messages).ok


def test_stream_yields_text_and_call_deltas_then_the_result() -> None:
    model = ScriptedModel(
        [ScriptedModel.call("add", a=20, b=22, id="c1", text="Adding."), "It is 42."], chunk_size=3
    )

    async def collect() -> list[RunEvent[str]]:
        return [event async for event in agent(model).stream("20 + 22?")]

    events = asyncio.run(collect())
    text = "".join(e.text for e in events if isinstance(e, ModelTextDelta) and e.step == 1)
    assert text == "Adding."
    deltas = [e for e in events if isinstance(e, ModelToolCallDelta)]
    assert deltas[0].id == "c1" and deltas[0].name == "add"
    assert json.loads("".join(d.arguments for d in deltas)) == {"a": 20, "b": 22}
    assert any(isinstance(e, ToolCallStarted) for e in events)
    assert any(isinstance(e, ToolCallFinished) for e in events)
    finished = events[-1]
    assert isinstance(finished, RunFinished) and finished.result.answer == "It is 42."


def test_child_contexts_add_their_stats_into_the_parent() -> None:
    parent = ExecutionContext()
    child = parent.child("sub-agent")
    model = ScriptedModel([ScriptedModel.call("add", a=1, b=1), "2"])
    result = agent(model).run_sync("1 + 1?", ctx=child)
    assert parent.stats.get("tool_calls") == 1
    assert parent.stats.get("model_calls") == 2
    assert parent.stats.get("input_tokens") == result.usage.input_tokens > 0
    assert parent.stats.get("output_tokens") == result.usage.output_tokens > 0


# -- conversations ------------------------------------------------------------------------


def test_a_conversation_with_calls_and_media_continues_after_a_json_round_trip() -> None:
    model = ScriptedModel(
        [ScriptedModel.call("chart", city="Rome", id="c1"), "Warming.", "Still warming."]
    )
    native = agent(model)
    first = native.run_sync("Chart Rome.")
    restored = messages_from_json(messages_to_json(first.messages))
    assert restored == first.messages
    second = native.run_sync("And now?", history=restored)
    assert second.answer == "Still warming."
    sent = model.requests[2].messages
    assert sent[1:5] == first.messages[1:5]
    assert sent[-1] == Message.text("user", "And now?")


def test_history_with_unanswered_calls_is_repaired() -> None:
    dangling = (
        Message.text("user", "Weather?"),
        Message("assistant", (), (ToolCallRequest("c9", "weather", '{"city": "Oslo"}'),)),
        Message("tool", (TextContent("orphan"),), tool_call_id="nobody", name="weather"),
    )
    model = ScriptedModel(["Let me try again."])
    agent(model).run_sync("Well?", history=dangling)
    sent = model.requests[0].messages
    assert [m.role for m in sent] == ["system", "user", "assistant", "tool", "user"]
    assert sent[3].tool_call_id == "c9" and sent[3].text_content().startswith("Error: no result")


def test_the_trace_shows_steps_native_calls_and_tool_results() -> None:
    ctx = ExecutionContext()
    out = io.StringIO()
    JSONLTraceWriter(out).attach(ctx)
    model = ScriptedModel([ScriptedModel.call("add", a=1, b=2, id="c1"), "3"])
    agent(model).run_sync("1 + 2?", ctx=ctx)
    records = [json.loads(line) for line in out.getvalue().splitlines()]
    steps = [r for r in records if r["event"] == "StepReady"]
    assert [s["request"]["index"] for s in steps] == [1, 2]
    assert steps[1]["request"]["messages"] == 3 and steps[1]["changed"] is False
    [made] = next(r for r in records if r["event"] == "AfterModelCall")["response"]["tool_calls"]
    assert made == {"id": "c1", "name": "add", "arguments": '{"a":1,"b":2}'}
    [after] = [r for r in records if r["event"] == "ToolCallFinished"]
    assert after["id"] == "c1" and after["result"]["text"] == 3


class CachingModel:
    """Reports half of every prompt as read from the provider's cache."""

    def __init__(self, inner: ScriptedModel) -> None:
        self.inner = inner

    @property
    def name(self) -> str:
        return "caching"

    async def generate(
        self, messages: Sequence[Message], options: GenerateOptions | None = None
    ) -> ModelResponse:
        response = await self.inner.generate(messages, options)
        usage = Usage(response.usage.input_tokens, response.usage.output_tokens, 10)
        return dataclasses.replace(response, usage=usage)

    def stream(
        self, messages: Sequence[Message], options: GenerateOptions | None = None
    ) -> AsyncIterator[TextDelta | ToolCallDelta | ModelResponse]:
        raise NotImplementedError


def test_cached_tokens_reach_step_and_run_usage_and_the_parents_stats() -> None:
    parent = ExecutionContext()
    model = CachingModel(ScriptedModel([ScriptedModel.call("add", a=1, b=1), "2"]))
    result = ToolCallingAgent(model, tool_chain=chain()).run_sync("1 + 1?", ctx=parent.child("a"))
    assert [it.usage.cached_input_tokens for it in result.steps] == [10, 10]
    assert result.usage.cached_input_tokens == 20
    assert parent.stats.get("cached_input_tokens") == 20
    # Every counter of a model call, in the run and added up in its parent's.
    tokens = {"input_tokens", "output_tokens", "cached_input_tokens", "model_calls"}
    counted = {name: count for name, count in result.stats.items() if name in tokens}
    assert counted == {
        "cached_input_tokens": 20,
        "input_tokens": result.usage.input_tokens,
        "model_calls": 2,
        "output_tokens": result.usage.output_tokens,
    }
    assert {name: parent.stats.get(name) for name in tokens} == counted


def test_calls_sharing_an_id_get_ids_of_their_own() -> None:
    model = ScriptedModel(
        [two_calls(("c0", "add", '{"a": 1, "b": 1}'), ("c0", "add", '{"a": 2, "b": 2}')), "2, 4"]
    )
    result = agent(model).run_sync("Go.")
    ids = [call.id for call in result.messages[2].tool_calls]
    assert ids[0] == "c0" and ids[1] not in ("", "c0")
    assert [(m.tool_call_id, m.text_content()) for m in tool_messages(result)] == [
        (ids[0], "2"),
        (ids[1], "4"),
    ]


def test_ids_reused_across_turns_get_ids_of_their_own() -> None:
    model = ScriptedModel(
        [
            ScriptedModel.call("add", a=1, b=1, id="call_0"),
            ScriptedModel.call("add", a=2, b=2, id="call_0"),
            "done",
        ]
    )
    result = agent(model).run_sync("Go.")
    first, second = (m.tool_calls[0].id for m in result.messages if m.tool_calls)
    assert first == "call_0" and second not in ("", "call_0")
    assert [m.tool_call_id for m in tool_messages(result)] == [first, second]


def test_a_turn_with_one_call_that_worked_ends_the_tool_error_streak() -> None:
    lost = ScriptedModel.call("weather", {"city": "Atlantis"})
    both = ScriptedReply(
        tool_calls=(
            ToolCallRequest("a", "weather", '{"city": "Atlantis"}'),
            ToolCallRequest("b", "add", '{"a": 1, "b": 2}'),
        )
    )
    model = ScriptedModel([lost, both, lost, lost, "done"])
    limits = Limits(max_consecutive_tool_errors=1)
    result = ToolCallingAgent(model, tools=[add, weather], limits=limits).run_sync("Go")
    # 1 failed turn, then one that half worked (the streak starts again), then 2 failed.
    assert (result.stopped_by, result.limit, len(result.steps)) == (
        "limit",
        "max_consecutive_tool_errors",
        4,
    )
    assert result.stats["consecutive_tool_errors"] == 2
    assert result.stats["tool_errors"] == 4


def test_a_chain_offering_other_tools_than_its_config_sends_what_it_offers() -> None:
    # A PythonToolChain's config holds the tools a program calls; the model is offered
    # one tool, `run_python`, and that is the spec a native run sends, every run.
    chain = PythonToolChain().register_tool(add)
    model = ScriptedModel(["One.", "Two."])
    native = ToolCallingAgent(model, tool_chain=chain, clock=fixed_clock)
    native.run_sync("Hello")
    native.run_sync("Hello")
    assert [[spec.name for spec in r.options.tools] for r in model.requests] == [
        ["run_python"],
        ["run_python"],
    ]
