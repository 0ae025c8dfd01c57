"""The Extension seam: tools, hooks, observation rewrites, prompt sections and text filters,
on a bare chain and on both agents."""

from __future__ import annotations

import asyncio
import dataclasses
import re
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from agents import (
    ModelTextDelta,
    ReActAgent,
    RunEvent,
    RunFinished,
    StepRequest,
    ToolCallingAgent,
)
from agents.models import ScriptedModel
from formats import XMLFormat
from toolchain import (
    ContentPart,
    ExecutionContext,
    Extension,
    ImageContent,
    JSONToolChain,
    StateKey,
    TextContent,
    Tool,
    ToolCall,
    ToolHook,
    ToolResult,
    YAMLToolChain,
    installed_extensions,
    tool,
)

SEEN = StateKey[list[str]]("seen")


@tool
def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


@tool
def echo(text: str) -> str:
    """Return the text as it is."""
    return text


class Tagger(ToolHook):
    """Rewrites what the model sees of each result; raw keeps the real output."""

    def rewrite_observation(
        self, ctx: ExecutionContext, call: ToolCall, result: ToolResult[Any], text: str
    ) -> str:
        ctx.state.get(SEEN, list[str]()).append(call.name)
        return f"[{call.name}] {text}"


class Recorder(Extension):
    """A tool, a hook, a prompt section each step and a filter that swaps 'RAW' for 'cooked'."""

    name = "recorder"

    def __init__(self) -> None:
        self.installs = 0

    def tools(self) -> Sequence[Tool[Any, Any]]:
        return [shout]

    def install(self, ctx: ExecutionContext) -> None:
        self.installs += 1
        ctx.state.set(SEEN, [])
        ctx.hooks.add(Tagger())

    def prompt_section(self, ctx: ExecutionContext) -> str:
        return f"results so far: {len(ctx.state.get(SEEN, list[str]()))}"

    def text_filter(self, ctx: ExecutionContext) -> Swap:
        return Swap()


class Swap:
    """Replaces 'RAW' with 'cooked', even when the word is split across chunks."""

    def __init__(self) -> None:
        self.pending = ""

    def feed(self, chunk: str) -> str:
        text = (self.pending + chunk).replace("RAW", "cooked")
        keep = next((n for n in (2, 1) if text.endswith("RAW"[:n])), 0)
        self.pending = text[len(text) - keep :] if keep else ""
        return text[: len(text) - keep] if keep else text

    def flush(self) -> str:
        rest, self.pending = self.pending, ""
        return rest


def test_a_bare_chain_registers_the_tools_and_installs_once_per_context() -> None:
    recorder = Recorder()
    chain = JSONToolChain(extensions=[recorder]).register_tool(echo)
    assert list(chain.tools) == ["shout", "echo"]
    ctx = ExecutionContext()
    first = chain.execute_sync(ctx, '{"tool": "shout", "args": {"text": "hi"}}', XMLFormat())
    chain.execute_sync(ctx, '{"tool": "echo", "args": {"text": "yo"}}', XMLFormat())
    assert recorder.installs == 1 and installed_extensions(ctx) == (recorder,)
    assert first.observations[0].text == "[shout] HI"
    assert first.raw.output(0, str) == "HI"  # the real output, for the program
    assert ctx.state.get(SEEN) == ["shout", "echo"]
    chain.execute_sync(ExecutionContext(), '{"tool": "echo", "args": {"text": "x"}}', XMLFormat())
    assert recorder.installs == 2  # a new run, a new install


class Broken(ToolHook):
    def rewrite_observation(
        self, ctx: ExecutionContext, call: ToolCall, result: ToolResult[Any], text: str
    ) -> str:
        raise RuntimeError("boom")


class Junk(ToolHook):
    def rewrite_observation(
        self, ctx: ExecutionContext, call: ToolCall, result: ToolResult[Any], text: str
    ) -> str:
        return 42  # type: ignore[return-value]


class BadPair(ToolHook):
    def rewrite_observation(
        self, ctx: ExecutionContext, call: ToolCall, result: ToolResult[Any], text: str
    ) -> str:
        return ("text", ["not a part"])  # type: ignore[return-value]


class Censor(ToolHook):
    """Shows the text, and its attachments replaced by a note."""

    def rewrite_observation(
        self, ctx: ExecutionContext, call: ToolCall, result: ToolResult[Any], text: str
    ) -> tuple[str, tuple[ContentPart, ...]]:
        return text.upper(), (TextContent("(attachment withheld)"),)


@tool
def with_photo(text: str) -> ToolResult[str]:
    """Echo the text, with a photo."""
    return ToolResult(text, media=(ImageContent(data=b"png", media_type="image/png"),))


def test_an_observation_hook_may_replace_the_parts_shown_and_raw_keeps_them() -> None:
    ctx = ExecutionContext()
    ctx.hooks.add(Censor())
    chain = JSONToolChain().register_tool(with_photo)
    result = chain.execute_sync(ctx, '{"tool": "with_photo", "args": {"text": "x"}}', XMLFormat())
    assert result.observations[0].text == "X"
    assert result.media == result.observations[0].media == (TextContent("(attachment withheld)"),)
    assert "[1] text (21 characters)" in result.text
    photo = result.raw.results[0]
    assert photo is not None and photo.result.media == (ImageContent(data=b"png"),)


@pytest.mark.parametrize(
    ("hook", "message"),
    [
        (Broken(), "a tool-call hook failed: RuntimeError: boom"),
        (Junk(), "an observation hook returned int, not a str or (str, media)"),
        (BadPair(), "an observation hook returned tuple, not a str or (str, media)"),
    ],
)
def test_an_observation_hook_that_fails_fails_only_that_call(hook: ToolHook, message: str) -> None:
    ctx = ExecutionContext()
    ctx.hooks.add(hook)
    chain = JSONToolChain().register_tool(echo)
    result = chain.execute_sync(ctx, '{"tool": "echo", "args": {"text": "x"}}', XMLFormat())
    error = result.raw.errors[0]
    assert error is not None and error.kind == "hook_error" and error.message == message
    assert result.observations[0].text == f"Error: {message}"
    assert ctx.stats.get("tool_errors") == 1


def test_react_sends_prompt_sections_each_step_without_storing_them() -> None:
    recorder = Recorder()
    model = ScriptedModel(
        [
            '<action>{"tool": "shout", "args": {"text": "hi"}}</action>',
            "<answer>The RAW answer.</answer>",
        ]
    )
    agent = ReActAgent(model, tool_chain=JSONToolChain(), extensions=[recorder])
    result = agent.run_sync("Shout hi.")
    assert result.answer == "The cooked answer."
    first, second = (request.messages for request in model.requests)
    assert first[-1].text_content().endswith("<recorder>\nresults so far: 0\n</recorder>")
    assert second[-1].text_content().endswith("<recorder>\nresults so far: 1\n</recorder>")
    assert "[shout] HI" in second[-1].text_content()
    # The conversation keeps what was really said: no sections in it.
    assert all("<recorder>" not in m.text_content() for m in result.messages)
    # Earlier messages are sent byte-identical: only the latest carries the section.
    assert second[: len(first) - 1] == first[:-1]


def test_native_agent_gets_the_tools_sections_hooks_and_a_streamed_filtered_answer() -> None:
    recorder = Recorder()
    model = ScriptedModel(
        [ScriptedModel.call("shout", {"text": "hi"}, id="c1"), "It is RAW, truly RAW."],
        chunk_size=2,
    )
    agent = ToolCallingAgent(model, tool_chain=YAMLToolChain(), extensions=[recorder])

    async def collect() -> list[RunEvent[str]]:
        return [event async for event in agent.stream("Shout hi.")]

    events = asyncio.run(collect())
    assert [spec.name for spec in model.requests[0].options.tools] == ["shout"]
    tool_message = model.requests[1].messages[-1]
    assert tool_message.role == "tool"
    assert tool_message.text_content().startswith("[shout] HI")
    assert tool_message.text_content().endswith("<recorder>\nresults so far: 1\n</recorder>")
    streamed = "".join(e.text for e in events if isinstance(e, ModelTextDelta) and e.step == 2)
    assert streamed == "It is cooked, truly cooked."
    finished = events[-1]
    assert isinstance(finished, RunFinished)
    assert finished.result.answer == "It is cooked, truly cooked."
    assert recorder.installs == 1


def test_a_prompt_section_rides_on_the_latest_message_with_its_every_other_field() -> None:
    # The sectioned copy of the tool message is built field by field: it must keep what
    # answers the call (its id and tool name) and anything else the message carries.
    model = ScriptedModel([ScriptedModel.call("shout", {"text": "hi"}, id="c1"), "done"])
    agent = ToolCallingAgent(model, tool_chain=YAMLToolChain(), extensions=[Recorder()])
    result = agent.run_sync("Shout hi.")
    sent = model.requests[1].messages[-1]
    [kept] = [m for m in result.messages if m.role == "tool"]
    assert (sent.tool_call_id, sent.name) == ("c1", "shout")
    assert sent.content[:-1] == kept.content
    assert sent.content[-1] == TextContent("\n\n<recorder>\nresults so far: 1\n</recorder>")
    others = [f.name for f in dataclasses.fields(kept) if f.name != "content"]
    assert [getattr(sent, name) for name in others] == [getattr(kept, name) for name in others]


class StepCounter(Extension):
    name = "counter"

    def __init__(self) -> None:
        self.steps: list[int] = []

    def before_step(self, ctx: ExecutionContext, request: Any) -> None:
        self.steps.append(request.index)


def test_an_extension_with_before_step_is_a_step_hook() -> None:
    counter = StepCounter()
    model = ScriptedModel(
        ['<action>{"tool": "echo", "args": {"text": "a"}}</action>', "<answer>a</answer>"]
    )
    chain = JSONToolChain().register_tool(echo)
    ReActAgent(model, tool_chain=chain, extensions=[counter]).run_sync("Echo a.")
    assert counter.steps == [1, 2]


# -- the declared seam: every hook on Extension, defaults that cost nothing ---------------


class Duck:
    """Has what an extension has, without inheriting from Extension."""

    name = "duck"

    def tools(self) -> Sequence[Tool[Any, Any]]:
        return [shout]

    def prompt_section(self, ctx: ExecutionContext) -> str:
        return "quack"


REFUSED = (
    r"{callee}: extensions= takes toolchain\.Extension objects, and Duck is not one: "
    r"declare it as `class Duck\(Extension\):` \(from toolchain import Extension\), which "
    r"gives it a no-op default for every hook it leaves out"
)


@pytest.mark.parametrize(
    ("callee", "build"),
    [
        ("ReActAgent()", lambda duck: ReActAgent(ScriptedModel([]), extensions=[duck])),
        ("ToolCallingAgent()", lambda duck: ToolCallingAgent(ScriptedModel([]), extensions=[duck])),
        ("JSONToolChain()", lambda duck: JSONToolChain(extensions=[duck])),
        ("YAMLToolChain()", lambda duck: YAMLToolChain(extensions=[duck])),
    ],
)
def test_an_extension_that_does_not_inherit_is_refused_where_it_is_given(
    callee: str, build: Callable[[Any], object]
) -> None:
    with pytest.raises(TypeError, match=REFUSED.format(callee=re.escape(callee))):
        build(Duck())


class ToolsOnly(Extension):
    """Brings a tool and nothing else: every other hook is the base class's default."""

    name = "tools_only"

    def tools(self) -> Sequence[Tool[Any, Any]]:
        return [shout]


HOOKS = ("instructions", "prompt_section", "text_filter", "before_step", "check_answer")


@pytest.mark.parametrize("agent_type", [ReActAgent, ToolCallingAgent])
def test_hooks_left_at_their_default_cost_a_step_nothing(
    monkeypatch: pytest.MonkeyPatch, agent_type: type[ReActAgent[str] | ToolCallingAgent[str]]
) -> None:
    called: Counter[str] = Counter()
    for hook in HOOKS:
        default = vars(Extension)[hook]

        def counted(*args: Any, _default: Any = default, _hook: str = hook) -> Any:
            called[_hook] += 1
            return _default(*args)

        monkeypatch.setattr(Extension, hook, counted)
    requests: list[int] = []
    made = StepRequest.__init__

    def counted_request(self: StepRequest, *args: Any, **kwargs: Any) -> None:
        requests.append(1)
        made(self, *args, **kwargs)

    monkeypatch.setattr(StepRequest, "__init__", counted_request)
    call = '<action>{"tool": "shout", "args": {"text": "hi"}}</action>'
    native = agent_type is ToolCallingAgent
    shout_hi = ScriptedModel.call("shout", {"text": "hi"}) if native else call
    model = ScriptedModel([shout_hi] * 3 + ["<answer>HI</answer>"])
    agent = agent_type(model, tool_chain=JSONToolChain(), extensions=[ToolsOnly()])
    result = agent.run_sync("Shout hi three times.")
    assert result.ok and result.stats["tool_calls:shout"] == 3
    # Four steps, and not one call of a default hook, nor a step request built for them:
    # each step was made as a run without the extension makes it.
    assert (len(model.requests), called, requests) == (4, Counter(), [])


class Pending:
    """A step hook that holds the first answer back, the way task lists did before
    ``check_answer`` was an ``Extension`` hook."""

    def __init__(self) -> None:
        self.asked = 0

    def __call__(self, ctx: ExecutionContext, request: StepRequest) -> None:
        return None

    def check_answer(self, ctx: ExecutionContext) -> str | None:
        self.asked += 1
        return "one more thing first" if self.asked == 1 else None


def test_a_step_hook_that_holds_answers_back_still_does_for_a_release_with_a_warning() -> None:
    pending = Pending()
    model = ScriptedModel(["<answer>early</answer>", "<answer>done</answer>"])
    with pytest.warns(DeprecationWarning, match=r"the step hook Pending holds answers back"):
        agent = ReActAgent(model, step_hooks=[pending])
    result = agent.run_sync("Finish.")
    assert (result.answer, pending.asked) == ("done", 2)
    assert "one more thing first" in result.steps[0].feedback


def test_an_extension_given_as_a_step_hook_is_refused() -> None:
    with pytest.raises(TypeError, match=r"ReActAgent\(\): StepCounter is an Extension: pass"):
        # (ignored below: an Extension is no StepHook, which is the mistake under test)
        ReActAgent(ScriptedModel([]), step_hooks=[StepCounter()])  # type: ignore[list-item]
