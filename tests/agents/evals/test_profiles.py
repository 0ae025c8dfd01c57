"""Profiles from the environment and .env files, as the relay PoC configures them."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agents.evals.profiles import (
    EnvFileError,
    ModelTarget,
    default_profile,
    eval_environment,
    is_reasoning_model,
    load_env_file,
    model_name,
    resolve_profile,
)
from agents.models import Message, ModelConfigError, OpenAIChatModel
from tests.support.loopback import LoopbackServer
from tests.support.openai_replies import openai_completion

# The PoC's README example, as a .env file.
POC_ENV = """\
# provider definitions
OPENAI_API_KEY="sk-your-openai-key"
OPENAI_MODEL="gpt-4o"

OPENROUTER_API_KEY="sk-your-openrouter-key"
OPENROUTER_BASE_URL="https://openrouter.ai/v1"

LOCAL_BASE_URL="http://127.0.0.1:1234/v1"
LOCAL_MODEL="speaksleash/Bielik-11B-v3.0-Instruct-GGUF:Bielik-11B-v3.0-Instruct.Q8_0.gguf"

# profile wiring
OPENAI_PROVIDER=openai
OPENAI_MODEL=gpt-4o

DEEPSEEK_PROVIDER=openrouter
DEEPSEEK_MODEL="deepseek/deepseek-v3.2"
DEEPSEEK_BACKEND_PROVIDER="atlas-cloud/fp8"

LOCAL_PROVIDER=local
LOCAL_MODEL="speaksleash/Bielik-11B-v3.0-Instruct-GGUF:Bielik-11B-v3.0-Instruct.Q8_0.gguf"
LOCAL_TEMPERATURE=0.1
"""


@pytest.fixture
def poc_env(tmp_path: Path) -> dict[str, str]:
    file = tmp_path / ".env"
    file.write_text(POC_ENV)
    return load_env_file(file)


def test_the_pocs_env_example_gives_its_three_profiles(poc_env: dict[str, str]) -> None:
    openai = resolve_profile("openai", env=poc_env)
    assert (openai.name, openai.base_url, openai.api_key) == (
        "openai:gpt-4o",
        None,
        "sk-your-openai-key",
    )
    assert openai.extra_body() == {}
    deepseek = resolve_profile("DeepSeek", env=poc_env)
    assert deepseek.name == "openrouter:deepseek/deepseek-v3.2"
    assert deepseek.base_url == "https://openrouter.ai/v1"
    assert deepseek.extra_body() == {
        "provider": {
            "allow_fallbacks": False,
            "data_collection": "deny",
            "order": ["atlas-cloud/fp8"],
        }
    }
    local = resolve_profile("local", env=poc_env)
    assert local.model.startswith("speaksleash/Bielik") and local.temperature == 0.1
    assert local.base_url == "http://127.0.0.1:1234/v1" and local.api_key == ""
    assert "sk-your" not in repr(openai)  # keys stay out of reprs


def test_model_overrides_and_fallbacks(poc_env: dict[str, str]) -> None:
    assert resolve_profile("deepseek", model="deepseek/deepseek-r1", env=poc_env).model == (
        "deepseek/deepseek-r1"
    )
    assert resolve_profile("openai", env={"OPENAI_API_KEY": "k"}).model == "gpt-4.1-mini"
    assert resolve_profile("groq", env={}).base_url == "https://api.groq.com/openai/v1"


def test_the_default_profile_variable() -> None:
    assert default_profile({}) == "openai"
    assert default_profile({"TOOL_CONTEXT_RELAY_PROFILE": "local"}) == "local"
    assert default_profile(
        {"AGENTS_EVAL_PROFILE": "deepseek", "TOOL_CONTEXT_RELAY_PROFILE": "x"}
    ) == ("deepseek")


def test_configuration_errors_name_the_variables() -> None:
    with pytest.raises(ModelConfigError, match="BIELIK_PROVIDER"):
        resolve_profile("bielik", env={})
    with pytest.raises(ModelConfigError, match=r"LOCAL_TEMPERATURE='warm' is not a number"):
        resolve_profile("local", env={"LOCAL_TEMPERATURE": "warm"})
    remote = resolve_profile("corp", env={"CORP_MODEL": "m"})
    with pytest.raises(ModelConfigError, match="CORP_BASE_URL or CORP_BASEURL or CORP_API_BASE"):
        remote.build()
    keyless = resolve_profile("corp", env={"CORP_BASE_URL": "https://llm.example.com/v1"})
    with pytest.raises(ModelConfigError, match="CORP_API_KEY or CORP_COMPAT_API_KEY"):
        keyless.build()
    with pytest.raises(ModelConfigError, match="OPENAI_API_KEY"):
        resolve_profile("openai", env={}).build()


def test_a_local_server_needs_no_key(poc_env: dict[str, str]) -> None:
    model = resolve_profile("local", env=poc_env).build()
    assert isinstance(model, OpenAIChatModel)
    assert model.name.startswith("local:speaksleash/")


def test_openrouter_requests_carry_the_routing_rules() -> None:
    with LoopbackServer() as server:
        server.enqueue(openai_completion("hi"))
        env = {
            "DEEPSEEK_PROVIDER": "openrouter",
            "DEEPSEEK_MODEL": "deepseek/deepseek-v3.2",
            "DEEPSEEK_BACKEND_PROVIDER": "atlas-cloud/fp8",
            "OPENROUTER_API_KEY": "sk-or-test",
            "OPENROUTER_BASE_URL": server.openai_base_url,
        }
        model = resolve_profile("deepseek", env=env).build()

        async def ask() -> str:
            reply = await model.generate([Message.text("user", "hi")])
            assert isinstance(model, OpenAIChatModel)
            await model.aclose()
            return reply.text

        assert asyncio.run(ask()) == "hi"
        body = server.last_request.json()
    assert body["provider"] == {
        "allow_fallbacks": False,
        "data_collection": "deny",
        "order": ["atlas-cloud/fp8"],
    }
    assert body["model"] == "deepseek/deepseek-v3.2"
    assert body["messages"] == [{"role": "user", "content": "hi"}]


def test_env_files(tmp_path: Path) -> None:
    file = tmp_path / ".env"
    file.write_text(
        "\ufeff# comment\n\nexport A=1\nB = ' spaced $HOME '\n"
        'C="tab\\tquote\\" hash # kept" # gone\n'
        "D=bare value # gone\nE=\nF=a#b\n"
    )
    assert load_env_file(file) == {
        "A": "1",
        "B": " spaced $HOME ",
        "C": 'tab\tquote" hash # kept',
        "D": "bare value",
        "E": "",
        "F": "a#b",
    }


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("JUST A LINE\n", ":1: expected KEY=value"),
        ("A=1\n2B=x\n", ":2: expected KEY=value"),
        ('A="open\n', ":1: A: the double quote is not closed"),
        ("A='open\n", ":1: A: the single quote is not closed"),
        ('A="x" y\n', ":1: A: unexpected text after the closing quote"),
    ],
)
def test_env_file_errors_name_the_line(tmp_path: Path, text: str, message: str) -> None:
    file = tmp_path / ".env"
    file.write_text(text)
    with pytest.raises(EnvFileError, match=message):
        load_env_file(file)


def test_the_environment_wins_over_the_env_file(tmp_path: Path) -> None:
    file = tmp_path / ".env"
    file.write_text("A=file\nB=file\n")
    assert eval_environment(file, {"A": "env"}) == {"A": "env", "B": "file"}
    assert eval_environment(tmp_path / "missing", {"A": "env"}) == {"A": "env"}
    assert eval_environment(None, {}) == {}


def test_model_strings_and_reasoning_models() -> None:
    assert model_name("Fast", {"LM_MODEL_FAST": "Groq:llama-3.3"}) == "groq:llama-3.3"
    target = ModelTarget.from_string("openai:gpt-5-mini", {})
    assert target.name == "openai:gpt-5-mini" and target.reasoning
    with pytest.raises(ModelConfigError, match="OPENAI_API_KEY"):
        target.build()  # only building needs a key
    assert not ModelTarget.from_string("openai:gpt-4o", {}).reasoning
    assert is_reasoning_model("o4-mini") and not is_reasoning_model("llama3")
