"""`resolve_model`: provider strings, aliases, custom providers and their error messages."""

from __future__ import annotations

import pytest

from agents.models import (
    AnthropicModel,
    Message,
    ModelConfigError,
    OpenAIChatModel,
    ScriptedModel,
    resolve_model,
)
from tests.support.anthropic_replies import anthropic_message
from tests.support.loopback import LoopbackServer
from tests.support.openai_replies import openai_completion

HELLO = [Message.text("user", "hello")]


def test_a_model_is_returned_as_is() -> None:
    model = ScriptedModel(["x"])
    assert resolve_model(model) is model


async def test_openai_provider_uses_its_key_and_base(loopback: LoopbackServer) -> None:
    env = {"OPENAI_API_KEY": "sk-open", "OPENAI_API_BASE": loopback.openai_base_url}
    model = resolve_model("openai:gpt-4o-mini", env=env)
    assert isinstance(model, OpenAIChatModel)
    assert model.name == "openai:gpt-4o-mini"
    loopback.enqueue(openai_completion("hi"))
    await model.generate(HELLO)
    await model.aclose()
    request = loopback.last_request
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-open"
    assert request.json()["model"] == "gpt-4o-mini"


async def test_anthropic_provider_uses_its_key_and_base(loopback: LoopbackServer) -> None:
    env = {"ANTHROPIC_API_KEY": "sk-ant", "ANTHROPIC_API_BASE": loopback.base_url}
    model = resolve_model("anthropic:claude-haiku-4-5", env=env)
    assert isinstance(model, AnthropicModel)
    assert model.name == "anthropic:claude-haiku-4-5"
    loopback.enqueue(anthropic_message("hi"))
    await model.generate(HELLO)
    await model.aclose()
    request = loopback.last_request
    assert request.path == "/v1/messages"
    assert "sk-ant" in (request.headers.get("x-api-key") or request.headers["authorization"])
    assert request.json()["model"] == "claude-haiku-4-5"


def test_provider_names_ignore_case_and_model_ids_keep_their_colons() -> None:
    env = {"OLLAMA_API_BASE": "http://localhost:11434/v1", "OLLAMA_API_KEY": "unused"}
    model = resolve_model("Ollama:llama3.2:3b", env=env)
    assert isinstance(model, OpenAIChatModel)
    assert model.name == "ollama:llama3.2:3b"


@pytest.mark.parametrize(
    ("api_type", "expected"),
    [(None, OpenAIChatModel), ("openai", OpenAIChatModel), ("anthropic", AnthropicModel)],
)
def test_custom_providers_speak_the_configured_api(
    api_type: str | None, expected: type[object]
) -> None:
    env = {"MY_LAB_API_BASE": "http://127.0.0.1:1/v1", "MY_LAB_API_KEY": "k"}
    if api_type is not None:
        env["MY_LAB_API_TYPE"] = api_type
    assert isinstance(resolve_model("my-lab:big-model", env=env), expected)


async def test_custom_provider_reaches_its_base_url(loopback: LoopbackServer) -> None:
    env = {
        "VLLM_API_BASE": loopback.openai_base_url,
        "VLLM_API_KEY": "local",
        "LM_MODEL_SMART": "vllm:qwen3-8b",
    }
    model = resolve_model("smart", env=env)
    assert model.name == "vllm:qwen3-8b"
    loopback.enqueue(openai_completion("hi"))
    assert (await model.generate(HELLO)).text == "hi"
    assert isinstance(model, OpenAIChatModel)
    await model.aclose()
    assert loopback.last_request.headers["authorization"] == "Bearer local"


def test_aliases_normalise_their_variable_name() -> None:
    env = {"LM_MODEL_MY_FAST_MODEL_2": "anthropic:claude-haiku-4-5", "ANTHROPIC_API_KEY": "k"}
    model = resolve_model("my-fast.model-2", env=env)
    assert model.name == "anthropic:claude-haiku-4-5"


def test_env_defaults_to_the_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LM_MODEL_DEFAULT", "openai:gpt-4o-mini")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    assert resolve_model("default").name == "openai:gpt-4o-mini"


@pytest.mark.parametrize(
    ("spec", "env", "named"),
    [
        ("openai:gpt-4o-mini", {}, ["OPENAI_API_KEY"]),
        ("anthropic:claude-haiku-4-5", {"ANTHROPIC_API_KEY": "  "}, ["ANTHROPIC_API_KEY"]),
        ("foo:bar", {"FOO_API_BASE": "http://127.0.0.1:1"}, ["FOO_API_KEY"]),
        ("foo:bar", {}, ["unknown model provider 'foo'", "FOO_API_BASE", "FOO_API_KEY"]),
        ("fast", {}, ["LM_MODEL_FAST"]),
        ("fast", {"LM_MODEL_FAST": "gpt-4o"}, ["LM_MODEL_FAST", "provider:model_id"]),
        ("openai:", {"OPENAI_API_KEY": "k"}, ["provider:model_id"]),
        ("", {}, ["empty model name"]),
        ("scripted", {}, ["LM_MODEL_SCRIPTED", "ScriptedModel"]),
        ("scripted:x", {}, ["SCRIPTED_API_BASE"]),
        (
            "foo:bar",
            {"FOO_API_BASE": "http://x", "FOO_API_KEY": "k", "FOO_API_TYPE": "gemini"},
            ["FOO_API_TYPE", "openai or anthropic"],
        ),
    ],
)
def test_configuration_errors_name_what_to_set(
    spec: str, env: dict[str, str], named: list[str]
) -> None:
    with pytest.raises(ModelConfigError) as caught:
        resolve_model(spec, env=env)
    for text in named:
        assert text in str(caught.value)
