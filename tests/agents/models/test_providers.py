"""Model strings lmthing users write: built-in providers, overrides and typo hints."""

from __future__ import annotations

import socket

import pytest

from agents.models import (
    BUILTIN_PROVIDERS,
    AnthropicModel,
    Message,
    ModelConfigError,
    OpenAIChatModel,
    provider_settings,
    resolve_model,
)
from tests.support.loopback import LoopbackServer
from tests.support.openai_replies import openai_completion

HELLO = [Message.text("user", "hello")]


@pytest.mark.parametrize(
    ("spec", "env", "base_url", "key"),
    [
        ("openai:gpt-4o", {"OPENAI_API_KEY": "sk-o"}, None, "sk-o"),
        ("anthropic:claude-3-5-sonnet-20241022", {"ANTHROPIC_API_KEY": "sk-a"}, None, "sk-a"),
        (
            "google:gemini-1.5-pro",
            {"GEMINI_API_KEY": "g-1"},
            "https://generativelanguage.googleapis.com/v1beta/openai/",
            "g-1",
        ),
        (
            "mistral:mistral-large-latest",
            {"MISTRAL_API_KEY": "m"},
            "https://api.mistral.ai/v1",
            "m",
        ),
        (
            "groq:llama-3.3-70b-versatile",
            {"GROQ_API_KEY": "q"},
            "https://api.groq.com/openai/v1",
            "q",
        ),
        ("deepseek:deepseek-chat", {"DEEPSEEK_API_KEY": "d"}, "https://api.deepseek.com/v1", "d"),
        (
            "openrouter:meta-llama/llama-3.1-8b-instruct",
            {"OPENROUTER_API_KEY": "r"},
            "https://openrouter.ai/api/v1",
            "r",
        ),
        ("ollama:llama3", {}, "http://localhost:11434/v1", "ollama"),
    ],
)
def test_builtin_providers_have_their_usual_base_url_and_key(
    spec: str, env: dict[str, str], base_url: str | None, key: str
) -> None:
    settings = provider_settings(spec, env=env)
    assert settings.base_url == base_url
    assert settings.api_key == key
    assert settings.name == spec
    expected = AnthropicModel if settings.api_type == "anthropic" else OpenAIChatModel
    assert isinstance(resolve_model(spec, env=env), expected)


def test_every_builtin_but_anthropic_speaks_openai() -> None:
    types = {name: p.api_type for name, p in BUILTIN_PROVIDERS.items()}
    assert types.pop("anthropic") == "anthropic"
    assert set(types.values()) == {"openai"}
    assert {"google", "mistral", "groq", "deepseek", "openrouter", "ollama"} <= set(types)


def test_ollama_needs_no_key_but_uses_one_when_set() -> None:
    model = resolve_model("ollama:llama3", env={})
    assert isinstance(model, OpenAIChatModel)
    assert model.name == "ollama:llama3"
    assert provider_settings("ollama:llama3", env={"OLLAMA_API_KEY": "mine"}).api_key == "mine"


def test_google_reads_gemini_key_first_then_google_key() -> None:
    both = {"GEMINI_API_KEY": "gem", "GOOGLE_API_KEY": "goo"}
    assert provider_settings("google:gemini-2.0-flash", env=both).api_key == "gem"
    only_google = {"GOOGLE_API_KEY": "goo"}
    assert provider_settings("google:gemini-2.0-flash", env=only_google).api_key == "goo"


def test_google_without_a_key_names_both_variables() -> None:
    with pytest.raises(ModelConfigError, match="GEMINI_API_KEY or GOOGLE_API_KEY"):
        resolve_model("google:gemini-1.5-pro", env={})


@pytest.mark.parametrize("provider", ["mistral", "groq", "deepseek", "openrouter"])
def test_hosted_builtins_require_their_key(provider: str) -> None:
    with pytest.raises(ModelConfigError, match=f"{provider.upper()}_API_KEY"):
        resolve_model(f"{provider}:some-model", env={})


def test_env_base_url_overrides_a_builtin_one() -> None:
    env = {"OLLAMA_API_BASE": "http://gpu-box:11434/v1", "GROQ_API_BASE": "http://proxy/v1"}
    assert provider_settings("ollama:llama3", env=env).base_url == "http://gpu-box:11434/v1"
    env["GROQ_API_KEY"] = "q"
    assert provider_settings("groq:llama3-8b", env=env).base_url == "http://proxy/v1"


def test_env_api_type_overrides_a_builtin_one() -> None:
    env = {"OPENROUTER_API_KEY": "r", "OPENROUTER_API_TYPE": "anthropic"}
    assert isinstance(resolve_model("openrouter:claude", env=env), AnthropicModel)


async def test_builtin_reaches_an_overridden_endpoint(loopback: LoopbackServer) -> None:
    env = {"MISTRAL_API_KEY": "m-key", "MISTRAL_API_BASE": loopback.openai_base_url}
    model = resolve_model("mistral:mistral-small-latest", env=env)
    assert isinstance(model, OpenAIChatModel)
    loopback.enqueue(openai_completion("bonjour"))
    assert (await model.generate(HELLO)).text == "bonjour"
    await model.aclose()
    assert loopback.last_request.headers["authorization"] == "Bearer m-key"
    assert loopback.last_request.json()["model"] == "mistral-small-latest"


def test_aliases_reach_builtin_providers() -> None:
    env = {"LM_MODEL_LARGE": "google:gemini-1.5-pro", "GOOGLE_API_KEY": "g"}
    assert resolve_model("large", env=env).name == "google:gemini-1.5-pro"


def test_custom_provider_from_the_seed_still_works() -> None:
    env = {
        "ZAI_API_KEY": "z",
        "ZAI_API_BASE": "https://api.z.ai/api/coding/paas/v4",
        "ZAI_API_TYPE": "openai",
    }
    settings = provider_settings("zai:glm-4.6", env=env)
    assert (settings.base_url, settings.api_type, settings.api_key) == (
        "https://api.z.ai/api/coding/paas/v4",
        "openai",
        "z",
    )
    assert isinstance(resolve_model("zai:glm-4.6", env=env), OpenAIChatModel)


@pytest.mark.parametrize(
    ("spec", "suggestion"),
    [
        ("opnai:gpt-4o", "openai"),
        ("antropic:claude-3-5-sonnet", "anthropic"),
        ("olama:llama3", "ollama"),
        ("gogle:gemini-1.5-pro", "google"),
        ("mistrl:mistral-large-latest", "mistral"),
    ],
)
def test_mistyped_provider_gets_did_you_mean(spec: str, suggestion: str) -> None:
    with pytest.raises(ModelConfigError, match=f"did you mean '{suggestion}'"):
        resolve_model(spec, env={})


def test_did_you_mean_knows_custom_providers() -> None:
    env = {"ZAI_API_BASE": "http://z", "ZAI_API_KEY": "z", "MYLAB_API_BASE": "http://m"}
    with pytest.raises(ModelConfigError, match="did you mean 'mylab'"):
        resolve_model("mylb:x", env=env)


def test_a_far_off_provider_gets_no_suggestion() -> None:
    with pytest.raises(ModelConfigError) as caught:
        resolve_model("zzzzqqq:x", env={})
    assert "did you mean" not in str(caught.value)
    assert "unknown model provider 'zzzzqqq'" in str(caught.value)


def test_mistyped_alias_gets_did_you_mean() -> None:
    env = {"LM_MODEL_FAST": "openai:gpt-4o-mini"}
    with pytest.raises(ModelConfigError, match="did you mean 'fast'"):
        resolve_model("fsat", env=env)


def test_key_never_appears_in_errors() -> None:
    env = {"OPENAI_API_KEY": "sk-secret-123", "OPENAI_API_TYPE": "gemini"}
    with pytest.raises(ModelConfigError) as caught:
        resolve_model("openai:gpt-4o", env=env)
    assert "sk-secret-123" not in str(caught.value)


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("building a model must not touch the network")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


@pytest.mark.usefixtures("no_network")
@pytest.mark.parametrize("provider", sorted(BUILTIN_PROVIDERS))
def test_building_a_model_makes_no_network_call(provider: str) -> None:
    env = {f"{provider.upper()}_API_KEY": "k", "GEMINI_API_KEY": "k"}
    model = resolve_model(f"{provider}:some-model", env=env)
    assert model.name == f"{provider}:some-model"


def test_builtin_openai_compatible_providers_load_only_the_openai_sdk() -> None:
    from tests.agents.models.sdk_imports import run_fresh

    seen = run_fresh(
        """
        from agents.models import provider_settings, resolve_model
        provider_settings("groq:llama3", env={"GROQ_API_KEY": "k"})
        loaded("settings")
        resolve_model("ollama:llama3", env={})
        loaded("ollama")
        """
    )
    assert seen["settings"] == set()
    assert "openai" in seen["ollama"]
    assert "anthropic" not in seen["ollama"]
