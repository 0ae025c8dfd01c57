"""An action's whole observation (``ToolChainResult.text``) is written when it is first
read: a native agent sends each call's own observation and never reads it. Read,
compared, printed, pickled, copied, replaced or recorded, a result reads the text it
always did, and a format of one's own writes it as the action ends, as before."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import pytest

from agents import ToolCallingAgent
from agents.models import ScriptedModel, ScriptedReply, ToolCallRequest
from formats import MarkdownFormat, TextFormat, XMLFormat
from toolchain import (
    ExecutionContext,
    ToolChainResult,
    YAMLToolChain,
    to_json,
    tool,
)


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def chain() -> YAMLToolChain:
    return YAMLToolChain().register_tool(add)


TWO_CALLS = ScriptedReply(
    "",
    (
        ToolCallRequest("c1", "add", '{"a": 2, "b": 3}'),
        ToolCallRequest("c2", "add", '{"a": 1, "b": 1}'),
    ),
)
XML_TEXT = "<observation>\n<add>\n5\n</add>\n<add>\n2\n</add>\n</observation>"
MARKDOWN_TEXT = "# observation\n\n## add\n5\n\n## add\n2"


def native_run(fmt: TextFormat) -> ToolChainResult:
    """The one action of a native run that calls ``add`` twice, then answers."""
    agent = ToolCallingAgent(
        ScriptedModel([TWO_CALLS, "5 and 2"]), tool_chain=chain(), text_format=fmt
    )
    result = agent.run_sync("2 + 3 and 1 + 1?")
    assert result.answer == "5 and 2"
    assert [m.text_content() for m in result.messages if m.role == "tool"] == ["5", "2"]
    [action] = result.steps[0].tool_results
    return action


def two_calls(fmt: TextFormat) -> ToolChainResult:
    action = "- tool: add\n  args: {a: 2, b: 3}\n- tool: add\n  args: {a: 1, b: 1}"
    return chain().execute_sync(ExecutionContext(), action, fmt)


def counting(monkeypatch: pytest.MonkeyPatch, fmt: type[TextFormat]) -> list[str]:
    """Each observation ``fmt`` wraps (the system prompt's sections are formatted too)."""
    wrapped: list[str] = []
    original = fmt.wrap_observation

    def wrap_observation(self: TextFormat, text: str) -> str:
        wrapped.append(text)
        return original(self, text)

    monkeypatch.setattr(fmt, "wrap_observation", wrap_observation)
    return wrapped


@pytest.mark.parametrize(
    ("fmt", "expected"), [(XMLFormat, XML_TEXT), (MarkdownFormat, MARKDOWN_TEXT)]
)
def test_a_native_run_writes_no_whole_observation_until_it_is_read(
    monkeypatch: pytest.MonkeyPatch, fmt: type[TextFormat], expected: str
) -> None:
    written = counting(monkeypatch, fmt)

    action = native_run(fmt())

    assert written == []  # the model read each call's own observation only
    assert action.text == expected
    assert action.text == expected
    assert len(written) == 1  # written once, on the first read


def test_a_result_written_on_read_reads_like_one_made_with_its_text() -> None:
    made = two_calls(XMLFormat())
    given = ToolChainResult(XML_TEXT, made.media, made.raw, made.observations, made.pending)

    # Each way of reading the result, each on a result not read before.
    assert repr(two_calls(XMLFormat())) == repr(given)
    assert two_calls(XMLFormat()) == given
    assert given == two_calls(XMLFormat())
    assert pickle.loads(pickle.dumps(two_calls(XMLFormat()))) == given
    assert copy.copy(two_calls(XMLFormat())).text == XML_TEXT
    assert copy.deepcopy(two_calls(XMLFormat())) == given
    assert dataclasses.replace(two_calls(XMLFormat()), pending=()) == given
    assert dataclasses.asdict(two_calls(XMLFormat())) == dataclasses.asdict(given)
    assert to_json(two_calls(XMLFormat())) == to_json(given)
    assert two_calls(XMLFormat()).as_content_parts() == given.as_content_parts()
    assert [f.name for f in dataclasses.fields(two_calls(XMLFormat()))] == [
        "text",
        "media",
        "raw",
        "observations",
        "pending",
    ]
    # Made with its text, a result keeps it, as before.
    assert ToolChainResult("<observation/>").text == "<observation/>"
    assert ToolChainResult(text="x") == ToolChainResult("x")
    assert hash(ToolChainResult("x")) == hash(ToolChainResult(text="x"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        two_calls(XMLFormat()).text = "changed"  # type: ignore[misc]  # frozen: what we test


class Numbered(XMLFormat):
    """A format of one's own whose observations carry a number it may change."""

    def __init__(self) -> None:
        super().__init__()
        self.round = 1

    def wrap_observation(self, text: str) -> str:
        return f"<observation round='{self.round}'>\n{text}\n</observation>"


def test_a_format_of_ones_own_writes_the_observation_as_the_action_ends() -> None:
    fmt = Numbered()
    action = native_run(fmt)
    fmt.round = 2  # changed after the action: its text was written already

    assert (
        action.text == "<observation round='1'>\n<add>\n5\n</add>\n<add>\n2\n</add>\n</observation>"
    )
