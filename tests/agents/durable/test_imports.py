"""``import agents`` never loads DBOS: only ``agents.durable`` does."""

from __future__ import annotations

import json
import subprocess
import sys


def loaded_after(statement: str) -> list[str]:
    heavy = "('dbos', 'sqlalchemy')"
    code = (
        f"{statement}\nimport json, sys\nprint(json.dumps(sorted(set(sys.modules) & {{*{heavy}}})))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return list(json.loads(done.stdout))


def test_importing_agents_and_toolchain_loads_no_dbos() -> None:
    assert loaded_after("import agents, toolchain, agents.prompt") == []


def test_importing_agents_durable_loads_dbos() -> None:
    assert loaded_after("import agents.durable") == ["dbos", "sqlalchemy"]
