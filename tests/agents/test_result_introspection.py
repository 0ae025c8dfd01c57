"""Results and public types stay usable by tools that look inside them: a result pickles
(to hand it to another process), and every public class's annotations resolve at run
time (``typing.get_type_hints``, as pydantic and serialisers do). The second is why
``agents`` and ``agents.models`` do not set their objects' ``__module__`` to the package.
"""

from __future__ import annotations

import dataclasses
import inspect
import pickle
import typing
from types import ModuleType

import pytest

import agents
import agents.models
from agents import ReActAgent, ScriptedModel, ToolCallingAgent
from toolchain import Approval, tool


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def test_a_result_pickles_whole() -> None:
    model = ScriptedModel([ScriptedModel.call("add", {"a": 2, "b": 3}), "It is 5."])
    result = ToolCallingAgent(model, tools=[add]).run_sync("2 + 3?")
    back = pickle.loads(pickle.dumps(result))
    assert back.answer == "It is 5."
    assert back.messages == result.messages
    assert back.steps == result.steps
    assert back.usage == result.usage
    assert back.stopped_by == result.stopped_by


def test_a_react_result_pickles_whole() -> None:
    result = ReActAgent(ScriptedModel(["<answer>4</answer>"])).run_sync("2 + 2?")
    back = pickle.loads(pickle.dumps(result))
    assert (back.answer, back.messages, back.steps) == (
        result.answer,
        result.messages,
        result.steps,
    )


@pytest.mark.parametrize("package", [agents, agents.models], ids=lambda p: p.__name__)
def test_public_classes_annotations_resolve(package: ModuleType) -> None:
    names: list[str] = package.__all__
    classes = [
        getattr(package, name)
        for name in names
        if name not in ("AnthropicModel", "OpenAIChatModel")  # loaded on first use
        and inspect.isclass(getattr(package, name))
    ]
    for cls in classes:
        typing.get_type_hints(cls)  # raises NameError if an annotation cannot resolve


def test_a_runs_usage_is_its_steps_summed_through_a_pause_and_its_resume() -> None:
    @tool(requires_approval=True)
    def wipe(disk: str) -> str:
        """Erase a disk."""
        return f"{disk} erased"

    adding, wiping = (
        ScriptedModel.call("add", {"a": 2, "b": 3}),
        ScriptedModel.call("wipe", {"disk": "sdb"}),
    )
    model = ScriptedModel([adding, wiping, "done"])
    agent = ToolCallingAgent(model, tools=[add, wipe])
    paused = agent.run_sync("Add, then erase sdb")
    assert paused.stopped_by == "paused"
    assert len(paused.steps) == 2
    done = agent.resume_sync(paused, {paused.pending[0].call_id: Approval.granted()})
    assert done.answer == "done"
    for result in (paused, done):
        steps = [step.usage for step in result.steps]
        assert steps[0].input_tokens > 0
        assert result.usage == agents.Usage(
            sum(usage.input_tokens for usage in steps),
            sum(usage.output_tokens for usage in steps),
            sum(usage.cached_input_tokens for usage in steps),
        )
    # The native assistant messages carry their calls; the text-only answer its text.
    assistants = [m for m in done.messages if m.role == "assistant"]
    assert [m.tool_calls[0].name if m.tool_calls else m.text_content() for m in assistants] == [
        "add",
        "wipe",
        "done",
    ]


def test_the_types_a_step_builds_keep_their_dataclass_behaviour() -> None:
    message = agents.Message("tool", (), tool_call_id="c1", name="add")
    assert message == agents.Message("tool", (), (), "c1", "add")
    assert hash(message) == hash(agents.Message("tool", (), tool_call_id="c1", name="add"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        message.name = "sub"  # type: ignore[misc]  # frozen: the assignment is the test
    step = agents.StepResult(1, "out", {})
    assert step.usage == agents.Usage() and step.usage is not agents.StepResult(1, "", {}).usage
    assert str(inspect.signature(agents.Usage)) == (
        "(input_tokens: 'int' = 0, output_tokens: 'int' = 0, cached_input_tokens: 'int' = 0)"
        " -> None"
    )
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'content'"):
        agents.Message("user")  # type: ignore[call-arg]  # the missing argument is the test
