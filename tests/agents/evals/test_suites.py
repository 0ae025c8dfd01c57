"""Shipped suites: found by name wherever the package lives, replayed with no model named.

`tests/test_install.py` runs the same commands from a built wheel in a fresh venv.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.evals.suites import SuiteError, shipped_suites, suite
from tests.agents.evals.eval_command import eval_cli


def test_list_suites_names_each_with_its_size() -> None:
    run = eval_cli("--list-suites")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert [line.split(":")[0] for line in lines] == ["airline", "relay"]
    assert lines[1].startswith("relay: 6 cases; the tool-context-relay cases")


@pytest.mark.parametrize(("name", "count"), [("relay", 6), ("airline", 2)])
@pytest.mark.parametrize("protocol", ["text", "native"])
def test_a_suite_replays_offline_without_a_model(name: str, count: int, protocol: str) -> None:
    run = eval_cli("--suite", name, "--replay", "--protocol", protocol, "--color", "never")
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"{count} passed, 0 failed" in run.stdout


def test_an_unknown_suite_is_a_usage_error_naming_the_others() -> None:
    run = eval_cli("--suite", "relya", "--replay", "--color", "never")
    assert run.returncode == 2
    assert "error: no shipped suite 'relya'; the suites are: airline, relay" in run.stdout


def test_suites_are_folders_of_the_installed_package() -> None:
    relay = suite("relay")
    assert relay.folder == Path(__file__).resolve().parents[3] / "agents/evals/prompts/relay"
    assert [p.stem for p in relay.case_files()] == [f"case{n}" for n in range(5)] + ["web1"]
    assert all((relay.folder / "cassettes" / p.stem).is_dir() for p in relay.case_files())
    assert set(shipped_suites()) == {"relay", "airline"}
    with pytest.raises(SuiteError, match="no shipped suite 'x'"):
        suite("x")
