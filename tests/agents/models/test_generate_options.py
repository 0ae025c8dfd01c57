"""Every `GenerateOptions` field reaches the wire of both providers, or is knowingly dropped.

The adapters run on the real SDKs against the loopback server, which records each
request's body and headers as they arrived. Retries use the loopback's error replies,
whose ``retry-after-ms: 1`` makes the SDKs retry at once.
"""

from __future__ import annotations

import dataclasses
import io
import json
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import httpx2
import msgspec
import openai
import pytest

from agents import ReActAgent, ToolCallingAgent
from agents.models import (
    AnthropicModel,
    GenerateOptions,
    Message,
    Model,
    ModelCallError,
    ModelResponse,
    OpenAIChatModel,
    ScriptedModel,
)
from agents.trace import JSONLTraceWriter
from tests.support.anthropic_replies import anthropic_error, anthropic_message, anthropic_stream
from tests.support.loopback import LoopbackServer, Reply
from tests.support.openai_replies import openai_completion, openai_error, openai_stream
from toolchain import ExecutionContext

QUESTION = [Message.text("user", "What is 6 * 7?")]
SECRET = "opaque-value-of-no-known-shape"
EVERY_OPTION = GenerateOptions(
    temperature=0.5,
    top_p=0.9,
    top_k=40,
    presence_penalty=0.5,
    frequency_penalty=-0.25,
    seed=7,
    headers={"X-Request-Tag": "run-1", "X-Tenant-Secret": SECRET},
)
NEW_FIELDS = ("top_p", "top_k", "presence_penalty", "frequency_penalty")


@dataclass(frozen=True)
class Provider:
    """One adapter as these tests drive it: how to build it and what its server says."""

    name: str
    build: Callable[[LoopbackServer, int], Model]
    reply: Callable[[str], Reply]
    stream: Callable[[Sequence[str]], Reply]
    error: Callable[[int, str], Reply]
    sent: frozenset[str]
    """The options of `EVERY_OPTION` the provider's request carries in its body."""

    async def close(self, model: Model) -> None:
        assert isinstance(model, OpenAIChatModel | AnthropicModel)
        await model.aclose()


def _openai(server: LoopbackServer, max_retries: int) -> OpenAIChatModel:
    return OpenAIChatModel(
        "gpt-test", api_key="test-key", base_url=server.openai_base_url, max_retries=max_retries
    )


def _anthropic(server: LoopbackServer, max_retries: int) -> AnthropicModel:
    return AnthropicModel(
        "claude-test", api_key="test-key", base_url=server.base_url, max_retries=max_retries
    )


OPENAI = Provider(
    "openai",
    _openai,
    openai_completion,
    openai_stream,
    lambda status, message: openai_error(status, message),
    frozenset({"temperature", *NEW_FIELDS, "seed"}),
)
ANTHROPIC = Provider(
    "anthropic",
    _anthropic,
    anthropic_message,
    anthropic_stream,
    lambda status, message: anthropic_error(status, message),
    frozenset({"temperature", "top_p", "top_k"}),
)
ALL_SAMPLING = frozenset({"temperature", *NEW_FIELDS, "seed"})


@pytest.fixture(params=[OPENAI, ANTHROPIC], ids=lambda provider: provider.name)
def provider(request: pytest.FixtureRequest) -> Provider:
    chosen: Provider = request.param
    return chosen


async def call(model: Model, options: GenerateOptions | None, *, streamed: bool) -> ModelResponse:
    if not streamed:
        return await model.generate(QUESTION, options)
    items = [item async for item in model.stream(QUESTION, options)]
    final = items[-1]
    assert isinstance(final, ModelResponse)
    return final


def enqueue_reply(server: LoopbackServer, provider: Provider, *, streamed: bool) -> None:
    server.enqueue(provider.stream(["4", "2"]) if streamed else provider.reply("42"))


@pytest.fixture
async def model(loopback: LoopbackServer, provider: Provider) -> AsyncIterator[Model]:
    adapter = provider.build(loopback, 2)
    yield adapter
    await provider.close(adapter)


# --- what reaches the wire ---------------------------------------------------------------


@pytest.mark.parametrize("streamed", [False, True], ids=["generate", "stream"])
async def test_every_option_the_provider_knows_is_in_the_request_body(
    loopback: LoopbackServer, provider: Provider, model: Model, streamed: bool
) -> None:
    enqueue_reply(loopback, provider, streamed=streamed)
    assert (await call(model, EVERY_OPTION, streamed=streamed)).text == "42"
    body = loopback.last_request.json()
    assert {name: body[name] for name in provider.sent} == {
        name: getattr(EVERY_OPTION, name) for name in provider.sent
    }
    assert not (ALL_SAMPLING - provider.sent) & body.keys()  # ignored ones are absent
    assert "headers" not in body and "max_retries" not in body


@pytest.mark.parametrize("streamed", [False, True], ids=["generate", "stream"])
async def test_extra_headers_go_with_that_request_only(
    loopback: LoopbackServer, provider: Provider, model: Model, streamed: bool
) -> None:
    enqueue_reply(loopback, provider, streamed=streamed)
    enqueue_reply(loopback, provider, streamed=streamed)
    await call(model, EVERY_OPTION, streamed=streamed)
    await call(model, None, streamed=streamed)
    tagged, plain = loopback.requests
    assert tagged.headers["x-request-tag"] == "run-1"
    assert tagged.headers["x-tenant-secret"] == SECRET
    assert "x-request-tag" not in plain.headers and "x-tenant-secret" not in plain.headers
    # The SDK's own headers stay beside them.
    assert tagged.headers["x-stainless-retry-count"] == "0"


async def test_extra_headers_replace_the_clients_header_of_the_same_name(
    loopback: LoopbackServer, provider: Provider, model: Model
) -> None:
    enqueue_reply(loopback, provider, streamed=False)
    await model.generate(QUESTION, GenerateOptions(headers={"User-Agent": "my-agent/1.0"}))
    assert loopback.last_request.headers["user-agent"] == "my-agent/1.0"


async def test_unset_options_stay_out_of_the_request(
    loopback: LoopbackServer, provider: Provider, model: Model
) -> None:
    enqueue_reply(loopback, provider, streamed=False)
    await model.generate(QUESTION, GenerateOptions())
    assert not ALL_SAMPLING & loopback.last_request.json().keys()


async def test_api_openai_com_gets_no_top_k(caplog: pytest.LogCaptureFixture) -> None:
    """The official API refuses unknown fields: top_k is dropped there, and logged once."""
    bodies: list[dict[str, Any]] = []

    def answer(request: httpx2.Request) -> httpx2.Response:
        bodies.append(json.loads(request.content))
        return httpx2.Response(200, content=openai_completion("42").body)

    http = httpx2.AsyncClient(transport=httpx2.MockTransport(answer))
    client = openai.AsyncOpenAI(api_key="k", base_url="https://api.openai.com/v1", http_client=http)
    model = OpenAIChatModel("gpt-test", client=client)
    with caplog.at_level(logging.DEBUG, logger="agents"):
        await model.generate(QUESTION, GenerateOptions(top_k=40, top_p=0.5))
        await model.generate(QUESTION, GenerateOptions(top_k=40))
    await model.aclose()
    assert ["top_k" in body for body in bodies] == [False, False]
    assert bodies[0]["top_p"] == 0.5
    told = [r.getMessage() for r in caplog.records if r.name == "agents"]
    assert told == ["openai:gpt-test ignores the option top_k: api.openai.com refuses it"]


async def test_anthropic_logs_each_ignored_option_once_and_no_header_value(
    loopback: LoopbackServer, caplog: pytest.LogCaptureFixture
) -> None:
    model = _anthropic(loopback, 0)
    loopback.enqueue(anthropic_message("1"), anthropic_message("2"))
    with caplog.at_level(logging.DEBUG, logger="agents"):
        await model.generate(QUESTION, EVERY_OPTION)
        await model.generate(QUESTION, EVERY_OPTION)
    await model.aclose()
    told = [r.getMessage() for r in caplog.records if r.name == "agents"]
    why = "the Messages API has no such parameter"
    assert told == [
        f"anthropic:claude-test ignores the option {name}: {why}"
        for name in ("seed", "presence_penalty", "frequency_penalty")
    ]
    assert all(SECRET not in line and "run-1" not in line for line in told)


# --- retries --------------------------------------------------------------------------------


@pytest.mark.parametrize("streamed", [False, True], ids=["generate", "stream"])
async def test_a_per_call_max_retries_rides_out_two_failures(
    loopback: LoopbackServer, provider: Provider, streamed: bool
) -> None:
    model = provider.build(loopback, 0)  # on its own it would not retry at all
    failure = provider.error(503, "warming up")
    loopback.enqueue(failure, failure)
    enqueue_reply(loopback, provider, streamed=streamed)
    response = await call(model, GenerateOptions(max_retries=2), streamed=streamed)
    await provider.close(model)
    assert response.text == "42"
    counts = [r.headers["x-stainless-retry-count"] for r in loopback.requests]
    assert counts == ["0", "1", "2"]


@pytest.mark.parametrize("streamed", [False, True], ids=["generate", "stream"])
async def test_max_retries_zero_fails_on_the_first_failure(
    loopback: LoopbackServer, provider: Provider, streamed: bool
) -> None:
    model = provider.build(loopback, 3)  # the model's own setting would ride it out
    failure = provider.error(503, "warming up")
    loopback.enqueue(failure, failure)
    enqueue_reply(loopback, provider, streamed=streamed)
    with pytest.raises(ModelCallError) as caught:
        await call(model, GenerateOptions(max_retries=0), streamed=streamed)
    assert caught.value.status_code == 503
    assert str(caught.value) == (f"{model.name}: HTTP 503 (not retried: max_retries=0): warming up")
    assert len(loopback.requests) == 1
    # The next call without a per-call setting retries as the model was built to.
    assert (await call(model, None, streamed=streamed)).text == "42"
    await provider.close(model)
    assert len(loopback.requests) == 3


async def test_the_error_counts_the_per_call_retries(
    loopback: LoopbackServer, provider: Provider, model: Model
) -> None:
    loopback.enqueue(*[provider.error(500, "down")] * 2)
    with pytest.raises(ModelCallError, match=r"HTTP 500 \(gave up after 1 retry\): down$"):
        await model.generate(QUESTION, GenerateOptions(max_retries=1))
    assert len(loopback.requests) == 2


# --- agents forward the options; traces keep them, header values blanked -----------------


@pytest.mark.parametrize("agent", [ReActAgent, ToolCallingAgent])
async def test_agents_pass_every_option_on_and_traces_hide_header_values(
    agent: type[ReActAgent[Any]] | type[ToolCallingAgent[Any]],
) -> None:
    options = GenerateOptions(
        top_p=0.9, top_k=40, presence_penalty=0.5, max_retries=1, headers={"X-Key": SECRET}
    )
    model = ScriptedModel(["<answer>42</answer>" if agent is ReActAgent else "42"])
    out, ctx = io.StringIO(), ExecutionContext()
    detach = JSONLTraceWriter(out).attach(ctx)
    await agent(model, options=options).run("6 * 7?", ctx=ctx)
    detach()
    sent = model.requests[0].options
    assert (sent.top_p, sent.top_k, sent.presence_penalty) == (0.9, 40, 0.5)
    assert (sent.max_retries, sent.headers) == (1, {"X-Key": SECRET})
    trace = out.getvalue()
    assert SECRET not in trace
    [step] = [json.loads(line) for line in trace.splitlines() if '"StepReady"' in line]
    traced = msgspec.convert(step["request"]["options"], GenerateOptions)
    assert traced.headers == {"X-Key": "[REDACTED]"}
    assert traced == dataclasses.replace(sent, headers={"X-Key": "[REDACTED]"})
