"""``run_prompt`` and every ``def_*`` in both protocols, on scripted models.

Covers: the system prompt ``def_``/``def_data``/``def_system`` make (snapshot); messages;
typed tools; a sub-agent with a typed response; a hook keeping a sliding window and
swapping variables; the three-task arithmetic list with a failed validation corrected
and a task-only tool; a dynamic task list; streams, callbacks and options; a prompt
run from inside a tool; a conversation continued.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal

import pytest
from pydantic import BaseModel
from syrupy.assertion import SnapshotAssertion

from agents import AgentResult
from agents.events import StepFinished
from agents.models import (
    GenerateOptions,
    Message,
    ScriptedModel,
    ScriptedReply,
    ToolCallRequest,
)
from agents.prompt import FunctionTool, HookInput, HookResult, Prompt, Task, run_prompt
from agents.result import StepResult
from tests.support.agent_kinds import Output, answer, call
from toolchain import ExecutionContext, Limits, Stats

Protocol = Literal["native", "text"]
PROTOCOLS = pytest.mark.parametrize("protocol", ["native", "text"])


class City(BaseModel):
    city: str


class Numbers(BaseModel):
    a: int
    b: int


# -- the system prompt and messages -------------------------------------------------------


def test_the_system_prompt_def_and_def_data_make(snapshot_md: SnapshotAssertion) -> None:
    model = ScriptedModel(["Hello"])

    def build(prompt: Prompt) -> None:
        prompt.def_system("role", "You are a helpful assistant.")
        prompt.def_system("guidelines", "Always be polite and professional.")
        name = prompt.def_("USER_NAME", "John Doe")
        data = prompt.def_data(
            "USER_DATA", {"name": "John Doe", "age": 30, "preferences": ["coding", "reading"]}
        )
        prompt.def_("NOTES", "</NOTES> is not a way out. " * 3)
        prompt.user(f"Analyze {data} for {name}.")

    result = run_prompt(build, model=model, system="You help with profiles.").run_sync()
    assert result.ok
    system = model.requests[0].messages[0].text_content()
    assert system == snapshot_md
    assert model.requests[0].messages[1].text_content() == "Analyze <USER_DATA> for <USER_NAME>."


@PROTOCOLS
def test_messages_keep_their_order_and_the_last_is_the_user_turn(protocol: Protocol) -> None:
    model = ScriptedModel([answer(protocol, "Paris")])

    def build(prompt: Prompt) -> None:
        prompt.def_message("user", "Hello!")
        prompt.def_message("assistant", "Hi there! How can I help?")
        prompt.user("Capital of France?")

    result = run_prompt(build, model=model, protocol=protocol).run_sync()
    assert result.answer == "Paris"
    sent = [(m.role, m.text_content()) for m in model.requests[0].messages[1:]]
    assert sent == [
        ("user", "Hello!"),
        ("assistant", "Hi there! How can I help?"),
        ("user", "Capital of France?"),
    ]


def test_a_prompt_without_a_user_turn_is_a_clear_error() -> None:
    run = run_prompt(lambda prompt: None, model=ScriptedModel([]))
    with pytest.raises(ValueError, match=r"must end with a user message: call prompt.user"):
        run.run_sync()


def test_budgets_cut_text_and_sample_data() -> None:
    prompt = Prompt()
    prompt.def_("LOG", "line\n" * 5000, budget_tokens=50, keep="tail")
    prompt.def_data("ROWS", list(range(1000)), budget_tokens=60, sampling="tail")
    log, rows = prompt.definitions["LOG"], prompt.definitions["ROWS"]
    assert log.trimmed and log.text.startswith("[… ") and log.text.endswith("line\n")
    assert rows.trimmed and rows.text.splitlines()[-2] == "- 999"
    assert rows.text.endswith("items left out (the last are shown)")
    with pytest.raises(ValueError, match="not a usable name"):
        prompt.def_("2 bad", "x")


# -- tools and sub-agents --------------------------------------------------------------


@PROTOCOLS
def test_a_typed_tool(protocol: Protocol) -> None:
    model = ScriptedModel([call(protocol, "weather", city="Oslo"), answer(protocol, "Sunny")])
    seen: list[City] = []

    def weather(input: City) -> str:
        seen.append(input)
        return f"Sunny in {input.city}"

    def build(prompt: Prompt) -> None:
        prompt.def_tool("weather", "Weather in a city.", City, weather)
        prompt.user("Weather in Oslo?")

    run = run_prompt(build, model=model, protocol=protocol)
    result = run.run_sync()
    assert result.answer == "Sunny" and seen == [City(city="Oslo")]
    calls = run_sync_list(run.tool_calls())
    assert [(c.name, c.args) for c in calls] == [("weather", {"city": "Oslo"})]


class Verdict(BaseModel):
    topic: str
    safe: bool


@PROTOCOLS
def test_a_sub_agent_with_a_typed_response(protocol: Protocol) -> None:
    def parent(messages: Sequence[Message]) -> Output:
        tools = [m for m in messages if m.role == "tool" or "<researcher>" in m.text_content()]
        if not tools:
            return call(protocol, "researcher", topic="kites")
        return answer(protocol, "Kites are safe.")

    def child(messages: Sequence[Message]) -> Output:
        system = messages[0].text_content()
        assert system.startswith("You are a research specialist.")
        assert messages[-1].text_content() == "Research the topic: kites"
        if protocol == "native":
            return ScriptedModel.call("final_answer", {"topic": "kites", "safe": True})
        return '<answer>{"topic": "kites", "safe": true}</answer>'

    child_model = ScriptedModel(child)

    def research(args: City, prompt: Prompt) -> None:
        raise AssertionError("not used")

    class Topic(BaseModel):
        topic: str

    def build_child(args: Topic, prompt: Prompt) -> None:
        prompt.user(f"Research the topic: {args.topic}")

    def build(prompt: Prompt) -> None:
        prompt.def_agent(
            "researcher",
            "Research a topic in depth.",
            Topic,
            build_child,
            model=child_model,
            system="You are a research specialist.",
            response_model=Verdict,
            protocol=protocol,
        )
        prompt.user("Are kites safe?")

    ctx = ExecutionContext()
    run = run_prompt(build, model=ScriptedModel(parent), protocol=protocol, ctx=ctx)
    result = run.run_sync()
    assert result.ok and result.answer == "Kites are safe."
    [output] = run_sync_list(run.tool_results())
    assert getattr(output, "output", None) == Verdict(topic="kites", safe=True)
    assert ctx.stats.get(Stats.STEPS) >= 2  # the child's step counted in the parent
    assert len(child_model.requests) == 1
    total = run_sync_value(run.usage())
    assert total.input_tokens > result.usage.input_tokens > 0  # the child's tokens added


def test_a_prompt_runs_from_inside_a_tool() -> None:
    inner_model = ScriptedModel(["inner says hi"])

    async def ask(input: City, ctx: ExecutionContext) -> str:
        def build(prompt: Prompt) -> None:
            prompt.user(f"Say hi to {input.city}")

        return await run_prompt(build, model=inner_model, ctx=ctx.child("inner")).text()

    def build(prompt: Prompt) -> None:
        prompt.def_tool("ask", "Ask the inner model.", City, ask)
        prompt.user("Go")

    outer = ScriptedModel([ScriptedModel.call("ask", city="Oslo"), "done"])
    run = run_prompt(build, model=outer)
    assert run.run_sync().ok
    assert getattr(run_sync_list(run.tool_results())[0], "output", None) == "inner says hi"


# -- hooks -----------------------------------------------------------------------------------


@PROTOCOLS
def test_a_hook_keeps_a_sliding_window_and_changes_variables(protocol: Protocol) -> None:
    seen: list[HookInput] = []

    def window(given: HookInput) -> HookResult:
        seen.append(given)
        return HookResult(
            messages=given.messages[-3:],
            variables={"STEP": str(given.step_number)},
            active_tools=["add"],
        )

    def add(input: Numbers) -> int:
        return input.a + input.b

    replies = [call(protocol, "add", a=i, b=1) for i in range(4)] + [answer(protocol, "ok")]
    model = ScriptedModel(replies)

    def build(prompt: Prompt) -> None:
        prompt.def_("STEP", "none yet")
        prompt.def_tool("add", "Add two numbers.", Numbers, add)
        prompt.def_tool("mul", "Multiply two numbers.", Numbers, lambda i: i.a * i.b)
        prompt.def_hook(window)
        prompt.user("Count")

    result = run_prompt(build, model=model, protocol=protocol).run_sync()
    assert result.ok
    assert [s.step_number for s in seen] == [0, 1, 2, 3, 4]
    assert seen[0].variables["STEP"].text == "none yet"
    assert seen[2].variables["STEP"].text == "1"  # the hook's variables last
    assert len(seen[3].steps) == 3 and isinstance(seen[3].steps[0], StepResult)
    for request in model.requests:
        assert len(request.messages) <= 4  # system + at most three
    assert "<STEP>\n4\n</STEP>" in model.requests[4].messages[0].text_content()
    if protocol == "native":
        assert [s.name for s in model.requests[1].options.tools] == ["add"]
    assert len(result.messages) > 8  # the run keeps the whole conversation


# -- task lists ------------------------------------------------------------------------------


def _number(result: str) -> int | None:
    try:
        return int(result.strip())
    except ValueError:
        return None


@PROTOCOLS
def test_the_three_task_arithmetic_list(protocol: Protocol) -> None:
    def check(expected: int, hint: str) -> Any:
        def validation(result: str) -> str | None:
            got = _number(result)
            return None if got == expected else f"Incorrect. Expected {hint}, got {result}"

        return validation

    def calculator(input: Numbers) -> str:
        return str(input.a * input.b)

    def extend(prompt: Prompt, messages: Sequence[Message]) -> None:
        prompt.def_tool("calculator", "Perform multiplication.", Numbers, calculator)
        prompt.def_("ALLOWED_OPERATIONS", "multiplication only")
        prompt.def_system("instructions", "Use the calculator tool for multiplication.")

    tasks = [
        Task("Calculate 5 + 3", validation=check(8, "8")),
        Task("Multiply the previous result by 2", validation=check(16, "16"), extend=extend),
        Task("Subtract 6 from the previous result", validation=check(10, "10")),
    ]
    model = ScriptedModel(
        [
            call(protocol, "finish_task", result="9"),  # wrong: corrected after the feedback
            call(protocol, "finish_task", result="8"),
            call(protocol, "calculator", a=8, b=2),
            call(protocol, "finish_task", result="16"),
            call(protocol, "finish_task", result="10"),
        ]
    )

    def build(prompt: Prompt) -> None:
        prompt.def_task_list(tasks)
        prompt.user("Complete all tasks using the finish_task tool.")

    result = run_prompt(build, model=model, protocol=protocol).run_sync()
    assert result.ok, result.error
    assert result.answer == (
        "Calculate 5 + 3: 8\nMultiply the previous result by 2: 16\n"
        "Subtract 6 from the previous result: 10"
    )
    assert len(model.requests) == 5  # the run ends with the last task, no extra call
    texts = [r.messages[-1].text_content() for r in model.requests]
    assert "Incorrect. Expected 8, got 9" in texts[1]
    second = model.requests[2]
    assert "Now: task 2: Multiply the previous result by 2" in _all_text(second.messages)
    assert "Completed:\n- [1] Calculate 5 + 3: 8" in _all_text(second.messages)
    assert "Use the calculator tool" in second.messages[0].text_content()
    assert "<ALLOWED_OPERATIONS>" in second.messages[0].text_content()
    assert "9" not in _all_text(second.messages[1:])  # the first task's work is condensed
    third_task = model.requests[4]
    assert "Use the calculator tool" not in third_task.messages[0].text_content()
    if protocol == "native":
        assert "calculator" in [s.name for s in second.options.tools]
        assert "calculator" not in [s.name for s in third_task.options.tools]


@PROTOCOLS
def test_a_dynamic_task_list(protocol: Protocol) -> None:
    steps: list[Output] = [
        call(protocol, "create_task", description=f"step {n}") for n in (1, 2, 3)
    ]
    for n in (1, 2, 3):
        steps += [
            call(protocol, "start_task", task_id=str(n)),
            call(protocol, "complete_task", task_id=str(n), result=f"did {n}"),
        ]
    steps.insert(3, call(protocol, "delete_task", task_id="9"))  # unknown: an error, then on
    model = ScriptedModel(steps)

    def build(prompt: Prompt) -> None:
        prompt.def_dynamic_task_list()
        prompt.user("Plan and do three steps.")

    result = run_prompt(build, model=model, protocol=protocol).run_sync()
    assert result.ok and result.answer == "step 1: did 1\nstep 2: did 2\nstep 3: did 3"
    assert "no task '9'; the task ids are: 1, 2, 3" in _all_text(model.requests[4].messages)
    late = _all_text(model.requests[-1].messages)
    assert "Completed:\n- [1] step 1: did 1\n- [2] step 2: did 2" in late
    assert "In progress:\n- [3] step 3" in late


# -- streams, callbacks, options, conversations ------------------------------------------------


def test_streams_callbacks_and_options() -> None:
    model = ScriptedModel(["Hello there"])
    chunks: list[str] = []
    finished: list[AgentResult[Any]] = []
    steps: list[StepResult] = []

    def build(prompt: Prompt) -> None:
        prompt.user("Hi")

    run = run_prompt(
        build,
        model=model,
        temperature=0.2,
        max_output_tokens=64,
        seed=7,
        stop_sequences=["END"],
        tool_choice="none",
        top_p=0.9,
        top_k=40,
        presence_penalty=0.1,
        frequency_penalty=0.2,
        headers={"X-Trace": "abc"},
        max_retries=1,
        on_chunk=lambda event: chunks.append(getattr(event, "text", "")),
        on_step=steps.append,
        on_finish=finished.append,
    )

    async def read() -> tuple[list[str], str]:
        streamed = [piece async for piece in run.text_stream()]
        return streamed, await run.text()

    streamed, text = run_sync_value(read())
    assert "".join(streamed) == text == "Hello there"
    assert "".join(chunks) == "Hello there" and len(steps) == 1 and finished[0].ok
    options = model.requests[0].options
    assert options == GenerateOptions(
        stop=("END",),
        temperature=0.2,
        max_tokens=64,
        seed=7,
        tool_choice="none",
        top_p=0.9,
        top_k=40,
        presence_penalty=0.1,
        frequency_penalty=0.2,
        headers={"X-Trace": "abc"},
        max_retries=1,
    )


def test_cancellation_and_errors_reach_the_run_and_its_callbacks() -> None:
    ctx = ExecutionContext()

    def slow(input: Numbers) -> int:
        ctx.cancel("the user pressed stop")
        return input.a

    errors: list[str] = []

    def build(prompt: Prompt) -> None:
        prompt.def_tool("slow", "Slow.", Numbers, slow)
        prompt.user("Go")

    model = ScriptedModel([ScriptedModel.call("slow", a=1, b=2), "never"])
    cancelled = run_prompt(build, model=model, ctx=ctx, on_error=errors.append).run_sync()
    assert cancelled.stopped_by == "cancelled" and len(model.requests) == 1

    def broken(messages: Sequence[Message]) -> str:
        raise RuntimeError("model down")

    failed = run_prompt(
        lambda p: p.user("Hi"), model=ScriptedModel(broken), on_error=errors.append
    ).run_sync()
    assert failed.stopped_by == "error" and errors and "model down" in errors[0]


def test_a_stop_condition_ends_the_run() -> None:
    def add(input: Numbers) -> int:
        return input.a + input.b

    model = ScriptedModel([ScriptedModel.call("add", a=1, b=2)] * 5)

    def build(prompt: Prompt) -> None:
        prompt.def_tool("add", "Add.", Numbers, add)
        prompt.user("Add forever")

    result = run_prompt(build, model=model, stop_when=lambda step: step.index >= 2).run_sync()
    assert result.stopped_by == "paused" and result.paused == "the stop condition was met"
    assert len(result.steps) == 2


@PROTOCOLS
def test_a_conversation_continues(protocol: Protocol) -> None:
    first = run_prompt(
        lambda p: p.user("My name is Ada."),
        model=ScriptedModel([answer(protocol, "Hi Ada")]),
        protocol=protocol,
    ).run_sync()
    model = ScriptedModel([answer(protocol, "You are Ada")])
    second = run_prompt(
        lambda p: p.user("Who am I?"), model=model, protocol=protocol, history=first.messages
    ).run_sync()
    assert second.answer == "You are Ada"
    texts = [m.text_content() for m in model.requests[0].messages[1:]]
    assert texts[0] == "My name is Ada." and texts[-1] == "Who am I?"


def test_every_reader_sees_the_same_single_run() -> None:
    model = ScriptedModel(["once"])
    run = run_prompt(lambda p: p.user("Hi"), model=model)

    async def read() -> tuple[str, int, str]:
        events = [event async for event in run.events()]
        return await run.text(), len(events), (await run.usage()).__class__.__name__

    text, count, usage = run_sync_value(read())
    assert text == "once" and count >= 2 and usage == "Usage"
    assert len(model.requests) == 1


# -- helpers ------------------------------------------------------------------------------------


def _all_text(messages: Sequence[Message]) -> str:
    return "\n".join(m.text_content() for m in messages)


def run_sync_value(work: Any) -> Any:
    from toolchain.runtime import run_sync

    return run_sync(work)


def run_sync_list(work: Any) -> list[Any]:
    return list(run_sync_value(work))


_ = StepFinished  # imported for readers: hooks see agents.StepResult records


@PROTOCOLS
def test_plugins_bring_extensions_and_definitions(protocol: Protocol) -> None:
    from toolchain.variables import ToolVariables

    received: list[object] = []

    def weather(input: City) -> dict[str, object]:
        return {"city": input.city, "temp": 21}

    def report(input: Numbers) -> str:
        received.append(input)
        return f"{input.a}/{input.b}"

    def house_style(prompt: Prompt) -> None:
        prompt.def_system("style", "Answer in one line.")

    model = ScriptedModel(
        [
            call(protocol, "weather", city="Oslo"),
            call(protocol, "report", a="$weather_1.temp", b=3),
            answer(protocol, "$report_1"),
        ]
    )

    def build(prompt: Prompt) -> None:
        prompt.def_tool("weather", "Weather.", City, weather)
        prompt.def_tool("report", "Report.", Numbers, report)
        prompt.user("Report Oslo")

    run = run_prompt(build, model=model, protocol=protocol, plugins=[ToolVariables(), house_style])
    result = run.run_sync()
    assert result.answer == "21/3" and received == [Numbers(a=21, b=3)]
    assert "<style>\nAnswer in one line.\n</style>" in model.requests[0].messages[0].text_content()


class WriteIn(BaseModel):
    path: str
    content: str


class ReadIn(BaseModel):
    path: str


@PROTOCOLS
def test_the_composite_file_tool_with_one_failing_sub_call(protocol: Protocol) -> None:
    from toolchain import tool

    files: dict[str, str] = {}

    @tool
    def write(path: str, content: str) -> dict[str, bool]:
        """Write content to a file."""
        files[path] = content
        return {"success": True}

    @tool
    def append(path: str, content: str) -> dict[str, bool]:
        """Append content to a file."""
        files[path] = files.get(path, "") + content
        return {"success": True}

    @tool
    def read(path: str) -> dict[str, str]:
        """Read content from a file."""
        if path not in files:
            from toolchain import ToolError

            raise ToolError(f"no file {path}")
        return {"content": files[path]}

    calls = [
        {"name": "write", "args": {"path": "/tmp/t.txt", "content": "Hello"}},
        {"name": "read", "args": {"path": "/tmp/missing.txt"}},
        {"name": "append", "args": {"path": "/tmp/t.txt", "content": " World"}},
        {"name": "read", "args": {"path": "/tmp/t.txt"}},
    ]
    model = ScriptedModel([call(protocol, "file", calls=calls), answer(protocol, "done")])

    def build(prompt: Prompt) -> None:
        prompt.def_tool("file", "File system operations", [write, append, read])
        prompt.user("Write Hello World to /tmp/t.txt and read it back.")

    run = run_prompt(build, model=model, protocol=protocol)
    assert run.run_sync().ok
    [outcome] = run_sync_list(run.tool_results())
    assert getattr(outcome, "output", None) == {
        "results": [
            {"name": "write", "result": {"success": True}},
            {"name": "read", "error": "no file /tmp/missing.txt"},
            {"name": "append", "result": {"success": True}},
            {"name": "read", "result": {"content": "Hello World"}},
        ]
    }


# -- review fixes ---------------------------------------------------------------------------


@PROTOCOLS
def test_variables_a_hook_changed_stay_in_the_system_prompt(protocol: Protocol) -> None:
    def once(given: HookInput) -> HookResult | None:
        if given.step_number == 0:
            return HookResult(variables={"MOOD": "sunny"})
        return None

    def also(given: HookInput) -> HookResult | None:
        if given.step_number == 0:
            return HookResult(variables={"PLACE": given.variables["PLACE"].text + "!"})
        return None

    model = ScriptedModel([call(protocol, "add", a=1, b=2), answer(protocol, "ok")])

    def build(prompt: Prompt) -> None:
        prompt.def_("MOOD", "grey")
        prompt.def_("PLACE", "Oslo")
        prompt.def_tool("add", "Add two numbers.", Numbers, lambda i: i.a + i.b)
        prompt.def_hook(once)
        prompt.def_hook(also)
        prompt.user("Go")

    assert run_prompt(build, model=model, protocol=protocol).run_sync().ok
    first, second = (r.messages[0].text_content() for r in model.requests)
    assert "<MOOD>\nsunny\n</MOOD>" in first and "<PLACE>\nOslo!\n</PLACE>" in first
    assert "<MOOD>\nsunny\n</MOOD>" in second  # from this step on, not for one step
    assert "<PLACE>\nOslo!\n</PLACE>" in second
    if protocol == "text":  # two hooks changing variables keep the rest of the prompt
        assert all("<available_tools>" in text and "- add:" in text for text in (first, second))


@PROTOCOLS
def test_a_task_only_tool_is_listed_beside_the_tasks_system_part(protocol: Protocol) -> None:
    def extend(prompt: Prompt, messages: Sequence[Message]) -> None:
        prompt.def_tool("calculator", "Perform multiplication.", Numbers, lambda i: i.a * i.b)
        prompt.def_system("instructions", "Use the calculator tool for multiplication.")

    model = ScriptedModel(
        [
            call(protocol, "finish_task", result="8"),
            call(protocol, "calculator", a=8, b=2),
            call(protocol, "finish_task", result="16"),
        ]
    )

    def build(prompt: Prompt) -> None:
        prompt.def_task_list([Task("Calculate 5 + 3"), Task("Double it", extend=extend)])
        prompt.user("Do the tasks.")

    assert run_prompt(build, model=model, protocol=protocol).run_sync().ok
    first, second, third = (r.messages[0].text_content() for r in model.requests)
    assert "Use the calculator tool" in second
    if protocol == "text":
        assert "- calculator: Perform multiplication." not in first
        assert "- calculator: Perform multiplication." in second
        assert "- calculator: Perform multiplication." in third
        assert "- finish_task:" in second
    else:
        assert "calculator" in [s.name for s in model.requests[1].options.tools]


@PROTOCOLS
def test_concurrent_finish_task_calls_finish_tasks_one_at_a_time(protocol: Protocol) -> None:
    import asyncio

    def check(expected: str) -> Any:
        async def validation(result: str) -> str | None:
            await asyncio.sleep(0.01)
            return None if result == expected else f"expected {expected}"

        return validation

    tasks = [Task(f"Say {n}", validation=check(str(n))) for n in (1, 2, 3)]
    if protocol == "text":
        both = json.dumps(
            [
                {"tool": "finish_task", "args": {"result": "1"}},
                {"tool": "finish_task", "args": {"result": "2"}},
            ]
        )
        first: Output = f"<action>{both}</action>"
    else:
        first = ScriptedReply(
            tool_calls=(
                ToolCallRequest("a", "finish_task", '{"result": "1"}'),
                ToolCallRequest("b", "finish_task", '{"result": "2"}'),
            )
        )
    model = ScriptedModel([first, call(protocol, "finish_task", result="3")])

    def build(prompt: Prompt) -> None:
        prompt.def_task_list(tasks)
        prompt.user("Do the tasks.")

    result = run_prompt(build, model=model, protocol=protocol).run_sync()
    assert result.ok, result.error
    assert result.answer == "Say 1: 1\nSay 2: 2\nSay 3: 3"


def test_a_raising_callback_neither_ends_nor_changes_the_run(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def boom(event: object) -> None:
        raise RuntimeError("callback bug")

    model = ScriptedModel(["Hello there"], chunk_size=100)  # one chunk
    run = run_prompt(lambda p: p.user("Hi"), model=model, on_chunk=boom, on_finish=boom)
    result = run.run_sync()
    assert result.ok and result.answer == "Hello there"
    assert "callback bug" in caplog.text
    assert run.ctx.stats.get(Stats.OBSERVER_ERRORS) == 2  # counted as observers' errors

    failing = run_prompt(lambda p: p.user("Hi"), model=ScriptedModel([]), on_error=boom).run_sync()
    assert failing.stopped_by == "error"


@PROTOCOLS
def test_tool_search_beside_a_task_only_tool_and_a_hook_narrowing_tools(protocol: Protocol) -> None:
    from toolchain.discovery import KeywordSearch, ToolSearch

    def extend(prompt: Prompt, messages: Sequence[Message]) -> None:
        prompt.def_tool("calculator", "Perform multiplication.", Numbers, lambda i: i.a * i.b)

    def narrow(given: HookInput) -> HookResult | None:
        if given.step_number == 2:  # the last step: finish_task only
            return HookResult(active_tools=["finish_task"])
        return None

    hidden = FunctionTool("send_email", "Send an email.", City, lambda i: "sent")
    search = ToolSearch([hidden], backend=KeywordSearch(), defer=True)
    model = ScriptedModel(
        [
            call(protocol, "finish_task", result="8"),
            call(protocol, "calculator", a=8, b=2),
            call(protocol, "finish_task", result="16"),
        ]
    )

    def build(prompt: Prompt) -> None:
        prompt.def_task_list([Task("Calculate 5 + 3"), Task("Double it", extend=extend)])
        prompt.def_hook(narrow)
        prompt.user("Do the tasks.")

    result = run_prompt(build, model=model, protocol=protocol, plugins=[search]).run_sync()
    assert result.ok, result.error
    if protocol == "native":
        shown = [[s.name for s in r.options.tools] for r in model.requests]
    else:
        shown = [
            [
                n
                for n in ("tool_search", "finish_task", "calculator", "send_email")
                if f"- {n}:" in r.messages[0].text_content()
            ]
            for r in model.requests
        ]
    assert sorted(shown[0]) == ["finish_task", "tool_search"]
    assert sorted(shown[1]) == ["calculator", "finish_task", "tool_search"]
    assert shown[2] == ["finish_task"]  # told only of the tools it may call


def test_cancelling_run_ctx_before_the_run_starts_cancels_it() -> None:
    model = ScriptedModel(["never"])
    run = run_prompt(lambda p: p.user("Hi"), model=model, limits=Limits(max_steps=3))
    run.ctx.cancel("changed my mind")  # PromptRun has no cancel(): its ctx is the way
    result = run.run_sync()
    assert result.stopped_by == "cancelled" and model.requests == []
    assert run.ctx.limits.max_steps == 3 and run.ctx.name == "prompt"


@PROTOCOLS
def test_a_task_created_after_a_deletion_gets_an_id_of_its_own(protocol: Protocol) -> None:
    steps: list[Output] = [
        call(protocol, "create_task", description=f"step {n}") for n in (1, 2, 3)
    ]
    steps += [
        call(protocol, "delete_task", task_id="2"),
        call(protocol, "create_task", description="step 4"),
        call(protocol, "complete_task", task_id="1", result="did 1"),
        call(protocol, "complete_task", task_id="3", result="did 3"),
        call(protocol, "complete_task", task_id="4", result="did 4"),
    ]
    model = ScriptedModel(steps)

    def build(prompt: Prompt) -> None:
        prompt.def_dynamic_task_list()
        prompt.user("Plan and do the steps.")

    result = run_prompt(build, model=model, protocol=protocol).run_sync()
    assert result.ok, result.error
    assert result.answer == "step 1: did 1\nstep 3: did 3\nstep 4: did 4"


def test_a_context_reused_for_a_new_run_starts_clean() -> None:
    ctx = ExecutionContext()
    ctx.pause("an earlier run paused")
    ctx.finish("an earlier answer")
    result = run_prompt(lambda p: p.user("Hi"), model=ScriptedModel(["fresh"]), ctx=ctx).run_sync()
    assert result.ok and result.answer == "fresh"


def test_a_tool_function_with_a_defaulted_second_parameter_gets_no_context() -> None:
    def greet(input: City, greeting: str = "Hello") -> str:
        return f"{greeting}, {input.city}"

    model = ScriptedModel([ScriptedModel.call("greet", city="Oslo"), "ok"])

    def build(prompt: Prompt) -> None:
        prompt.def_tool("greet", "Greet a city.", City, greet)
        prompt.user("Greet Oslo")

    run = run_prompt(build, model=model)
    assert run.run_sync().ok
    assert getattr(run_sync_list(run.tool_results())[0], "output", None) == "Hello, Oslo"


# -- task lists end when every task is done (issue 17, item 6) --------------------------------


@PROTOCOLS
def test_a_plain_reply_with_tasks_left_gets_feedback_and_the_list_goes_on(
    protocol: Protocol,
) -> None:
    checked: list[str] = []

    def check(expected: int) -> Any:
        def validation(result: str) -> str | None:
            checked.append(result)
            return None if _number(result) == expected else f"Expected {expected}, got {result}"

        return validation

    tasks = [Task("Calculate 5 + 3", validation=check(8)), Task("Double it", validation=check(16))]
    model = ScriptedModel(
        [
            answer(protocol, "8"),  # a plain reply: not a finished task
            call(protocol, "finish_task", result="8"),
            answer(protocol, "16, and I am done."),  # again, with task 2 left
            call(protocol, "finish_task", result="16"),
        ]
    )

    def build(prompt: Prompt) -> None:
        prompt.def_task_list(tasks)
        prompt.user("Complete all tasks using the finish_task tool.")

    result = run_prompt(build, model=model, protocol=protocol).run_sync()
    assert result.ok and result.stopped_by == "answer", result.error
    assert result.answer == "Calculate 5 + 3: 8\nDouble it: 16"
    assert checked == ["8", "16"]  # each validation ran
    assert len(model.requests) == 4
    told = model.requests[1].messages[-1].text_content()
    assert "Not finished" in told
    assert "[1] Calculate 5 + 3 (in progress), [2] Double it (pending)" in told
    assert "finish_task" in told
    assert "[2] Double it (in progress)" in model.requests[3].messages[-1].text_content()
    assert [i.feedback != "" for i in result.steps] == [True, False, True, False]


@PROTOCOLS
def test_a_dynamic_list_holds_plain_replies_until_every_task_is_completed(
    protocol: Protocol,
) -> None:
    model = ScriptedModel(
        [
            call(protocol, "create_task", description="step 1"),
            call(protocol, "create_task", description="step 2"),
            call(protocol, "complete_task", task_id="1", result="did 1"),
            answer(protocol, "All done!"),  # step 2 is still pending
            call(protocol, "complete_task", task_id="2", result="did 2"),
        ]
    )

    def build(prompt: Prompt) -> None:
        prompt.def_dynamic_task_list()
        prompt.user("Plan two steps and do them.")

    result = run_prompt(build, model=model, protocol=protocol).run_sync()
    assert result.ok and result.answer == "step 1: did 1\nstep 2: did 2", result.error
    told = model.requests[4].messages[-1].text_content()
    assert "Not finished" in told and "[2] step 2 (pending)" in told
    assert "[1] step 1" not in told  # a completed task is not named as left
    assert "complete_task" in told


@PROTOCOLS
@pytest.mark.parametrize("kind", ["fixed", "dynamic"])
def test_a_model_that_only_replies_in_text_ends_at_a_limit_named_for_the_tasks(
    protocol: Protocol, kind: str
) -> None:
    def build(prompt: Prompt) -> None:
        if kind == "fixed":
            prompt.def_task_list([Task("Calculate 5 + 3"), Task("Double it")])
        else:
            prompt.def_dynamic_task_list()
        prompt.user("Do the tasks.")

    def model() -> ScriptedModel:
        # A plan must exist before a dynamic list holds a reply back.
        plan = [call(protocol, "create_task", description="step 1")] if kind == "dynamic" else []
        return ScriptedModel([*plan, *(answer(protocol, f"It is {n}.") for n in range(10))])

    result = run_prompt(build, model=model(), protocol=protocol).run_sync()
    assert not result.ok and result.answer is None
    assert result.stopped_by == "limit" and result.limit == "tasks_pending"
    held = [i for i in result.steps if "Not finished" in i.feedback]
    assert len(held) == 4  # max_consecutive_parse_errors=3 allows three, the fourth ends it
    strict = Limits(max_consecutive_parse_errors=1)
    result = run_prompt(build, model=model(), protocol=protocol, limits=strict).run_sync()
    assert result.limit == "tasks_pending"
    assert sum("Not finished" in i.feedback for i in result.steps) == 2


@pytest.mark.parametrize("dynamic", [False, True], ids=["fixed", "dynamic"])
@pytest.mark.parametrize("protocol", ["native", "text"])
def test_a_typed_answer_is_written_after_the_last_task(
    dynamic: bool, protocol: Literal["native", "text"]
) -> None:
    """The summary is no typed answer: the last task done asks the model for its answer."""

    class Total(BaseModel):
        total: int

    calls = (
        [("create_task", {"description": "Add 5 and 3"}),
         ("complete_task", {"task_id": "1", "result": "8"})]
        if dynamic
        else [("finish_task", {"result": "8"})]
    )  # fmt: skip
    turns: list[Output]
    if protocol == "native":
        turns = [ScriptedModel.call(name, args) for name, args in calls]
        turns.append(ScriptedModel.call("final_answer", {"total": 8}))
    else:
        turns = [f"<action>{json.dumps({'tool': n, 'args': a})}</action>" for n, a in calls]
        turns.append('<answer>{"total": 8}</answer>')
    model = ScriptedModel(turns)

    def build(prompt: Prompt) -> None:
        if dynamic:
            prompt.def_dynamic_task_list()
        else:
            prompt.def_task_list([Task("Calculate 5 + 3")])
        prompt.user("Do the task.")

    run = run_prompt(build, model=model, response_model=Total, protocol=protocol)
    result = run.run_sync()
    assert (result.stopped_by, result.answer) == ("answer", Total(total=8))
    told = [m.text_content() for m in model.requests[-1].messages[-2:]]
    assert any("All tasks are completed. Now give your final answer." in t for t in told)


def test_a_typed_final_answer_waits_for_the_tasks_too() -> None:
    class Total(BaseModel):
        total: int

    model = ScriptedModel([ScriptedModel.call("final_answer", {"total": 8}) for _ in range(5)])

    def build(prompt: Prompt) -> None:
        prompt.def_task_list([Task("Calculate 5 + 3")])
        prompt.user("Do the task.")

    result = run_prompt(build, model=model, response_model=Total).run_sync()
    assert result.stopped_by == "limit" and result.limit == "tasks_pending"
    reply = model.requests[1].messages[-1]
    assert reply.role == "tool" and reply.text_content().startswith(
        "Error: the answer was not taken: Not finished"
    )
    assert len(model.requests) == 4
