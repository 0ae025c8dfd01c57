"""One agent, many runs: each on an event loop of its own, as users call them.

``run_sync`` makes a new event loop per call, so does ``asyncio.run``, and each thread
runs a loop of its own. Every one of those runs must work on the same agent (and the
same model object), over a real HTTP/1.1 keep-alive server driving the real SDKs, and
leave no connection open behind it. The model strings resolve from
``OPENAI_API_KEY``/``OPENAI_API_BASE`` and ``ANTHROPIC_API_KEY``/``ANTHROPIC_API_BASE``,
the way a user's first program does.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, Literal

import httpx2
import openai
import pytest

from agents import AgentResult, Message, ReActAgent, RunFinished, ToolCallingAgent, run_prompt
from agents.models import AnthropicModel, Model, OpenAIChatModel, resolve_model
from agents.prompt import Prompt
from tests.support.agent_kinds import Kind
from tests.support.loopback import LoopbackServer, RecordedRequest, Reply
from tests.support.replies import (
    Provider,
    calls_reply,
    streamed_calls,
    streamed_text_reply,
    text_reply,
)
from toolchain import JSONToolChain, tool

ROOT = Path(__file__).resolve().parents[2]


@tool
def add(a: int, b: int) -> int:
    """Add two whole numbers."""
    return a + b


ACTION = '<action>{"tool": "add", "args": {"a": 2, "b": 3}}</action>'


def two_steps(provider: Provider) -> Any:
    """A server handler: a first step calls ``add`` (natively or in an action), the next
    answers; each request is read on its own, so any number of runs may share it."""

    def handle(request: RecordedRequest) -> Reply:
        body = request.json()
        streamed = bool(body.get("stream"))
        native = "tools" in body
        first = not any(message.get("role") == "assistant" for message in body["messages"])
        call_id = "call_1" if provider == "openai" else "toolu_1"
        if first and native:
            if streamed:
                return streamed_calls(provider, [(call_id, "add", ['{"a": 2,', ' "b": 3}'])])
            return calls_reply(provider, [(call_id, "add", '{"a": 2, "b": 3}')])
        text = ACTION if first else ("5" if native else "<answer>5</answer>")
        if streamed:
            return streamed_text_reply(provider, text[:9], text[9:])
        return text_reply(provider, text)

    return handle


@pytest.fixture(params=["openai", "anthropic"])
def provider(
    request: pytest.FixtureRequest, server: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> Provider:
    """The provider, its key and endpoint set in the environment, the server answering."""
    chosen: Provider = request.param
    if chosen == "openai":
        monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")
        monkeypatch.setenv("OPENAI_API_BASE", server.openai_base_url)
    else:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-loopback")
        monkeypatch.setenv("ANTHROPIC_API_BASE", server.base_url)
    server.respond_with(two_steps(chosen))
    return chosen


@pytest.fixture(params=["react", "native"])
def kind(request: pytest.FixtureRequest) -> Kind:
    chosen: Kind = request.param
    return chosen


def agent_for(kind: Kind, model: Model | str) -> ReActAgent[str] | ToolCallingAgent[str]:
    chain = JSONToolChain().register_tool(add)
    if kind == "react":
        return ReActAgent(model, tool_chain=chain)
    return ToolCallingAgent(model, tool_chain=chain)


def assert_answered(result: AgentResult[Any]) -> None:
    """The run called ``add`` and answered from it, with nothing failing on the way."""
    assert result.error is None
    assert result.stopped_by == "answer"
    assert result.answer == "5"
    assert [len(step.tool_results) for step in result.steps] == [1, 0]


def test_run_sync_again_and_again(provider: Provider, kind: Kind, server: LoopbackServer) -> None:
    agent = agent_for(kind, f"{provider}:m")
    for _ in range(3):
        assert_answered(agent.run_sync("What is 2 + 3?"))
    assert len(server.requests) == 6


def test_asyncio_run_again_and_again(provider: Provider, kind: Kind) -> None:
    agent = agent_for(kind, f"{provider}:m")
    for _ in range(3):
        assert_answered(asyncio.run(agent.run("What is 2 + 3?")))


def test_streamed_runs_on_new_loops(provider: Provider, kind: Kind) -> None:
    agent = agent_for(kind, f"{provider}:m")

    async def streamed() -> AgentResult[Any]:
        events = [event async for event in agent.stream("What is 2 + 3?")]
        finished = events[-1]
        assert isinstance(finished, RunFinished)
        return finished.result

    for _ in range(3):
        assert_answered(asyncio.run(streamed()))


def test_sync_and_async_mixed_on_one_model(provider: Provider, kind: Kind) -> None:
    """One model object under two agents: sync runs, then concurrent awaited runs."""
    model = resolve_model(f"{provider}:m")
    sync_agent, async_agent = agent_for(kind, model), agent_for("native", model)

    async def together() -> list[AgentResult[Any]]:
        return list(
            await asyncio.gather(
                sync_agent.run("What is 2 + 3?"), async_agent.run("What is 2 + 3?")
            )
        )

    assert_answered(sync_agent.run_sync("What is 2 + 3?"))
    for result in asyncio.run(together()):
        assert_answered(result)
    assert_answered(async_agent.run_sync("What is 2 + 3?"))
    for result in asyncio.run(together()):
        assert_answered(result)


def test_loops_in_several_threads_at_once(provider: Provider, kind: Kind) -> None:
    agent = agent_for(kind, f"{provider}:m")
    threads = 4
    start = threading.Barrier(threads)
    results: list[AgentResult[Any]] = []
    failures: list[BaseException] = []

    def worker() -> None:
        try:
            start.wait()
            for _ in range(2):
                results.append(agent.run_sync("What is 2 + 3?"))
        except BaseException as error:  # reported by the assertion below
            failures.append(error)

    running = [threading.Thread(target=worker) for _ in range(threads)]
    for thread in running:
        thread.start()
    for thread in running:
        thread.join()
    assert failures == []
    assert len(results) == threads * 2
    for result in results:
        assert_answered(result)


def test_a_conversation_continues_over_run_sync(provider: Provider, kind: Kind) -> None:
    """Each turn of a chat is its own ``run_sync`` with the history so far (``chat.py``)."""
    agent = agent_for(kind, f"{provider}:m")
    history: tuple[Message, ...] = ()
    for turn in range(3):
        result = agent.run_sync(f"Turn {turn}: what is 2 + 3?", history=history)
        assert result.error is None
        assert result.stopped_by == "answer"
        history = result.messages
    asked = [m.text_content() for m in history if m.role == "user"]
    assert ["Turn 0" in asked[0], "Turn 2" in asked[-1]] == [True, True]


@pytest.mark.parametrize("protocol", ["native", "text"])
def test_run_prompt_reuses_a_model_and_a_model_string(
    provider: Provider, protocol: Literal["native", "text"]
) -> None:
    def build(prompt: Prompt) -> None:
        prompt.def_tool(add)
        prompt.user("What is 2 + 3?")

    model = resolve_model(f"{provider}:m")
    for spec in (model, model, f"{provider}:m", f"{provider}:m"):
        assert_answered(run_prompt(build, model=spec, protocol=protocol).run_sync())


def given_client(
    provider: Provider, server: LoopbackServer, *, own_pool: bool, max_retries: int = 2
) -> Model:
    """A model on a client the user built, with or without a connection pool of theirs."""
    http = httpx2.AsyncClient() if own_pool else None
    if provider == "openai":
        client = openai.AsyncOpenAI(
            api_key="sk-loopback",
            base_url=server.openai_base_url,
            http_client=http,
            max_retries=max_retries,
        )
        return OpenAIChatModel("m", client=client)
    import anthropic

    user = anthropic.AsyncAnthropic(
        api_key="sk-ant-loopback",
        base_url=server.base_url,
        http_client=http,
        max_retries=max_retries,
    )
    return AnthropicModel("m", client=user)


def test_a_given_client_serves_every_loop(
    provider: Provider, kind: Kind, server: LoopbackServer
) -> None:
    """A client given without an ``http_client`` of its own works as a model string does."""
    agent = agent_for(kind, given_client(provider, server, own_pool=False))
    for _ in range(3):
        assert_answered(agent.run_sync("What is 2 + 3?"))
    assert_answered(asyncio.run(agent.run("What is 2 + 3?")))


def test_a_given_connection_pool_serves_its_loop(
    provider: Provider, kind: Kind, server: LoopbackServer
) -> None:
    """A pool the user built is used as it is: on its loop, every run works; moved to
    another loop after that one closed, the error says so instead of blaming the reply.

    No retries: the Anthropic SDK retries any exception, which hides the failure (the
    retry takes a new connection after a backoff; the dead one is never closed)."""
    model = given_client(provider, server, own_pool=True, max_retries=0)
    agent = agent_for(kind, model)

    async def runs() -> list[AgentResult[Any]]:
        return [await agent.run("What is 2 + 3?") for _ in range(3)]

    for result in asyncio.run(runs()):
        assert_answered(result)
    moved = agent.run_sync("What is 2 + 3?")
    assert moved.stopped_by == "error"
    assert moved.error is not None
    assert "belong to an event loop that has closed" in moved.error
    assert "not a chat completion" not in moved.error
    assert "not a Messages API message" not in moved.error


LEAK_SCRIPT = """
import asyncio, gc, threading
from agents import ReActAgent, ToolCallingAgent
from toolchain import JSONToolChain, tool

@tool
def add(a: int, b: int) -> int:
    '''Add two whole numbers.'''
    return a + b

for provider in ("openai", "anthropic"):
    for cls in (ReActAgent, ToolCallingAgent):
        agent = cls(f"{provider}:m", tool_chain=JSONToolChain().register_tool(add))
        for _ in range(3):
            assert agent.run_sync("What is 2 + 3?").answer == "5"
        assert asyncio.run(agent.run("What is 2 + 3?")).answer == "5"
        threads = [
            threading.Thread(target=lambda: agent.run_sync("What is 2 + 3?")) for _ in range(2)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        del agent
        gc.collect()

async def agent_per_request(provider: str) -> None:
    # A server's habit: a new agent for each request, dropped after it, on one long loop.
    for _ in range(3):
        agent = ToolCallingAgent(f"{provider}:m", tool_chain=JSONToolChain().register_tool(add))
        assert (await agent.run("What is 2 + 3?")).answer == "5"
        del agent
        gc.collect()
        await asyncio.sleep(0.01)  # the dropped model closes its connection on this loop

for provider in ("openai", "anthropic"):
    asyncio.run(agent_per_request(provider))
gc.collect()
print("ok")
"""


def test_runs_leave_no_connection_open(server: LoopbackServer) -> None:
    """Every connection a run opened is closed with its loop, or with its model when
    that is dropped first: nothing for the garbage collector to find (it would warn
    ``ResourceWarning: unclosed transport``)."""
    server.respond_with(lambda request: two_steps(provider_of(request))(request))
    env = {
        **os.environ,
        "OPENAI_API_KEY": "sk-loopback",
        "OPENAI_API_BASE": server.openai_base_url,
        "ANTHROPIC_API_KEY": "sk-ant-loopback",
        "ANTHROPIC_API_BASE": server.base_url,
        "PYTHONPATH": str(ROOT),
    }
    completed = subprocess.run(
        [sys.executable, "-W", "error::ResourceWarning", "-c", LEAK_SCRIPT],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "ok"
    assert "ResourceWarning" not in completed.stderr
    assert "unclosed" not in completed.stderr


def provider_of(request: RecordedRequest) -> Provider:
    return "anthropic" if request.path.partition("?")[0].endswith("/messages") else "openai"


def test_a_discovered_tools_approval_resumes_turn_after_turn(
    provider: Provider, server: LoopbackServer
) -> None:
    """Discovery's approval flow over the real SDKs, each turn a sync call: the run holds
    the call to an index tool that ``requires_confirmation``, ``resume_sync`` with the
    decision runs it (no request to make it again), and the agent goes on serving the
    next turn of the conversation."""
    from toolchain.discovery import (
        Approval,
        Extraction,
        ToolIndex,
        ToolInfo,
        ToolSearch,
        WorkingMemory,
    )

    @tool
    def search_images(query: str) -> dict[str, object]:
        """Search the media library's images by description."""
        return {"results": [{"id": "img-42", "alt": f"{query} at dawn"}]}

    @tool
    def publish_page(page_id: str) -> str:
        """Publish a draft page so visitors see it."""
        return f"{page_id} is live"

    index = ToolIndex(
        [search_images, publish_page],
        [
            ToolInfo(
                "search_images",
                category="images",
                phrases=("find an image", "look for a photo"),
                extraction=Extraction("results", "image", name_field="alt", is_array=True),
            ),
            ToolInfo("publish_page", phrases=("publish a page",), requires_confirmation=True),
        ],
        workflows={"images": "Search the library before uploading anything new."},
    )
    search = ToolSearch(index)
    agent = ToolCallingAgent(f"{provider}:m", extensions=[search, WorkingMemory(index)])
    ids = iter(f"{'call_' if provider == 'openai' else 'toolu_'}{n}" for n in range(1, 9))
    publish = ("publish_page", '{"page_id": "page-7"}')
    server.respond_with(None)
    server.enqueue(
        calls_reply(provider, [(next(ids), "search_images", '{"query": "mountain"}')]),
        calls_reply(provider, [(next(ids), *publish)]),
    )
    result = agent.run_sync("Find a mountain photo for the About page, then publish page-7.")
    assert result.stopped_by == "paused"
    (held,) = result.pending
    assert (held.tool, dict(held.args)) == ("publish_page", {"page_id": "page-7"})
    server.enqueue(text_reply(provider, "page-7 is live, with a mountain photo."))
    resumed = agent.resume_sync(result, {held.call_id: Approval.granted()})
    assert resumed.error is None
    assert resumed.stopped_by == "answer"
    published = resumed.steps[1].tool_results[0].raw.results[0]
    assert published is not None
    assert published.output == "page-7 is live"
    assert server.pending == 0
    # the next turn of the same conversation: found tools carried, the approval not
    server.enqueue(calls_reply(provider, [(next(ids), *publish)]))
    again = agent.run_sync(
        "Publish it again.", history=resumed.messages, extension_state=resumed.extension_state
    )
    assert again.stopped_by == "paused" and [p.tool for p in again.pending] == ["publish_page"]
    assert server.pending == 0


CHAT = ROOT / "examples" / "chat.py"


def chat_turns(provider: Provider) -> Any:
    """A server handler for ``examples/chat.py``: each turn calls ``get_weather``, then
    answers from the tool's result."""

    def handle(request: RecordedRequest) -> Reply:
        last: dict[str, Any] = request.json()["messages"][-1]
        # OpenAI answers a call with a tool message, Anthropic with a tool_result block.
        answered = last["role"] == "tool" or '"type": "tool_result"' in json.dumps(last)
        if answered:
            return text_reply(provider, "Sunny in Paris.")
        call_id = f"{'call' if provider == 'openai' else 'toolu'}_{len(request.body)}"
        return calls_reply(provider, [(call_id, "get_weather", '{"city": "Paris"}')])

    return handle


def test_the_chat_example_holds_a_conversation(provider: Provider, server: LoopbackServer) -> None:
    """``examples/chat.py`` on a keep-alive server: every turn is a ``run_sync``."""
    server.respond_with(chat_turns(provider))
    completed = subprocess.run(
        [sys.executable, str(CHAT), f"{provider}:m"],
        input="Weather in Paris?\nAnd tomorrow?\nAnd the day after?\nThanks!\n",
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    replies = [line for line in completed.stdout.splitlines() if line.startswith("assistant>")]
    assert replies == ["assistant> Sunny in Paris."] * 4, completed.stdout
    assert len(server.requests) == 8
