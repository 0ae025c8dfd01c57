"""A run given what a chat API takes (a list of role/content dicts) says so at the call.

Without the check, ``agent.run([{"role": "user", "content": "hi"}])`` reached the
OpenAI adapter and ended as a failed model call (``AttributeError: 'dict' object has no
attribute 'data'``). Now the task, the history and the extensions' state are checked
where they are given: a ``TypeError`` that says what each may be, and the endpoint (a
loopback server behind the real SDK) is never called.
"""

from __future__ import annotations

from typing import Any

import pytest

from agents import Message, ReActAgent, ScriptedModel, ToolCallingAgent, run_prompt
from agents.prompt import Prompt
from tests.support.loopback import LoopbackServer
from tests.support.openai_replies import openai_completion
from toolchain import ImageContent, TextContent

CHAT: Any = [{"role": "user", "content": "hi"}]  # Any: the wrong type is the point
AGENTS = [ReActAgent, ToolCallingAgent]
NOT_A_MAP: Any = ["tool_search"]


@pytest.fixture
def server(loopback: LoopbackServer, monkeypatch: pytest.MonkeyPatch) -> LoopbackServer:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback-test")
    monkeypatch.setenv("OPENAI_API_BASE", loopback.openai_base_url)
    return loopback


def _says_what_a_task_is(error: pytest.ExceptionInfo[TypeError]) -> None:
    message = str(error.value)
    assert message.startswith("a task is a str or a sequence of content parts")
    assert "not a list holding a dict (item 0)" in message
    assert "earlier messages go in history=" in message


@pytest.mark.parametrize("agent_class", AGENTS)
async def test_a_list_of_chat_dicts_as_the_task_is_a_type_error_before_any_model_call(
    agent_class: Any, server: LoopbackServer
) -> None:
    agent = agent_class("openai:gpt-4o-mini")
    with pytest.raises(TypeError) as raised:
        await agent.run(CHAT)
    _says_what_a_task_is(raised)
    with pytest.raises(TypeError) as raised:
        agent.stream(CHAT)  # at the call, not at the first event
    _says_what_a_task_is(raised)
    assert server.requests == []


@pytest.mark.parametrize("agent_class", AGENTS)
def test_run_sync_refuses_it_too(agent_class: Any, server: LoopbackServer) -> None:
    with pytest.raises(TypeError) as raised:
        agent_class("openai:gpt-4o-mini").run_sync(CHAT)
    _says_what_a_task_is(raised)
    assert server.requests == []


@pytest.mark.parametrize("agent_class", AGENTS)
async def test_history_of_dicts_and_a_state_that_is_no_mapping_are_type_errors(
    agent_class: Any, server: LoopbackServer
) -> None:
    agent = agent_class("openai:gpt-4o-mini")
    with pytest.raises(TypeError, match=r"^history must be a sequence of agents\.Message, not "):
        await agent.run("hi", history=CHAT)
    with pytest.raises(TypeError, match=r"^extension_state must be a mapping .* not a list$"):
        await agent.run("hi", extension_state=["tool_search"])
    with pytest.raises(TypeError, match=r"not a str$"):
        agent.run_sync("hi", extension_state="{}")
    assert server.requests == []


@pytest.mark.parametrize("agent_class", AGENTS)
async def test_content_parts_and_messages_still_run(
    agent_class: Any, server: LoopbackServer
) -> None:
    server.enqueue(openai_completion("<answer>fine</answer>"))
    agent = agent_class("openai:gpt-4o-mini")
    task = [TextContent("What is in it?"), ImageContent(url="https://example.com/a.png")]
    history = [Message.text("user", "hi"), Message.text("assistant", "hello")]
    result = await agent.run(task, history=history, extension_state={})
    assert result.stopped_by == "answer", result.error
    sent = server.requests[0].json()["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]


def test_run_prompt_says_it_at_prompt_user_and_at_run_prompt(server: LoopbackServer) -> None:
    def build(prompt: Prompt) -> None:
        prompt.user(CHAT)

    with pytest.raises(TypeError, match=r"^a prompt's user message is a str, not a list;"):
        run_prompt(build, model="openai:gpt-4o-mini").run_sync()
    with pytest.raises(TypeError, match=r"^history must be a sequence of agents\.Message"):
        run_prompt(lambda p: p.user("hi"), model="openai:gpt-4o-mini", history=CHAT)
    with pytest.raises(TypeError, match=r"^extension_state must be a mapping"):
        run_prompt(lambda p: p.user("hi"), model="openai:gpt-4o-mini", extension_state=NOT_A_MAP)
    assert server.requests == []


async def test_a_durable_run_refuses_it_before_a_workflow_is_recorded() -> None:
    """Checked before DBOS is asked for anything: no launch() is needed to be told."""
    from agents.durable import DurableAgent

    durable = DurableAgent(
        ReActAgent(ScriptedModel(["<answer>no</answer>"])), name="tests.run_inputs"
    )
    with pytest.raises(TypeError) as raised:
        await durable.start(CHAT)
    _says_what_a_task_is(raised)
    with pytest.raises(TypeError, match=r"^extension_state must be a mapping"):
        await durable.run("hi", extension_state=NOT_A_MAP)
