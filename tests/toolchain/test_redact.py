"""toolchain's ``redact``: what a connection sent never comes back out, whatever its shape."""

from __future__ import annotations

import base64
import time
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from toolchain._redact import (
    MAX_SECRETS,
    REDACTED,
    credential_values,
    redact,
    redact_data,
    remember_environment,
    remember_secret,
)

SECRET = st.text(st.characters(categories=["L", "N"], include_characters="-_."), min_size=4)


@settings(max_examples=300, deadline=None)
@given(st.text(), SECRET, st.text())
def test_a_known_value_never_survives_and_redacting_again_changes_nothing(
    before: str, secret: str, after: str
) -> None:
    assume(secret not in REDACTED)
    once = redact(before + secret + after, [secret])
    assert secret not in once
    assert redact(once, [secret]) == once


def test_the_values_a_connection_sends_are_found() -> None:
    found = credential_values(
        "https://bot:p%40ss@mcp.example.com/x?api_key=k1k1k1&session_token=s2s2s2&q=docs",
        {"Authorization": "Bearer b3b3b3b3", "Accept": "application/json"},
        {"GITHUB_TOKEN": "g4g4g4", "PATH": "/usr/bin"},
        ["--db-password", "d5d5d5", "--port", "8080"],
    )
    assert found == {
        "p@ss",
        "p%40ss",
        "bot:p@ss",
        "bot:p%40ss",
        "k1k1k1",
        "s2s2s2",
        "Bearer b3b3b3b3",
        "b3b3b3b3",
        "g4g4g4",
        "d5d5d5",
    }


def cpu_seconds(text: str, known: list[str] | None = None) -> float:
    """The best of three CPU times of redacting ``text``: other processes do not count."""
    best = float("inf")
    for _ in range(3):
        started = time.process_time()
        redact(text, known or [])
        best = min(best, time.process_time() - started)
    return best


def test_redacting_is_linear() -> None:
    unit = "token=abc https://u:p@h/?key=v OPENAI_API_KEY=sk-" + "x" * 30 + " plain words. "

    def cost(text: str) -> float:
        return cpu_seconds(text, ["plain-secret-42"])

    ratio = cost(unit * 8_000) / max(cost(unit * 2_000), 1e-6)
    assert ratio < 8, ratio  # 4 times the text: about 4 times the time


# -- credential shapes ---------------------------------------------------------------------
# Built from pieces so that no whole key sits in the source (secret scanners read tests).
AWS_KEY_ID = "AKIA" + "IOSFODNN7EXAMPLE"
AWS_SESSION_KEY_ID = "ASIA" + "Y34FZKBOKMUTVV7A"
GITHUB_TOKENS = [
    prefix + "_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    for prefix in ("ghp", "gho", "ghu", "ghs", "ghr")
]
GITHUB_PAT = "github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFG"
SLACK_TOKENS = ["xox" + kind + "-1234567890-0987654321-AbCdEfGhIjKl" for kind in "abpr"]
STRIPE_KEYS = [
    kind + "_" + mode + "_" + "51HqLyjWDarjtT1zdp7dc"
    for kind in ("sk", "rk")
    for mode in ("live", "test")
]
JWT = (
    "eyJ"
    + "hbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ"
    + "zdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
OPENAI_KEY = "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"
SHAPED = [
    AWS_KEY_ID,
    AWS_SESSION_KEY_ID,
    *GITHUB_TOKENS,
    GITHUB_PAT,
    "glpat-" + "xYz12AbCdEfGhIjKlMnOp",
    "npm_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    *SLACK_TOKENS,
    *STRIPE_KEYS,
    "whsec_" + "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
    JWT,
    OPENAI_KEY,
]


@pytest.mark.parametrize("key", SHAPED)
@pytest.mark.parametrize(
    "around", ["{}", "key={}.", "failed: '{}'", "({})", '{{"k": "{}"}}', "x\n{}\ny"]
)
def test_a_key_of_a_known_shape_is_blanked_wherever_it_stands(key: str, around: str) -> None:
    text = around.format(key)
    redacted = redact(text)
    assert key not in redacted and REDACTED in redacted
    assert redacted == around.format(REDACTED)


def test_keys_glued_together_are_blanked_as_one_and_redacting_again_changes_nothing() -> None:
    # An AWS key id has a fixed length: what follows it may be another key.
    glued = AWS_KEY_ID + AWS_SESSION_KEY_ID + JWT
    assert redact(f"keys: {glued}!") == f"keys: {REDACTED}!"
    assert redact(redact(f"keys: {glued}!")) == f"keys: {REDACTED}!"


@pytest.mark.parametrize(
    "text",
    [
        "max_tokens=64 and input_tokens=12",
        "request 3f2b8c1e-9d4a-4e6b-8f7c-2a1b0c9d8e7f failed",  # a UUID is an id
        "commit 4b825dc642cb6eb9a060e54bf8d69288fbee4904 on main",  # a 40-hex digest
        "sha256:" + "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "ASIAN MARKETS and AKIAKI the cat",
        "risk_test_case and task_live_update",
        "the eyJ header of a token, eyJ alone",
        "ghp_short and xoxb-1",
        "github_pat_ is a prefix",
    ],
)
def test_ordinary_text_keeps_its_look_alikes(text: str) -> None:
    assert redact(text) == text


SHAPED_KEYS = st.sampled_from(SHAPED)
PIECES = st.sampled_from(
    ["eyJ", ".", "-", "_", "AKIA", "ghp_", "xoxb-", "sk_live_", "=", "://", "@", " ", REDACTED]
)
NOISE = st.lists(st.one_of(PIECES, st.text(max_size=6)), max_size=10).map("".join)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(NOISE, SHAPED_KEYS), max_size=6).map("".join))
def test_redacting_text_with_keys_of_every_shape_is_idempotent(text: str) -> None:
    once = redact(text)
    assert redact(once) == once


@settings(max_examples=300, deadline=None)
@given(NOISE, SHAPED_KEYS, NOISE)
def test_a_key_of_a_known_shape_never_survives_what_surrounds_it(
    before: str, key: str, after: str
) -> None:
    # After a separator: glued to a word before it, a key of most shapes reads as the
    # tail of that word (``risk-…`` holds no ``sk-`` key).
    assert key not in redact(before + " " + key + after)


@pytest.mark.parametrize(
    "unit",
    [
        "eyJ",  # a JWT's start, again and again in one run
        "eyJaaaaaaa.",
        "a.",  # a URL scheme's start after every dot
        AWS_KEY_ID,
        GITHUB_TOKENS[0] + " ",
        "xoxb-1",
        "sk_live_",
        JWT + " ",
    ],
)
def test_redacting_hostile_runs_of_the_new_shapes_is_linear(unit: str) -> None:
    repeats = max(1, 40_000 // len(unit))
    ratio = cpu_seconds(unit * repeats * 4) / max(cpu_seconds(unit * repeats), 1e-6)
    assert ratio < 8, ratio  # 4 times the text: about 4 times the time


# -- the process's own credentials -------------------------------------------------------


def test_the_environment_s_credentials_are_blanked_and_paths_are_not(tmp_path: Path) -> None:
    key_file = tmp_path / "service-account.json"
    key_file.write_text("{}")
    try:
        remember_environment(
            {
                "ACME_API_KEY": "acme-8ad1e0f9c2",
                "DEPLOY_TOKEN": "dt.77Qx-91aa",
                "DB_PASSWORD": "hunter2-horse",
                "GOOGLE_APPLICATION_CREDENTIALS": str(key_file),
                "DATABASE_URL": "postgres://app:pg-s3cret-pw@db.internal:5432/app",
                "PIP_INDEX_URL": "https://t0ken-abcdef12@mirror.internal/simple",
                "SHORT_TOKEN": "abc",
                "HOME": "/home/ada-lovelace",
            }
        )
        said = redact(
            "acme-8ad1e0f9c2 dt.77Qx-91aa hunter2-horse pg-s3cret-pw "
            f"{key_file} abc /home/ada-lovelace"
        )
        assert said == (
            f"{REDACTED} {REDACTED} {REDACTED} {REDACTED} {key_file} abc /home/ada-lovelace"
        )
        # A token as a URL's user goes as Basic base64("<token>:"): blanked as sent, too.
        basic = base64.b64encode(b"t0ken-abcdef12:").decode()
        assert redact(f"t0ken-abcdef12 sent Basic {basic}") == f"{REDACTED} sent Basic {REDACTED}"
    finally:
        remember_environment()  # the process's own again
    assert redact("acme-8ad1e0f9c2") == "acme-8ad1e0f9c2"


def test_the_environment_s_credentials_outlast_every_value_remembered_after() -> None:
    try:
        remember_environment({"ACME_API_KEY": "acme-8ad1e0f9c2"})
        remember_secret(*(f"sent-value-{n:05d}" for n in range(MAX_SECRETS + 10)))
        assert redact("acme-8ad1e0f9c2") == REDACTED
    finally:
        remember_environment()


# -- structured data: by field name, at any depth ----------------------------------------


def test_data_is_blanked_by_field_name_at_any_depth_and_kept_elsewhere() -> None:
    data = {
        "query": "SELECT 1",
        "max_tokens": 64,
        "connections": [
            {"host": "db", "db_password": "pw-1", "port": 5432},
            {"headers": {"Authorization": "Basic Ym9iOnB3", "X-Api-Key": 12345, "Accept": "*/*"}},
        ],
        "token": ["a", "b"],
        "secret": {"nested": "whole"},
        "password": None,
        "auth": True,
    }
    assert redact_data(data) == {
        "query": "SELECT 1",
        "max_tokens": 64,
        "connections": [
            {"host": "db", "db_password": REDACTED, "port": 5432},
            {"headers": {"Authorization": REDACTED, "X-Api-Key": REDACTED, "Accept": "*/*"}},
        ],
        "token": REDACTED,
        "secret": REDACTED,
        "password": None,
        "auth": True,
    }
    schema = {"properties": {"password": {"type": "string", "description": "Bearer x.y"}}}
    assert redact_data(schema, by_name=False) == {
        "properties": {"password": {"type": "string", "description": "Bearer [REDACTED]"}}
    }
