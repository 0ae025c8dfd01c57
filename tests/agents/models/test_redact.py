"""Secrets never leak: not in model errors, not in traces, whatever a server echoes."""

from __future__ import annotations

import io
import json
import re
import traceback

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents import ReActAgent
from agents.models import (
    AnthropicModel,
    Message,
    Model,
    ModelCallError,
    ModelConfigError,
    OpenAIChatModel,
    ScriptedModel,
    resolve_model,
)
from agents.trace import JSONLTraceWriter
from tests.support.anthropic_replies import anthropic_error
from tests.support.loopback import LoopbackServer
from tests.support.openai_replies import openai_error
from toolchain import (
    ExecutionContext,
    ImageContent,
    ToolCallError,
    ToolCallFinished,
    ToolCallParseFailed,
    ToolResult,
    YAMLToolChain,
    tool,
)
from toolchain._redact import REDACTED, redact, remember_header_secrets, remember_secret

KEY = "sk-proj-Secret0123456789abcdefXYZ"
ANTHROPIC_KEY = "sk-ant-api03-Secret0123456789abcdef-XYZ_AA"
QUESTION = [Message.text("user", "What is 6 * 7?")]


async def call(model: Model, streamed: bool) -> None:
    if streamed:
        _ = [item async for item in model.stream(QUESTION)]
    else:
        await model.generate(QUESTION)


def everything_printed(error: BaseException) -> str:
    """What a user could see of ``error``: its text, its repr and its whole traceback."""
    return "\n".join([str(error), repr(error), *traceback.format_exception(error)])


# --- redact itself --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Incorrect API key provided: sk-proj-abcdefghijklmnopqrstuv.",
            "Incorrect API key provided: [REDACTED].",
        ),
        ("x-api-key: sk-ant-api03-abcdefghijklmnop_qrs", "x-api-key: [REDACTED]"),
        ("Authorization: Bearer abc.def-ghi", "Authorization: [REDACTED]"),
        ("{'authorization': 'Basic dXNlcjpwYXNz'}", "{'authorization': '[REDACTED]'}"),
        ("sent Bearer eyJhbGciOi.eyJzdWIi.c2lnbmF0dXJl.", "sent Bearer [REDACTED]."),
        ("https://user:hunter2@example.com/v1", "https://[REDACTED]@example.com/v1"),
        ("https://sk-secret@example.com", "https://[REDACTED]@example.com"),
        ("https://h/v1?api-key=s3cret&model=x", "https://h/v1?api-key=[REDACTED]&model=x"),
        ("https://h/?key=abc#top", "https://h/?key=[REDACTED]#top"),
        ("https://h/a=1?api_key=abc", "https://h/a=1?api_key=[REDACTED]"),
        ('{"url": "https://h/?key=abc"}', '{"url": "https://h/?key=[REDACTED]"}'),
        (
            "https://h/?access_token=abc&sig=def",
            "https://h/?access_token=[REDACTED]&sig=[REDACTED]",
        ),
        (
            "https://h/?X-Amz-Signature=abc&X-Amz-Date=1",
            "https://h/?X-Amz-Signature=[REDACTED]&X-Amz-Date=1",
        ),
        ("password=hunter2 client_secret=xyz", "password=[REDACTED] client_secret=[REDACTED]"),
        ('{"api_key": "abc", "model": "m"}', '{"api_key": "[REDACTED]", "model": "m"}'),
        (
            "could not talk to https://h/?token=abc: refused",
            "could not talk to https://h/?token=[REDACTED]: refused",
        ),
        (
            "gsk_abcdefghijklmnopqrstuvwxyz and hf_abcdefghijklmnopqrstuvwxyz",
            "[REDACTED] and [REDACTED]",
        ),
    ],
)
def test_redact_blanks_credentials(text: str, expected: str) -> None:
    assert redact(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "max_tokens=64 exceeds the limit; input_tokens=12",
        "a risk-adjusted, task-management-system overview",
        "pip install scikit-learn; see https://example.com/docs?page=2",
        "tokens: 12, key: the 'model' field",
        "Bearer",
        "",
    ],
)
def test_redact_leaves_ordinary_text_alone(text: str) -> None:
    assert redact(text) == text


GENERATED_KEYS = st.from_regex(r"sk-[A-Za-z0-9]{20,40}", fullmatch=True)
# Text made of the pieces the patterns look for, so that the search hits their edges.
PIECES = st.sampled_from(
    [
        *("sk-", "sk-ant-", "Bearer ", "bearer\t", "Authorization: ", "x-api-key=", "?key="),
        *("&token=", "password=", "url=", "'url': '", '"api_key": "', "https://", "u:p@"),
        *("@", "=", ":", ".", "&", "#", "/", " ", "\n", '"', "'", "-", "_", "abc", "XYZ09"),
        *(REDACTED, REDACTED[:4]),
    ]
)
TEXTS = st.lists(st.one_of(PIECES, st.text(max_size=8)), max_size=12).map("".join)


@settings(max_examples=400, deadline=None)
@given(text=st.lists(st.one_of(TEXTS, GENERATED_KEYS), max_size=4).map("".join))
def test_redact_is_idempotent(text: str) -> None:
    once = redact(text)
    assert redact(once) == once


@settings(max_examples=400, deadline=None)
@given(before=TEXTS, key=GENERATED_KEYS, after=TEXTS)
def test_redact_never_leaves_a_generated_key(before: str, key: str, after: str) -> None:
    redacted = redact(before + key + after)
    assert key not in redacted
    assert re.search(r"sk-[A-Za-z0-9]{20,}", redacted) is None


REMEMBERED = "Remembered-0a9b8c7d6e"  # no known shape: blanked only because it was sent


@settings(max_examples=400, deadline=None)
@given(before=TEXTS, after=TEXTS)
def test_a_remembered_value_never_survives_whatever_surrounds_it(before: str, after: str) -> None:
    remember_secret(REMEMBERED)
    redacted = redact(before + REMEMBERED + after)
    assert REMEMBERED not in redacted
    assert redact(redacted) == redacted


def test_remembering_skips_short_values_and_plain_headers() -> None:
    remember_secret("EMPTY", "ollama", None, "")  # local servers' placeholder keys
    remember_header_secrets({"Authorization": "Bearer abc", "X-Request-Id": "req-0042aa19ff"})
    text = "EMPTY ollama abc req-0042aa19ff Bearer"
    assert redact(text) == text


# --- model errors -----------------------------------------------------------------------


@pytest.fixture
def unreachable() -> str:
    """The base URL of a server that was just closed: connecting to it fails at once."""
    with LoopbackServer() as gone:
        return gone.base_url


async def test_openai_401_echoing_the_key_is_redacted(loopback: LoopbackServer) -> None:
    body = f"Incorrect API key provided: {KEY}. You sent Authorization: Bearer {KEY}"
    loopback.enqueue(openai_error(401, body, error_type="invalid_request_error"))
    model = OpenAIChatModel("gpt-test", api_key=KEY, base_url=loopback.openai_base_url)
    with pytest.raises(ModelCallError) as caught:
        await model.generate(QUESTION)
    await model.aclose()
    assert caught.value.status_code == 401
    assert str(caught.value).startswith("openai:gpt-test: HTTP 401: Incorrect API key provided: ")
    assert KEY not in everything_printed(caught.value)
    assert REDACTED in str(caught.value)


async def test_anthropic_401_echoing_the_key_is_redacted(loopback: LoopbackServer) -> None:
    body = f"invalid x-api-key: {ANTHROPIC_KEY}"
    loopback.enqueue(anthropic_error(401, body, error_type="authentication_error"))
    model = AnthropicModel("claude-test", api_key=ANTHROPIC_KEY, base_url=loopback.base_url)
    with pytest.raises(ModelCallError) as caught:
        await model.generate(QUESTION)
    await model.aclose()
    assert caught.value.status_code == 401
    assert ANTHROPIC_KEY not in everything_printed(caught.value)
    # No piece of the key either (its middle, "Secret0123…"); the traceback's file paths
    # may hold the word "secret" (a checkout in a directory of that name).
    assert "secret0123" not in everything_printed(caught.value).lower()


@pytest.mark.parametrize("secret", ["sk-secret", KEY])
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
async def test_credentials_in_base_url_are_redacted(
    unreachable: str, secret: str, provider: str, streamed: bool
) -> None:
    base_url = unreachable.replace("http://", f"http://user:{secret}@") + f"/v1?api-key={secret}"
    model: OpenAIChatModel | AnthropicModel = (
        OpenAIChatModel("gpt-test", api_key="k", base_url=base_url, max_retries=0)
        if provider == "openai"
        else AnthropicModel("claude-test", api_key="k", base_url=base_url, max_retries=0)
    )
    with pytest.raises(ModelCallError, match="could not talk to") as caught:
        await call(model, streamed)
    await model.aclose()
    assert secret not in everything_printed(caught.value)
    assert f"http://{REDACTED}@127.0.0.1" in str(caught.value)
    assert f"api-key={REDACTED}" in str(caught.value)


def test_config_errors_do_not_echo_a_key() -> None:
    env = {"LM_MODEL_FAST": KEY}  # a key pasted into the alias variable by mistake
    with pytest.raises(ModelConfigError, match="LM_MODEL_FAST=") as caught:
        resolve_model("fast", env=env)
    assert KEY not in everything_printed(caught.value)


# --- traces -------------------------------------------------------------------------------


def test_trace_lines_redact_strings_and_exception_texts() -> None:
    out, ctx = io.StringIO(), ExecutionContext()
    detach = JSONLTraceWriter(out).attach(ctx)
    image = ImageContent(data=b"\x89PNG sk-", media_type="image/png")
    ctx.events.emit(ToolCallParseFailed(ctx, f"Authorization: Bearer {KEY}", f"bad {KEY}"))
    ctx.events.emit(
        ToolCallFinished(
            ctx,
            0,
            "fetch",
            {"url": f"https://me:{KEY}@example.com/?token=abc", "nested": [{"key": KEY}]},
            ToolResult(f"fetched with {KEY}", media=(image,)),
            ToolCallError("tool_error", f"failed: {KEY}", RuntimeError(f"refused {KEY}")),
            0.5,
        )
    )
    detach()
    trace = out.getvalue()
    assert KEY not in trace
    parsed, after = (json.loads(line) for line in trace.splitlines())
    assert parsed["content"] == "Authorization: [REDACTED]"
    assert after["args"]["url"] == "https://[REDACTED]@example.com/?token=[REDACTED]"
    assert after["args"]["nested"] == [{"key": "[REDACTED]"}]
    assert after["error"]["exception"] == "RuntimeError: refused [REDACTED]"
    assert after["result"]["media"][0]["data"] == "iVBORyBzay0="  # media bytes stay as sent


async def test_a_model_failure_inside_a_tool_leaves_no_key_in_the_trace(
    loopback: LoopbackServer,
) -> None:
    loopback.enqueue(openai_error(401, f"Incorrect API key provided: {KEY}"))
    upstream: Model = OpenAIChatModel(
        "gpt-test", api_key=KEY, base_url=loopback.openai_base_url, max_retries=0
    )

    @tool
    async def ask_expert(question: str) -> str:
        """Ask a stronger model."""
        return (await upstream.generate([Message.text("user", question)])).text

    out, ctx = io.StringIO(), ExecutionContext()
    detach = JSONLTraceWriter(out, include_messages=True).attach(ctx)
    script = ScriptedModel(
        [
            "<action>\n- tool: ask_expert\n  args: {question: '6 * 7?'}\n</action>",
            "<answer>unknown</answer>",
        ]
    )
    agent = ReActAgent(script, tool_chain=YAMLToolChain().register_tool(ask_expert))
    result = await agent.run("What is 6 * 7?", ctx=ctx)
    detach()
    trace = out.getvalue()
    assert result.answer == "unknown"
    assert "HTTP 401: Incorrect API key provided: [REDACTED]" in trace
    assert KEY not in trace
    assert KEY not in json.dumps([m.text_content() for m in script.requests[-1].messages])
