"""The documentation site, built once for the tests of this folder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def built_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site as `make docs` builds it (``mkdocs build --strict``), in a folder of its own.

    A warning of the build (a broken link or anchor, a reference mkdocstrings cannot
    resolve, a page left out of the navigation) fails it, and so every test here."""
    site = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}  # mkdocs-material's banner about 2.0
    completed = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,  # the snippets' base path (ARCHITECTURE.md) is the repository's root
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if completed.returncode != 0:
        pytest.fail(f"mkdocs build --strict failed:\n{completed.stdout}{completed.stderr}")
    return site
