"""A module behind an extra, imported without it, says which extra to install.

Each case runs in a fresh interpreter whose import system refuses the extra's
dependency, as an environment without it would (``tests.support.refused_imports``).
The error must stay a ``ModuleNotFoundError`` with ``.name`` kept, so that ``except
ImportError`` and tools that read ``.name`` go on working; it is a ``GentError`` too
(``toolchain.runtime.MissingExtra``), so ``except GentError`` around a call into the
library catches it as it catches our other errors.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.support.refused_imports import refusing

REPO = Path(__file__).resolve().parents[1]

REPORT = """
import json
from formats import GentError
try:
    {code}
except ImportError as error:
    print(json.dumps({{
        "type": type(error).__name__,
        "name": error.name,
        "text": str(error),
        "module_not_found": isinstance(error, ModuleNotFoundError),
        "gent": isinstance(error, GentError),
    }}))
else:
    print(json.dumps(None))
"""


def _without(refused: str, code: str, tmp_path: Path) -> dict[str, object] | None:
    env = refusing(tmp_path, *refused.split(","))
    body = textwrap.indent(textwrap.dedent(code).strip(), "    ").lstrip()
    done = subprocess.run(
        [sys.executable, "-c", REPORT.format(code=body)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    reported: dict[str, object] | None = json.loads(done.stdout.splitlines()[-1])
    return reported


CASES = {
    "code": ("pydantic_monty", "import toolchain.code", "toolchain.code"),
    "durable": ("dbos", "import agents.durable", "agents.durable"),
    "otel": ("opentelemetry", "import agents.otel\nagents.otel.instrument()", "agents.otel"),
    "testing-pytest": ("pytest", "import toolchain.testing", "toolchain.testing"),
    "testing-syrupy": (
        "syrupy",
        "from toolchain.testing import XMLSnapshotExtension",
        "toolchain.testing.XMLSnapshotExtension",
    ),
    "redis": ("redis", "from toolchain.stores import RedisStore", "RedisStore"),
    "mcp": (
        "mcp",
        "import asyncio\nfrom toolchain.mcp import MCPServer\n"
        "asyncio.run(MCPServer.stdio('true').connect())",
        "toolchain.mcp",
    ),
    "ui-starlette": ("starlette", "import agents.ui", "agents.ui"),
    "ui-ag_ui": ("ag_ui", "import agents.ui", "agents.ui"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_missing_extra_is_named_with_its_install_command(case: str, tmp_path: Path) -> None:
    refused, code, feature = CASES[case]
    extra = case.partition("-")[0]
    reported = _without(refused, code, tmp_path)
    assert reported == {
        "type": "MissingExtra",
        "name": refused,
        "text": f"{feature} needs {refused}, which is not installed: "
        f"pip install 'gent-py[{extra}]'",
        "module_not_found": True,
        "gent": True,
    }


def test_local_embeddings_without_their_extra_name_it(tmp_path: Path) -> None:
    """Checked before anything is imported (torch takes seconds): its own ImportError."""
    code = "from toolchain.discovery import LocalEmbeddings\nLocalEmbeddings()"
    reported = _without("sentence_transformers", code, tmp_path)
    assert reported is not None
    assert (reported["type"], reported["name"], reported["gent"]) == (
        "EmbeddingsUnavailable",
        "sentence_transformers",
        True,
    )
    text = str(reported["text"])
    assert text.startswith("local embeddings need sentence_transformers, which is ")
    assert "install gent-py's [embeddings] extra" in text


def test_with_the_extra_nothing_is_refused(tmp_path: Path) -> None:
    """The finder itself refuses only what it is told to (the cases above are not
    failing for another reason)."""
    assert (
        _without("no_such_package", "import agents.durable\nimport toolchain.testing", tmp_path)
        is None
    )


def test_what_needs_no_extra_imports_without_any(tmp_path: Path) -> None:
    refused = "dbos,opentelemetry,redis,mcp,mcp_types,syrupy,sentence_transformers"
    code = "import agents, toolchain, toolchain.stores, toolchain.mcp, agents.otel"
    assert _without(refused, code, tmp_path) is None


def test_make_test_latest_installs_every_extra() -> None:
    """`make test-latest` resolves afresh every extra the suite tests.

    Its extras are written in the Makefile, not read from pyproject.toml; an extra
    added to one and not the other had its tests skipped on the newest versions.
    Only ``embeddings`` may be left out, where no CPU build of torch installs.
    """
    import re
    import tomllib

    declared = set(
        tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    )
    makefile = (REPO / "Makefile").read_text()
    lists = [set(found.split(",")) for found in re.findall(r"extras='([a-z,-]+)'", makefile)]
    assert len(lists) == 2, lists
    with_torch, without_torch = lists
    assert with_torch == declared
    assert without_torch == declared - {"embeddings"}
