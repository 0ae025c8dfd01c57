"""The step seam (``agents.steps``) on both agents: what a hook may change, and what not.

A step hook may change one model call's system prompt, messages, active tools, model
and options; the run keeps its own conversation. Hooks run in order, may be async,
and a hook that fails ends the run as an error. ``StepReady`` reports each step.
Without hooks every request repeats the one before it and adds to its end, so a
provider's prompt cache holds (checked here on the wire too).
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Sequence
from typing import Any

import pytest

from agents import (
    ReActAgent,
    StepHook,
    StepHookError,
    StepReady,
    StepRequest,
    ToolCallingAgent,
)
from agents.models import (
    GenerateOptions,
    Message,
    OpenAIChatModel,
    ScriptedModel,
    ScriptedReply,
    ToolCallRequest,
)
from tests.support.agent_kinds import (
    KINDS,
    Agent,
    Kind,
    Output,
    add,
    agent,
    answer,
    chain_for,
    yaml_call,
)
from tests.support.chat_script import chat_script
from tests.support.loopback import LoopbackServer
from tests.support.openai_replies import openai_completion
from toolchain import ExecutionContext, JSONToolChain, ToolCall, YAMLToolChain, tool
from toolchain.chain import ToolChainBase
from toolchain.testing import fixed_clock

NOT_ACTIVE = "the tool 'mul' is not available now. Available tools: add"


@tool
def mul(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


def call(kind: Kind, name: str = "add", a: int = 2, b: int = 3) -> Output:
    return yaml_call(kind, name, a=a, b=b)


def build(kind: Kind, model: ScriptedModel, hooks: Sequence[StepHook] = ()) -> Agent:
    return agent(kind, model, chain_for(kind, add, mul), step_hooks=hooks)


def system_text(messages: Sequence[Message]) -> str:
    assert messages[0].role == "system"
    return messages[0].text_content()


# -- what a hook may change -------------------------------------------------------------


@KINDS
async def test_a_hook_changes_the_system_prompt_of_each_call_only(kind: Kind) -> None:
    def french(ctx: ExecutionContext, step: StepRequest) -> StepRequest:
        return dataclasses.replace(step, system_prompt=step.system_prompt + "\nAnswer in French.")

    model = ScriptedModel([call(kind), answer(kind)])
    result = await build(kind, model, [french]).run("2 + 3?")
    assert result.ok, result.error
    original = system_text(result.messages)
    assert not original.endswith("French.")  # the run keeps the agent's own prompt
    for request in model.requests:
        assert system_text(request.messages) == original + "\nAnswer in French."
        assert request.messages[1:] == result.messages[1 : len(request.messages)]


@KINDS
async def test_a_hook_changes_the_messages_and_sees_the_whole_conversation(kind: Kind) -> None:
    seen: list[StepRequest] = []

    def remind(ctx: ExecutionContext, step: StepRequest) -> StepRequest:
        seen.append(step)
        reminder = Message.text("user", "Reminder: be brief.")
        return dataclasses.replace(step, messages=(*step.messages, reminder))

    model = ScriptedModel([call(kind), answer(kind)])
    result = await build(kind, model, [remind]).run("2 + 3?")
    assert result.ok, result.error
    assert all(m.text_content() != "Reminder: be brief." for m in result.messages)
    first, second = model.requests
    assert first.messages[-1].text_content() == "Reminder: be brief."
    assert first.messages[:-1] == result.messages[:2]
    assert second.messages[:-1] == result.messages[:4]
    # The hook sees the conversation without the system message, and where the task is.
    assert [len(step.messages) for step in seen] == [1, 3]
    assert [step.task_index for step in seen] == [0, 0]
    assert seen[1].messages == result.messages[1:4]
    assert [step.index for step in seen] == [1, 2]


async def test_react_active_tools_narrow_the_prompts_tool_listing() -> None:
    def only_add(ctx: ExecutionContext, step: StepRequest) -> StepRequest:
        assert step.tools == ("add", "mul")
        return dataclasses.replace(step, tools=("add",))

    model = ScriptedModel([call("react", "add"), answer("react")])
    result = await build("react", model, [only_add]).run("2 + 3?")
    assert result.ok, result.error
    for request in model.requests:
        sent = system_text(request.messages)
        assert "- add:" in sent and "- mul:" not in sent
    # The run keeps the system message its first step sent: what the model saw.
    assert result.messages[0] == model.requests[0].messages[0]
    assert "5" in model.requests[1].messages[-1].text_content()  # the active tool ran


async def test_react_a_call_to_an_inactive_tool_is_answered_as_unknown() -> None:
    def only_add(ctx: ExecutionContext, step: StepRequest) -> StepRequest:
        return dataclasses.replace(step, tools=("add",))

    both = (
        "<action>\n- tool: mul\n  args: {a: 2, b: 3}\n- tool: add\n  args: {a: 2, b: 3}\n</action>"
    )
    model = ScriptedModel([both, answer("react")])
    result = await build("react", model, [only_add]).run("2 * 3 and 2 + 3?")
    assert result.ok, result.error
    observation = model.requests[1].messages[-1].text_content()
    assert NOT_ACTIVE in observation
    [made] = result.steps[0].tool_results
    mul_error, add_error = made.raw.errors
    assert mul_error is not None and mul_error.kind == "unknown_tool"
    assert add_error is None
    assert "6\n</mul>" not in observation  # mul did not run


async def test_native_active_tools_are_the_only_specs_sent_and_others_are_refused() -> None:
    def only_add(ctx: ExecutionContext, step: StepRequest) -> StepRequest:
        return dataclasses.replace(step, tools=("add",))

    both = ScriptedReply(
        "",
        (
            ToolCallRequest("c-mul", "mul", '{"a": 2, "b": 3}'),
            ToolCallRequest("c-add", "add", '{"a": 2, "b": 3}'),
        ),
    )
    model = ScriptedModel([both, "done"])
    plain = ScriptedModel(["done"])
    await build("native", plain).run("2 * 3 and 2 + 3?")
    assert [spec.name for spec in plain.requests[0].options.tools] == ["add", "mul"]
    result = await build("native", model, [only_add]).run("2 * 3 and 2 + 3?")
    assert result.ok, result.error
    for request in model.requests:
        assert [spec.name for spec in request.options.tools] == ["add"]
    replies = {m.tool_call_id: m for m in model.requests[1].messages if m.role == "tool"}
    assert NOT_ACTIVE in replies["c-mul"].text_content()
    assert replies["c-mul"].name == "mul"
    assert replies["c-add"].text_content().startswith("5")
    [made] = result.steps[0].tool_results
    assert [e.kind if e is not None else None for e in made.raw.errors] == ["unknown_tool", None]


@KINDS
async def test_an_inactive_tool_is_refused_by_the_chain_in_the_same_words_in_both_agents(
    kind: Kind, monkeypatch: pytest.MonkeyPatch
) -> None:
    def only_add(ctx: ExecutionContext, step: StepRequest) -> StepRequest:
        return dataclasses.replace(step, tools=("add",))

    chain = chain_for(kind, add, mul)
    assert isinstance(chain, ToolChainBase)
    reads: list[str] = []
    read = chain.call_syntax.read

    def counted(content: str, *args: Any) -> list[ToolCall | str]:
        reads.append(content)
        return read(content, *args)

    monkeypatch.setattr(chain.call_syntax, "read", counted)
    model = ScriptedModel([call(kind, "mul"), call(kind, "add"), answer(kind)])
    result = await agent(kind, model, chain, step_hooks=[only_add]).run("2 * 3, else 2 + 3?")
    assert result.ok, result.error
    refused, added = (step.tool_results[0].raw.errors[0] for step in result.steps[:2])
    assert refused is not None and (refused.kind, refused.message) == ("unknown_tool", NOT_ACTIVE)
    assert added is None
    assert NOT_ACTIVE in model.requests[1].messages[-1].text_content()
    assert list(chain.tools) == ["add", "mul"]  # the chain given is never narrowed itself
    # Each action is read once, by the chain (native calls arrive read).
    assert len(reads) == (2 if kind == "react" else 0)


@KINDS
async def test_a_name_the_chain_does_not_have_lists_only_the_steps_tools(kind: Kind) -> None:
    def only_add(ctx: ExecutionContext, step: StepRequest) -> StepRequest:
        return dataclasses.replace(step, tools=("add",))

    model = ScriptedModel([call(kind, "sub"), answer(kind)])
    result = await build(kind, model, [only_add]).run("2 - 3?")
    assert result.ok, result.error
    [error] = result.steps[0].tool_results[0].raw.errors
    assert error is not None and error.kind == "unknown_tool"
    # An unknown tool, not one turned off; and a tool hidden this step is never named.
    assert error.message == "unknown tool 'sub'. Available tools: add"


@KINDS
async def test_what_a_hook_changes_step_by_step_is_sent_step_by_step(kind: Kind) -> None:
    # A run reuses what it made for the step before (the tool specs, the options, the
    # system message) while a hook asks for the same; each step here asks for other
    # tools, options or prompt, and each is sent as asked.
    asked = {
        1: (("add",), 0.5, "One."),
        2: (("add",), 0.5, "One."),
        3: (("add", "mul"), 0.5, "One."),
        4: (("add", "mul"), 0.25, "One."),
        5: (("add", "mul"), 0.25, "Two."),
        6: (("mul",), 0.25, "Two."),
    }

    def per_step(ctx: ExecutionContext, step: StepRequest) -> StepRequest:
        tools, temperature, note = asked[step.index]
        options = dataclasses.replace(step.options, temperature=temperature)
        prompt = f"{step.system_prompt}\n{note}"
        return dataclasses.replace(step, tools=tools, options=options, system_prompt=prompt)

    model = ScriptedModel([call(kind, "add")] * 2 + [call(kind, "mul")] * 3 + [answer(kind)])
    result = await build(kind, model, [per_step]).run("2 + 3?")
    assert result.ok, result.error
    assert len(model.requests) == len(asked)
    for request, (tools, temperature, note) in zip(model.requests, asked.values(), strict=True):
        sent = system_text(request.messages)
        assert request.options.temperature == temperature
        assert sent.endswith(f"\n{note}")
        if kind == "native":
            assert tuple(spec.name for spec in request.options.tools) == tools
        else:
            assert all((f"- {name}:" in sent) == (name in tools) for name in ("add", "mul"))
    assert not any(error for step in result.steps for error in step_errors(step))


@KINDS
async def test_a_step_that_only_narrows_the_tools_sends_the_conversation_as_it_is_then(
    kind: Kind,
) -> None:
    # A step whose hooks only narrow the tools is sent the run's conversation itself (the
    # last such step's call again, while its model, options and tools are the same);
    # a step whose hook changes anything else is sent as the hook made it, and the steps
    # after it are narrowed as before.
    other = ScriptedModel([call(kind, "add")], name="other")

    def per_step(ctx: ExecutionContext, step: StepRequest) -> StepRequest:
        step = step.replace(tools=("add",))
        if step.index == 2:
            return dataclasses.replace(step, model=other)
        if step.index == 3:
            return dataclasses.replace(step, messages=step.messages[:-1])
        if step.index == 4:
            return dataclasses.replace(
                step, options=dataclasses.replace(step.options, temperature=0.25)
            )
        return step

    model = ScriptedModel([call(kind, "add")] * 4 + [answer(kind)])
    result = await build(kind, model, [per_step]).run("2 + 3?")
    assert result.ok, result.error
    assert [len(request.messages) for request in model.requests] == [2, 5, 8, 10, 12]
    assert [len(request.messages) for request in other.requests] == [4]
    for request in (*model.requests, *other.requests):
        assert request.messages == tuple(result.messages[: len(request.messages)])
        if kind == "native":
            assert [spec.name for spec in request.options.tools] == ["add"]
        else:
            assert "- add:" in system_text(request.messages)
            assert "- mul:" not in system_text(request.messages)
    temperatures = [request.options.temperature for request in model.requests]
    assert temperatures == [None, None, 0.25, None, None]


def step_errors(step: Any) -> list[object]:
    return [e for made in step.tool_results for e in made.raw.errors if e is not None]


@KINDS
async def test_a_hook_changes_the_model_of_one_step(kind: Kind) -> None:
    other = ScriptedModel([answer(kind, "from the other model")], name="other")

    def second_step_elsewhere(ctx: ExecutionContext, step: StepRequest) -> StepRequest | None:
        return dataclasses.replace(step, model=other) if step.index == 2 else None

    model = ScriptedModel([call(kind)])
    result = await build(kind, model, [second_step_elsewhere]).run("2 + 3?")
    assert result.ok, result.error
    assert result.answer == "from the other model"
    assert len(model.requests) == 1 and len(other.requests) == 1
    assert other.requests[0].messages == result.messages[:-1]
    assert result.steps[1].output == answer(kind, "from the other model")


@KINDS
async def test_a_hook_changes_the_options_and_the_agent_keeps_its_own(kind: Kind) -> None:
    def cool(ctx: ExecutionContext, step: StepRequest) -> StepRequest:
        return dataclasses.replace(
            step, options=dataclasses.replace(step.options, temperature=0.25)
        )

    model = ScriptedModel([call(kind), answer(kind)])
    result = await build(kind, model, [cool]).run("2 + 3?")
    assert result.ok, result.error
    for request in model.requests:
        options = request.options
        assert options.temperature == 0.25
        if kind == "react":
            assert options.stop == ("<observation>",)  # the observation stop stays
        else:
            assert [spec.name for spec in options.tools] == ["add", "mul"]  # set by the agent


@KINDS
async def test_async_hooks_and_callable_objects_work(kind: Kind) -> None:
    async def shout(ctx: ExecutionContext, step: StepRequest) -> StepRequest:
        return dataclasses.replace(step, system_prompt=step.system_prompt + "\nASYNC")

    @dataclasses.dataclass(frozen=True)
    class Suffix:
        text: str

        def __call__(self, ctx: ExecutionContext, step: StepRequest) -> StepRequest:
            return dataclasses.replace(step, system_prompt=step.system_prompt + self.text)

    model = ScriptedModel([answer(kind)])
    result = await build(kind, model, [shout, Suffix("\nOBJECT")]).run("Hi")
    assert result.ok, result.error
    assert system_text(model.requests[0].messages).endswith("\nASYNC\nOBJECT")


@KINDS
async def test_hooks_run_in_order_each_seeing_the_changes_before_it(kind: Kind) -> None:
    seen: list[tuple[str, str]] = []

    def appender(letter: str) -> StepHook:
        def hook(ctx: ExecutionContext, step: StepRequest) -> StepRequest:
            seen.append((letter, step.system_prompt[-1]))
            return dataclasses.replace(step, system_prompt=step.system_prompt + letter)

        return hook

    def nothing(ctx: ExecutionContext, step: StepRequest) -> None:
        seen.append(("none", step.system_prompt[-1]))

    model = ScriptedModel([answer(kind)])
    await build(kind, model, [appender("A"), nothing, appender("B")]).run("Hi")
    assert system_text(model.requests[0].messages).endswith("AB")
    assert [name for name, _ in seen] == ["A", "none", "B"]
    assert [last for _, last in seen][1:] == ["A", "A"]  # each saw the changes before it


# -- a hook that fails ends the run ------------------------------------------------------


class Boom(Exception):
    pass


def raising(ctx: ExecutionContext, step: StepRequest) -> StepRequest | None:
    if step.index == 2:
        raise Boom("no budget left")
    return None


async def raising_async(ctx: ExecutionContext, step: StepRequest) -> StepRequest | None:
    if step.index == 2:
        raise Boom("no budget left")
    return None


def junk(ctx: ExecutionContext, step: StepRequest) -> object:
    return "a prompt" if step.index == 2 else None


async def junk_async(ctx: ExecutionContext, step: StepRequest) -> object:
    return {"system_prompt": "x"} if step.index == 2 else None


@KINDS
@pytest.mark.parametrize(
    ("hook", "expected"),
    [
        (raising, "the step hook raising raised Boom('no budget left')"),
        (raising_async, "the step hook raising_async raised Boom('no budget left')"),
        (junk, "the step hook junk returned str, not a StepRequest or None"),
        (junk_async, "the step hook junk_async returned dict, not a StepRequest or None"),
    ],
    ids=["raises", "async-raises", "junk", "async-junk"],
)
async def test_a_failing_hook_ends_the_run_as_an_error(
    kind: Kind, hook: StepHook, expected: str
) -> None:
    model = ScriptedModel([call(kind), answer(kind)])
    result = await build(kind, model, [hook]).run("2 + 3?")
    assert result.stopped_by == "error"
    assert result.error == expected
    assert len(model.requests) == 1  # no call was made with an unchecked request
    assert len(result.steps) == 1
    assert result.messages[: len(model.requests[0].messages)] == model.requests[0].messages
    assert result.messages[-2].role == "assistant"  # step 1 kept: the call and its result


@KINDS
async def test_a_hook_raising_step_hook_error_keeps_its_message(kind: Kind) -> None:
    def policy(ctx: ExecutionContext, step: StepRequest) -> StepRequest:
        raise StepHookError("policy: no model calls after 17:00")

    model = ScriptedModel([answer(kind)])
    result = await build(kind, model, [policy]).run("Hi")
    assert result.stopped_by == "error"
    assert result.error == "policy: no model calls after 17:00"
    assert model.requests == []


@KINDS
async def test_a_run_cancelled_during_its_step_hooks_makes_no_more_calls(kind: Kind) -> None:
    def cancel_at_second(ctx: ExecutionContext, step: StepRequest) -> None:
        if step.index == 2:
            ctx.cancel("the user pressed stop")

    model = ScriptedModel([call(kind), call(kind), answer(kind)])
    result = await build(kind, model, [cancel_at_second]).run("2 + 3?")
    assert result.stopped_by == "cancelled"
    assert len(model.requests) == 1
    assert result.stats.get("tool_calls") == 1


# -- StepReady ------------------------------------------------------------------------------


@KINDS
async def test_step_ready_comes_once_per_step_saying_whether_a_hook_changed_it(
    kind: Kind,
) -> None:
    def odd_steps(ctx: ExecutionContext, step: StepRequest) -> StepRequest | None:
        if step.index % 2 == 0:
            return dataclasses.replace(step)  # an equal copy: no change
        return dataclasses.replace(step, system_prompt=f"{step.system_prompt}\nstep {step.index}")

    ctx = ExecutionContext()
    events: list[StepReady] = []
    ctx.events.subscribe(StepReady, events.append)
    model = ScriptedModel([call(kind), call(kind), answer(kind)])
    result = await build(kind, model, [odd_steps]).run("2 + 3?", ctx=ctx)
    assert result.ok, result.error
    assert [event.request.index for event in events] == [1, 2, 3]
    assert [event.changed for event in events] == [True, False, True]
    assert all(event.ctx is ctx for event in events)
    for event, request in zip(events, model.requests, strict=True):
        assert event.request.model is model
        assert event.request.messages == request.messages[1:]
        if event.changed:
            assert event.request.system_prompt == system_text(request.messages)
    assert events[2].request.system_prompt.endswith("\nstep 3")


@KINDS
async def test_step_ready_comes_without_hooks_too(kind: Kind) -> None:
    ctx = ExecutionContext()
    events: list[StepReady] = []
    ctx.events.subscribe(StepReady, events.append)
    model = ScriptedModel([call(kind), answer(kind)])
    await build(kind, model).run("2 + 3?", ctx=ctx)
    assert [(event.request.index, event.changed) for event in events] == [(1, False), (2, False)]
    for event, request in zip(events, model.requests, strict=True):
        assert event.request.system_prompt == system_text(request.messages)
        assert event.request.messages == request.messages[1:]
        assert event.request.tools == ("add", "mul")


async def test_step_ready_shows_the_system_prompt_actually_sent() -> None:
    def only_add(ctx: ExecutionContext, step: StepRequest) -> StepRequest:
        return dataclasses.replace(step, tools=("add",))

    ctx = ExecutionContext()
    events: list[StepReady] = []
    ctx.events.subscribe(StepReady, events.append)
    model = ScriptedModel([answer("react")])
    await build("react", model, [only_add]).run("Hi", ctx=ctx)
    assert events[0].request.system_prompt == system_text(model.requests[0].messages)


@dataclasses.dataclass(frozen=True, slots=True)
class TaggedRequest(StepRequest):
    tag: str = ""


async def test_a_hooks_own_step_request_subclass_keeps_its_fields_when_the_listing_follows() -> (
    None
):
    # The engine rewrites the prompt's tool listing on the request a hook returned:
    # a subclass with fields of its own keeps them (and stays that subclass).
    def tagged_add(ctx: ExecutionContext, step: StepRequest) -> StepRequest:
        return TaggedRequest(
            step.index, step.system_prompt, step.messages, ("add",), step.model,
            step.options, step.task_index, protocol=step.protocol, tag="mine",
        )  # fmt: skip

    ctx = ExecutionContext()
    events: list[StepReady] = []
    ctx.events.subscribe(StepReady, events.append)
    model = ScriptedModel([answer("react")])
    await build("react", model, [tagged_add]).run("Hi", ctx=ctx)
    [ready] = events
    assert isinstance(ready.request, TaggedRequest)
    assert ready.request.tag == "mine"
    assert ready.request.system_prompt == system_text(model.requests[0].messages)
    assert "mul" not in ready.request.system_prompt


# -- prompt caching: without hooks, each request extends the one before ---------------


def noop(ctx: ExecutionContext, step: StepRequest) -> None:
    return None


def cache_script(kind: Kind) -> list[str | ScriptedReply]:
    """Tool steps, a failing call, a rejected output and two parallel calls, then the answer."""
    if kind == "react":
        parallel = (
            "<action>\n- tool: add\n  args: {a: 1, b: 2}\n- tool: mul\n  args: {a: 3, b: 4}\n"
            "</action>"
        )
        return [call(kind), "no sections here", parallel, call(kind, "nope"), answer(kind)]
    parallel_calls = ScriptedReply(
        "Two at once.",
        (
            ToolCallRequest("", "add", '{"a": 1, "b": 2}'),
            ToolCallRequest("", "mul", '{"a": 3, "b": 4}'),
        ),
    )
    return [call(kind), "   ", parallel_calls, call(kind, "nope"), answer(kind)]


def assert_each_request_extends_the_last(requests: Sequence[Sequence[Message]]) -> None:
    for before, after in itertools.pairwise(requests):
        assert len(after) > len(before)
        assert after[0] == before[0]  # the same system prompt, element-equal
        assert tuple(after[: len(before)]) == tuple(before)


@KINDS
@pytest.mark.parametrize("setup", ["no-hooks", "a-hook-that-changes-nothing", "an-observer"])
async def test_without_changes_each_request_extends_the_one_before(kind: Kind, setup: str) -> None:
    ctx = ExecutionContext()
    hooks: list[StepHook] = []
    if setup == "a-hook-that-changes-nothing":
        hooks.append(noop)
    if setup == "an-observer":
        ctx.events.subscribe(StepReady, lambda event: None)
    model = ScriptedModel(cache_script(kind))
    result = await build(kind, model, hooks).run("Compute some things.", ctx=ctx)
    assert result.ok, result.error
    assert len(model.requests) == 5
    assert_each_request_extends_the_last([request.messages for request in model.requests])
    assert all(request.options == model.requests[0].options for request in model.requests)
    assert model.requests[-1].messages == result.messages[:-1]


def assert_bodies_extend(bodies: Sequence[dict[str, Any]]) -> None:
    for before, after in itertools.pairwise(bodies):
        sent_before: list[object] = before["messages"]
        sent_after: list[object] = after["messages"]
        assert sent_after[: len(sent_before)] == sent_before
        assert {k: v for k, v in before.items() if k != "messages"} == {
            k: v for k, v in after.items() if k != "messages"
        }


async def test_on_the_wire_react_requests_extend_the_one_before(server: LoopbackServer) -> None:
    outputs = [
        "<action>\n- tool: add\n  args: {a: 1, b: 2}\n</action>",
        "<action>\n- tool: mul\n  args: {a: 3, b: 4}\n</action>",
        "<answer>3 and 12</answer>",
    ]
    server.respond_with(chat_script(outputs, chunk_size=5))
    model = OpenAIChatModel("gpt-test", api_key="k", base_url=server.openai_base_url)
    chain = YAMLToolChain().register_tool(add).register_tool(mul)
    try:
        result = await ReActAgent(model, tool_chain=chain, clock=fixed_clock).run("Compute.")
    finally:
        await model.aclose()
    assert result.ok, result.error
    bodies = [request.json() for request in server.requests]
    assert len(bodies) == 3
    assert_bodies_extend(bodies)


async def test_on_the_wire_native_requests_extend_the_one_before(server: LoopbackServer) -> None:
    def calls(*made: tuple[str, str, str]) -> dict[str, object]:
        return {
            "message": {
                "role": "assistant",
                "content": None,
                "refusal": None,
                "tool_calls": [
                    {"id": id_, "type": "function", "function": {"name": name, "arguments": args}}
                    for id_, name, args in made
                ],
            },
            "finish_reason": "tool_calls",
        }

    server.enqueue(
        openai_completion("", choice_extra=calls(("c1", "add", '{"a": 1, "b": 2}'))),
        openai_completion(
            "",
            choice_extra=calls(
                ("c2", "mul", '{"a": 3, "b": 4}'), ("c3", "add", '{"a": 5, "b": 6}')
            ),
        ),
        openai_completion("3, 12 and 11"),
    )
    model = OpenAIChatModel("gpt-test", api_key="k", base_url=server.openai_base_url)
    chain = JSONToolChain().register_tool(add).register_tool(mul)
    try:
        agent = ToolCallingAgent(model, tool_chain=chain, clock=fixed_clock)
        result = await agent.run("Compute.")
    finally:
        await model.aclose()
    assert result.ok, result.error
    assert result.answer == "3, 12 and 11"
    bodies = [request.json() for request in server.requests]
    assert len(bodies) == 3
    assert_bodies_extend(bodies)
    assert [m["role"] for m in bodies[2]["messages"]] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "tool",
    ]


def test_the_prompt_a_step_request_holds_is_read_as_its_text() -> None:
    """The engine hands hooks the agent's prompt as a `PromptLater`, made on the first
    read: every way of reading the field (and copying the request) gets the text."""
    import copy

    from agents.steps import PromptLater, raw_prompt

    made: list[str] = []
    model = ScriptedModel([])

    def make() -> str:
        made.append("made")
        return "the prompt"

    def later() -> StepRequest:
        prompt = PromptLater(make)
        return StepRequest(1, prompt, (), ("add",), model, GenerateOptions())  # type: ignore[arg-type]

    step = later()
    narrowed = step.replace(described=())
    assert isinstance(raw_prompt(narrowed), PromptLater) and not made  # not read yet
    assert narrowed.system_prompt == "the prompt" and made == ["made"]
    assert raw_prompt(narrowed) == "the prompt"
    assert step.system_prompt == "the prompt" and made == ["made"]  # made once
    other = later()
    assert other == step and "system_prompt='the prompt'" in repr(later())
    assert copy.copy(later()).system_prompt == "the prompt"
    assert dataclasses.replace(later(), index=2).system_prompt == "the prompt"
    with pytest.raises(dataclasses.FrozenInstanceError):
        step.system_prompt = "changed"  # type: ignore[misc]


def test_replace_keeps_every_field_and_a_subclass_its_own() -> None:
    """``StepRequest.replace`` changes the tools it is given and nothing else; a hook's
    own subclass keeps its type and its own fields too."""

    @dataclasses.dataclass(frozen=True)
    class Noted(StepRequest):
        note: str = ""

    model = ScriptedModel([])
    options = GenerateOptions(temperature=0.5)
    messages = (Message.text("user", "hi"),)
    step = StepRequest(3, "p", messages, ("a", "b"), model, options, 1, None, "native")
    changed = step.replace(described=("a",))
    assert type(changed) is StepRequest
    assert changed == dataclasses.replace(step, described=("a",))
    assert step.replace(tools=("b",)) == dataclasses.replace(step, tools=("b",))
    noted = Noted(3, "p", messages, ("a", "b"), model, options, 1, None, "native", "kept")
    again = noted.replace(described=("b",))
    assert type(again) is Noted and again.note == "kept" and again.described == ("b",)
