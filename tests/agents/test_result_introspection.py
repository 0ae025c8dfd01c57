"""Results and public types stay usable by tools that look inside them: a result pickles
(to hand it to another process), and every public class's annotations resolve at run
time (``typing.get_type_hints``, as pydantic and serialisers do). The second is why
``agents`` and ``agents.models`` do not set their objects' ``__module__`` to the package.
"""

from __future__ import annotations

import inspect
import pickle
import typing
from types import ModuleType

import pytest

import agents
import agents.models
from agents import ReActAgent, ScriptedModel, ToolCallingAgent
from toolchain import tool


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
