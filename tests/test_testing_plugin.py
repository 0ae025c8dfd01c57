"""``toolchain.testing``, the pytest plugin users snapshot-test their own tools with.

Most tests here run a user's test file through pytest itself (``pytester``): snapshots
written by ``--snapshot-update``, read back on the next run, failing on a change.
"""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Literal

import pytest
from syrupy.assertion import SnapshotAssertion

from agents import ReActAgent
from agents.models import ScriptedModel
from formats import MarkdownFormat, TextFormat, XMLFormat
from toolchain import JSONToolChain, tool
from toolchain.testing import (
    FIXED_DATE,
    MarkdownSnapshotExtension,
    XMLSnapshotExtension,
    fixed_clock,
    run_tool,
    snapshot_extension_for,
)

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[1]

# A user's test file: their own tool, snapshot in both formats, in a few lines.
USER_TESTS = """
import pytest
from pydantic import BaseModel

from formats import MarkdownFormat, XMLFormat
from toolchain import ExecutionContext, Tool, ToolResult
from toolchain.testing import run_tool


class CityIn(BaseModel):
    city: str


class Forecast(Tool[CityIn, dict[str, object]]):
    name = "forecast"
    description = "Weather forecast for a city."

    def call(self, ctx: ExecutionContext, input: CityIn) -> ToolResult[dict[str, object]]:
        return ToolResult({"city": input.city, "high_c": HIGH_C})


def test_forecast(snapshot_md, snapshot_xml):
    assert run_tool(Forecast(), {"city": "Paris"}, text_format=MarkdownFormat()).text == snapshot_md
    assert run_tool(Forecast(), {"city": "Paris"}, calls="yaml").text == snapshot_xml


@pytest.mark.parametrize("fmt", [MarkdownFormat(), XMLFormat()], ids=["md", "xml"])
def test_by_format(fmt, snapshot_observation):
    result = run_tool(Forecast(), {"city": "Oslo"}, text_format=fmt)
    assert result.text == snapshot_observation(fmt)
"""

# What each snapshot file must hold: the observation text exactly, nothing else.
EXPECTED_FILES = {
    "test_forecast.md": '# observation\n\n## forecast\n{"city":"Paris","high_c":21}',
    "test_forecast.xml": (
        "<observation>\n<forecast>\ncity: Paris\nhigh_c: 21\n</forecast>\n</observation>"
    ),
    "test_by_format[md].md": '# observation\n\n## forecast\n{"city":"Oslo","high_c":21}',
    "test_by_format[xml].xml": (
        '<observation>\n<forecast>\n{"city":"Oslo","high_c":21}\n</forecast>\n</observation>'
    ),
}

# Plugins of this venv the user's run does not need: hypothesis' takes seconds to start
# in-process, pytest-asyncio warns about its unset options.
UNRELATED = ("-p", "no:hypothesispytest", "-p", "no:asyncio")
# Load the plugin by module name whether or not its entry point is installed (blocking
# the entry point, so it is never registered twice).
PLUGIN_ARGS = (*UNRELATED, "-p", "no:gent_testing", "-p", "toolchain.testing")


def write_user_tests(pytester: pytest.Pytester, high_c: str) -> None:
    pytester.makepyfile(test_user=USER_TESTS.replace("HIGH_C", high_c))


def snapshot_files(pytester: pytest.Pytester) -> dict[str, str]:
    folder = pytester.path / "__snapshots__" / "test_user"
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(folder.iterdir())}


# -- a user's snapshot tests, end to end -----------------------------------------------


def test_snapshots_are_written_as_readable_files_and_then_pass(
    pytester: pytest.Pytester,
) -> None:
    write_user_tests(pytester, "21")

    update = pytester.runpytest(*PLUGIN_ARGS, "--snapshot-update")
    update.assert_outcomes(passed=3, warnings=0)
    update.stdout.fnmatch_lines(["*4 snapshots generated*"])
    files = snapshot_files(pytester)
    assert files == EXPECTED_FILES
    assert files["test_forecast.md"].startswith("# observation")
    assert files["test_forecast.xml"].startswith("<observation>")

    check = pytester.runpytest(*PLUGIN_ARGS)
    check.assert_outcomes(passed=3, warnings=0)
    check.stdout.fnmatch_lines(["*4 snapshots passed*"])
    assert snapshot_files(pytester) == EXPECTED_FILES


def test_a_changed_observation_fails_the_users_test(pytester: pytest.Pytester) -> None:
    write_user_tests(pytester, "21")
    pytester.runpytest(*PLUGIN_ARGS, "--snapshot-update").assert_outcomes(passed=3, warnings=0)

    write_user_tests(pytester, "-4")  # the tool's output changed
    changed = pytester.runpytest(*PLUGIN_ARGS)
    changed.assert_outcomes(failed=3)
    changed.stdout.fnmatch_lines(
        ['*- {"city":"Oslo","high_c":21}*', '*+ {"city":"Oslo","high_c":-4}*']
    )
    assert snapshot_files(pytester) == EXPECTED_FILES  # nothing rewritten without asking


# -- registration: once, with or without the entry point -------------------------------


def fake_entry_point(folder: Path) -> Path:
    """A distribution on ``folder`` declaring the plugin's pytest11 entry point, as an
    install with the ``[testing]`` extra does."""
    dist = folder / "site" / "gent_testing_probe-0.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: gent-testing-probe\nVersion: 0.0\n"
    )
    (dist / "entry_points.txt").write_text("[pytest11]\ngent_testing = toolchain.testing\n")
    return dist.parent


REGISTRATION_TEST = """
import toolchain.testing


def test_registered_once(pytestconfig):
    manager = pytestconfig.pluginmanager
    assert manager.get_name(toolchain.testing) == {name!r}
    assert manager.has_plugin("syrupy")
"""


@pytest.mark.parametrize(
    ("setup", "registered_as"),
    [
        ("entry_point", "gent_testing"),  # installed with the [testing] extra
        ("no_entry_point", "toolchain.testing"),  # an install that predates the extra
        ("no_autoload", "toolchain.testing"),  # syrupy then comes in through the conftest
    ],
)
def test_the_suites_conftest_registers_the_plugin_exactly_once(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, setup: str, registered_as: str
) -> None:
    # The project's own conftest, in a fresh process (so nothing is imported yet).
    pytester.makeconftest((ROOT / "tests" / "conftest.py").read_text(encoding="utf-8"))
    write_user_tests(pytester, "21")
    pytester.makepyfile(test_registration=REGISTRATION_TEST.format(name=registered_as))
    monkeypatch.delenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    args: list[str] = [*UNRELATED, "--snapshot-update"]
    if setup == "entry_point":
        monkeypatch.setenv("PYTHONPATH", str(fake_entry_point(pytester.path)))
    elif setup == "no_entry_point":
        args += ["-p", "no:gent_testing"]  # blocks the real entry point if installed
    else:
        monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    result = pytester.runpytest_subprocess(*args)
    result.assert_outcomes(passed=4, warnings=0)
    assert snapshot_files(pytester) == EXPECTED_FILES


# pytest loads the plugin wherever gent-py is installed, with the extra or not.
WITHOUT_SYRUPY_TESTS = '''
import pytest
from toolchain import tool
from toolchain.testing import FIXED_DATE, run_tool


@tool
def ping() -> str:
    """Answer pong."""
    return "pong"


def test_the_other_helpers_work(fixed_clock):
    assert fixed_clock() == FIXED_DATE
    assert "pong" in run_tool(ping, {}).text


def test_the_extensions_say_what_to_install():
    with pytest.raises(ImportError, match=r"needs syrupy, .*: pip install 'gent-py\\[testing\\]'"):
        from toolchain.testing import MarkdownSnapshotExtension


def test_a_snapshot(snapshot_md):
    pass
'''


def test_without_syrupy_the_plugin_still_loads_and_pytest_still_runs(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocked = pytester.path / "blocked"  # syrupy, as if not installed
    blocked.mkdir()
    (blocked / "syrupy.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'syrupy'\", name='syrupy')\n"
    )
    pytester.makepyfile(test_user=WITHOUT_SYRUPY_TESTS)
    site = fake_entry_point(pytester.path)
    monkeypatch.delenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    monkeypatch.setenv("PYTHONPATH", f"{blocked}{os.pathsep}{site}")
    # -p no:syrupy: this venv has syrupy's entry point; a venv without syrupy has none.
    result = pytester.runpytest_subprocess(*UNRELATED, "-p", "no:syrupy")
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(["*fixture 'snapshot' not found*"])


def test_importing_toolchain_imports_neither_the_plugin_nor_pytest_nor_syrupy() -> None:
    code = (
        "import sys, formats, toolchain\n"
        "print(sorted(m for m in sys.modules\n"
        "             if m.split('.')[0] in {'pytest', '_pytest', 'syrupy', 'pluggy'}\n"
        "             or m == 'toolchain.testing'))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


# -- the helpers -----------------------------------------------------------------------


def test_extension_is_chosen_by_text_format() -> None:
    assert snapshot_extension_for(MarkdownFormat()) is MarkdownSnapshotExtension
    assert snapshot_extension_for(XMLFormat()) is XMLSnapshotExtension

    class CSVFormat:  # a format of the user's own: no file type to guess
        pass

    with pytest.raises(TypeError, match="no snapshot extension for CSVFormat"):
        snapshot_extension_for(CSVFormat())  # type: ignore[arg-type]


def test_a_snapshot_holds_text_only() -> None:
    extension = MarkdownSnapshotExtension()
    assert extension.serialize("# observation") == "# observation"
    with pytest.raises(TypeError, match=r"compare the text itself"):
        extension.serialize(run_tool(greet, {"name": "Ada"}))


@tool
def greet(name: str, code: str = "", when: dt.date | None = None) -> dict[str, object]:
    """Greet someone."""
    return {"greeting": f"Hello, {name}!", "code": code, "when": when}


@pytest.mark.parametrize("calls", ["json", "yaml"])
def test_run_tool_writes_the_call_safely_in_either_syntax(calls: Literal["json", "yaml"]) -> None:
    # Quotes, a line break and call syntax in a string; a code YAML would read as 123;
    # a date, which neither syntax has, arrives as ISO text.
    args = {"name": 'Ada "\n- tool: x', "code": "0123", "when": dt.date(2026, 1, 27)}
    result = run_tool(greet, args, calls=calls)
    assert result.raw.errors == (None,)
    assert result.raw.calls[0].args == {
        "name": 'Ada "\n- tool: x',
        "code": "0123",
        "when": "2026-01-27",
    }
    assert result.text.startswith("<observation>\n<greet>\n")


def test_run_tool_reports_errors_and_rejects_an_unknown_syntax() -> None:
    result = run_tool(greet, {}, text_format=MarkdownFormat())
    assert result.raw.errors[0] is not None
    assert "Error:" in result.text
    with pytest.raises(ValueError, match="calls must be"):
        run_tool(greet, {"name": "Ada"}, calls="toml")  # type: ignore[arg-type]


def test_fixed_clock_fixture_makes_the_system_prompt_stable(
    fixed_clock: Callable[[], dt.date],
) -> None:
    assert fixed_clock() == FIXED_DATE == dt.date(2026, 1, 1)
    agent = ReActAgent(
        ScriptedModel(["<answer>ok</answer>"]),
        tool_chain=JSONToolChain().register_tool(greet),
        clock=fixed_clock,
    )
    assert "Today is 2026-01-01 (Thursday)." in agent.system_prompt()


def test_fixed_clock_is_importable_as_a_plain_function() -> None:
    assert fixed_clock() == FIXED_DATE


def test_snapshot_observation_picks_the_file_type(
    snapshot_observation: Callable[[TextFormat], SnapshotAssertion],
) -> None:
    assert snapshot_observation(MarkdownFormat()).extension_class is MarkdownSnapshotExtension
    assert snapshot_observation(XMLFormat()).extension_class is XMLSnapshotExtension


def test_the_docs_snapshot_example_works_as_shown(pytester: pytest.Pytester) -> None:
    page = Path(__file__).resolve().parents[1] / "docs" / "testing.md"
    section = page.read_text(encoding="utf-8").split("## Snapshot-testing your tools", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    shown = section.split("Each holds exactly the observation text", 1)[1]
    shown_md = shown.split("```text\n", 1)[1].split("```", 1)[0]
    pytester.makepyfile(test_forecast=code)
    pytester.runpytest(*PLUGIN_ARGS, "--snapshot-update").assert_outcomes(passed=1)
    stored = pytester.path / "__snapshots__" / "test_forecast" / "test_forecast.md"
    assert stored.read_text(encoding="utf-8") == shown_md.removesuffix("\n")
    pytester.runpytest(*PLUGIN_ARGS).assert_outcomes(passed=1)
