"""toolchain's ``redact``: what a connection sent never comes back out, whatever its shape."""

from __future__ import annotations

import time

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from toolchain._redact import REDACTED, credential_values, redact

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


def test_redacting_is_linear() -> None:
    unit = "token=abc https://u:p@h/?key=v OPENAI_API_KEY=sk-" + "x" * 30 + " plain words. "

    def cost(text: str) -> float:
        best = float("inf")
        for _ in range(3):
            started = time.process_time()
            redact(text, ["plain-secret-42"])
            best = min(best, time.process_time() - started)
        return best

    ratio = cost(unit * 8_000) / max(cost(unit * 2_000), 1e-6)
    assert ratio < 8, ratio  # 4 times the text: about 4 times the time
