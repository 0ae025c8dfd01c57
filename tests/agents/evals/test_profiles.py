"""Profiles from the environment and .env files, as the relay PoC configures them."""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

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
from tests.agents.evals.eval_command import eval_cli
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
        ('A="x" y\n', ":1: A: text follows the closing quote"),
    ],
)
def test_env_file_errors_name_the_line(tmp_path: Path, text: str, message: str) -> None:
    file = tmp_path / ".env"
    file.write_text(text)
    with pytest.raises(EnvFileError, match=message):
        load_env_file(file)


# -- no part of a value in any error ---------------------------------------------------

KEY = "OPENAI_API_KEY"
# What a key is made of, less lowercase, "-" and "=": every four characters in a row of
# the errors' own words hold one of those, so a match below can only be the value's.
KEYLIKE = st.text(
    alphabet=st.sampled_from("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./+:@%!~ÄßЖ日"),
    min_size=4,
    max_size=40,
)
ANY_TEXT = st.text(
    alphabet=st.characters(
        blacklist_categories=("Cc", "Cs", "Zs", "Zl", "Zp"), blacklist_characters="'\"#\\="
    ),
    min_size=1,
    max_size=40,
)


def _malformed(shape: str, value: str, more: str) -> tuple[bytes, str]:
    """A malformed line of ``shape`` holding ``value`` (and ``more``), and all the text
    of it that is the value's."""
    lines = {
        "after single quote": (f"{KEY}='{value}'{more}", value + more),
        "after double quote": (f'{KEY}="{value}"{more}', value + more),
        "unclosed single quote": (f"{KEY}='{value}{more}", value + more),
        "unclosed double quote": (f'{KEY}="{value}{more}', value + more),
        "no equals sign": (f"{value}{more}", value + more),
        "export without equals sign": (f"export {KEY} {value}{more}", value + more),
    }
    if shape == "not UTF-8":
        return f"{KEY}={value}".encode() + b"\xff\xfe" + more.encode(), value + more
    line, secret = lines[shape]
    return line.encode(), secret


SHAPES = [
    "after single quote",
    "after double quote",
    "unclosed single quote",
    "unclosed double quote",
    "no equals sign",
    "export without equals sign",
    "not UTF-8",
]


def _error_for(tmp_path: Path, line: bytes) -> str:
    file = tmp_path / ".env"
    file.write_bytes(b"# keys\nOTHER=fine\n" + line + b"\n")
    with pytest.raises(EnvFileError) as raised:
        load_env_file(file)
    message = str(raised.value)
    assert message.startswith(f"{file}:3: "), message  # the line is named
    return message.removeprefix(f"{file}:3: ")


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(shape=st.sampled_from(SHAPES), value=KEYLIKE, more=KEYLIKE)
def test_an_env_file_error_never_holds_four_characters_of_the_value(
    tmp_path: Path, shape: str, value: str, more: str
) -> None:
    line, secret = _malformed(shape, value, more)
    told = _error_for(tmp_path, line).replace(KEY, "")  # the variable is named, by design
    leaked = [secret[i : i + 4] for i in range(len(secret) - 3) if secret[i : i + 4] in told]
    assert leaked == [], told


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(shape=st.sampled_from(SHAPES), value=ANY_TEXT, other=ANY_TEXT, more=ANY_TEXT)
def test_an_env_file_error_is_the_same_whatever_the_value(
    tmp_path: Path, shape: str, value: str, other: str, more: str
) -> None:
    """Any characters at all (lowercase too): the text of the error does not depend on
    the value, so it cannot quote any of it."""
    assume(not shape.startswith("no equals") or "=" not in value + other)
    first = _error_for(tmp_path, _malformed(shape, value, more)[0])
    second = _error_for(tmp_path, _malformed(shape, other, more)[0])
    assert first == second


def test_a_wrongly_quoted_key_is_named_by_line_and_variable_only(tmp_path: Path) -> None:
    """issue 32.2, as reported: the error quoted 20 characters of the key."""
    file = tmp_path / ".env"
    file.write_text("OPENAI_API_KEY='sk-proj-'Zq7Plk3VvXw9RtYuAbCdEf\n")
    run = eval_cli("--suite", "airline", "--replay", "--env-file", str(file), env_file=True)
    assert run.returncode == 2, run.stdout + run.stderr
    assert run.stdout.splitlines()[-1] == (
        f"error: {file}:1: OPENAI_API_KEY: text follows the closing quote (quote the whole "
        "value, or put a space and # before a comment)"
    )
    assert run.stderr == ""
    key = "sk-proj-'Zq7Plk3VvXw9RtYuAbCdEf"
    shown = run.stdout.replace(str(file), "")
    assert [key[i : i + 4] for i in range(len(key) - 3) if key[i : i + 4] in shown] == []


@pytest.mark.parametrize("kind", ["fifo", "directory", "/dev/zero"])
def test_an_env_file_that_is_not_a_regular_file_is_refused_without_opening_it(
    tmp_path: Path, kind: str
) -> None:
    path = tmp_path / ".env" if kind != "/dev/zero" else Path(kind)
    if kind == "fifo":
        os.mkfifo(path)  # reading it would wait for a writer forever
    elif kind == "directory":
        path.mkdir()
    elif not path.exists():
        pytest.skip("no /dev/zero here")
    # In a subprocess (with a timeout): reading a FIFO or /dev/zero would never end.
    run = eval_cli("--suite", "airline", "--replay", "--env-file", str(path), env_file=True)
    assert run.returncode == 2, run.stdout + run.stderr
    told = run.stdout.splitlines()[-1]
    assert re.fullmatch(
        rf"error: --env-file {re.escape(str(path))}: a (FIFO|directory|device), not a regular file",
        told,
    )
    assert run.stderr == ""


def test_a_default_env_that_is_a_folder_is_skipped(tmp_path: Path) -> None:
    """``.env`` is a common name for a virtualenv: only --env-file must be a file."""
    (tmp_path / ".env").mkdir()
    assert eval_environment(tmp_path / ".env", {"A": "env"}) == {"A": "env"}


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


def test_a_key_read_from_an_env_file_is_blanked_wherever_we_write(tmp_path: Path) -> None:
    """A key that only a .env holds is the process's from then on: a log line or error
    that echoes it shows [REDACTED], as for a key in the environment itself."""
    from toolchain._redact import redact, remember_environment

    file = tmp_path / ".env"
    file.write_text("ACME_EVAL_API_KEY=zz-9f81c07e5d4b3a2\n", encoding="utf-8")
    try:
        assert redact("bad key zz-9f81c07e5d4b3a2") == "bad key zz-9f81c07e5d4b3a2"
        eval_environment(file, {})
        assert redact("bad key zz-9f81c07e5d4b3a2") == "bad key [REDACTED]"
    finally:
        remember_environment()  # back to the process's own
