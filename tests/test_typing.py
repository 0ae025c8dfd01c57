"""mypy checks a user's tool end to end: a mistyped tool is rejected, a correct one is not."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from mypy import api

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def run_mypy(path: Path) -> tuple[str, int]:
    stdout, stderr, status = api.run(
        [str(path), "--config-file", str(ROOT / "pyproject.toml"), "--no-error-summary"]
    )
    return stdout + stderr, status


@pytest.fixture(scope="module")
def mistyped() -> dict[int, str]:
    output, status = run_mypy(FIXTURES / "mistyped_tool.py")
    assert status == 1, output
    errors: dict[int, str] = {}
    for match in re.finditer(r"mistyped_tool\.py:(\d+): error: (.*)", output):
        line = int(match.group(1))  # one line may draw several errors: keep them all
        errors[line] = f"{errors[line]}\n{match.group(2)}" if line in errors else match.group(2)
    return errors


def marked_line(marker: str) -> int:
    lines = (FIXTURES / "mistyped_tool.py").read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if line.endswith(f"# error: {marker}"))


def test_wrong_input_type_in_call_is_rejected(mistyped: dict[int, str]) -> None:
    message = mistyped[marked_line("input")]
    assert 'Argument 2 of "call" is incompatible with supertype' in message
    assert 'supertype defines the argument type as "CityIn"' in message


def test_wrong_output_type_is_rejected(mistyped: dict[int, str]) -> None:
    message = mistyped[marked_line("output")]
    assert 'Return type "ToolResult[int]" of "call" incompatible' in message


def test_reading_a_missing_input_field_is_rejected(mistyped: dict[int, str]) -> None:
    assert '"CityIn" has no attribute "country"' in mistyped[marked_line("field")]


def test_a_typed_agent_answer_is_not_a_string(mistyped: dict[int, str]) -> None:
    message = mistyped[marked_line("answer")]
    assert 'Incompatible return value type (got "Order | None", expected "str | None")' in message


def test_a_raw_output_read_back_is_typed_as_asked(mistyped: dict[int, str]) -> None:
    message = mistyped[marked_line("raw")]
    assert 'Incompatible return value type (got "int", expected "str")' in message


def test_a_misspelt_agent_keyword_is_rejected(mistyped: dict[int, str]) -> None:
    message = mistyped[marked_line("keyword")]
    assert 'Unexpected keyword argument "tool_chian"' in message
    assert 'did you mean "tool_chain"?' in message


def test_nothing_else_is_reported(mistyped: dict[int, str]) -> None:
    expected = ("input", "output", "field", "answer", "raw", "keyword")
    assert sorted(mistyped) == sorted(marked_line(m) for m in expected)


def test_the_well_typed_tools_pass() -> None:
    output, status = run_mypy(FIXTURES / "welltyped_tool.py")
    assert status == 0, output


# -- an extension's hooks, as `toolchain.Extension` declares them -------------------------


@pytest.fixture(scope="module")
def extension_hooks() -> tuple[dict[int, str], list[str]]:
    output, status = run_mypy(FIXTURES / "extension_hooks.py")
    assert status == 1, output
    errors: dict[int, str] = {}
    for match in re.finditer(r"extension_hooks\.py:(\d+): error: (.*)", output):
        line = int(match.group(1))
        errors[line] = f"{errors[line]}\n{match.group(2)}" if line in errors else match.group(2)
    lines = (FIXTURES / "extension_hooks.py").read_text().splitlines()
    return errors, lines


def hook_line(lines: list[str], marker: str) -> int:
    return next(i for i, line in enumerate(lines, 1) if line.endswith(f"# error: {marker}"))


def test_a_before_step_typed_on_step_view_type_checks(
    extension_hooks: tuple[dict[int, str], list[str]],
) -> None:
    """Only the marked lines are errors: a sync ``before_step(ctx, request: StepView)``
    returning ``request.replace(...)``, an async one, a ``check_answer``, and
    ``agents.StepRequest`` passed where a ``StepView`` is wanted all pass."""
    errors, lines = extension_hooks
    marked = ("signature", "return", "change", "check")
    assert sorted(errors) == sorted(hook_line(lines, m) for m in marked)


@pytest.mark.parametrize(
    ("marker", "message"),
    [
        ("signature", 'Signature of "before_step" incompatible with supertype'),
        ("return", 'Return type "str" of "before_step" incompatible'),
        ("change", 'Unexpected keyword argument "system_prompt" for "replace" of "StepView"'),
        ("check", 'Return type "bool" of "check_answer" incompatible'),
    ],
)
def test_a_hook_typed_otherwise_than_extension_declares_it_is_rejected(
    extension_hooks: tuple[dict[int, str], list[str]], marker: str, message: str
) -> None:
    """No context, another return type, a step change ``StepView.replace`` does not
    offer, an answer check that is no feedback text."""
    errors, lines = extension_hooks
    assert message in errors[hook_line(lines, marker)]
