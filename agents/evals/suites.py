"""The prompt-case suites shipped inside the package, found wherever it is installed.

A suite is a folder of ``agents/evals/prompts/`` holding case files and, under
``cassettes/``, their recordings, so ``python -m agents eval --suite relay --replay`` runs
from an installed wheel with no checkout, no model and no key.

>>> sorted(shipped_suites())
['airline', 'relay']
>>> [path.name for path in shipped_suites()["airline"].case_files()]
['baggage.md', 'reschedule.md']
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from agents._errors import AgentError

__all__ = ["Suite", "SuiteError", "shipped_suites", "suite"]

_PACKAGE = "agents.evals.prompts"
_DESCRIPTIONS = {
    "relay": (
        "the tool-context-relay cases: large outputs boxed as internal:// references, "
        "passed on and read in parts"
    ),
    "airline": "two SkyWings customer-service scenarios: a reschedule and a typed answer",
}


class SuiteError(AgentError, LookupError):
    """An unknown suite name, or a package not installed as files."""


@dataclass(frozen=True)
class Suite:
    """One shipped suite: its name, what it checks, and the folder of its case files."""

    name: str
    description: str
    folder: Path
    recorded_model: str = "loopback:scripted"
    """The model its cassettes were recorded with; ``--replay`` uses it when none is named."""

    def case_files(self) -> list[Path]:
        """The suite's case files, by name."""
        return sorted(self.folder.glob("*.md"))


def shipped_suites() -> dict[str, Suite]:
    """Every suite the installed package holds, by name."""
    root = resources.files(_PACKAGE)
    if not isinstance(root, Path):  # e.g. imported from a zip: case files must be files
        raise SuiteError(f"the shipped suites need {_PACKAGE} installed as files, not {root}")
    return {
        folder.name: Suite(folder.name, _DESCRIPTIONS.get(folder.name, ""), folder)
        for folder in sorted(root.iterdir())
        if folder.is_dir() and any(folder.glob("*.md"))
    }


def suite(name: str) -> Suite:
    """The shipped suite called ``name``; `SuiteError` names the others when there is none."""
    suites = shipped_suites()
    try:
        return suites[name]
    except KeyError:
        known = ", ".join(suites)
        raise SuiteError(f"no shipped suite {name!r}; the suites are: {known}") from None
