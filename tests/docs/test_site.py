"""The documentation site builds strictly, documents every public module, and fetches
nothing from outside this machine. `tests/docs/test_site_in_browser.py` looks at it."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest

from tests.docs.conftest import ROOT

REFERENCE = ROOT / "docs" / "reference"


def _public_modules() -> list[str]:
    lines = (ROOT / "tests" / "public_api.txt").read_text(encoding="utf-8").splitlines()
    return sorted(line.split(":", 1)[0] for line in lines if line.strip())


def test_the_site_builds_strictly(built_site: Path) -> None:
    assert (built_site / "index.html").is_file()
    assert (built_site / "search" / "search_index.json").is_file()  # searched offline


def test_every_public_module_has_its_reference_and_nothing_else() -> None:
    documented = [
        found.group(1)
        for page in sorted(REFERENCE.glob("*.md"))
        for found in re.finditer(r"^::: ([\w.]+)$", page.read_text(encoding="utf-8"), re.M)
    ]
    assert sorted(documented) == _public_modules()  # each once, no private module


def test_every_public_name_has_its_place_in_the_reference(built_site: Path) -> None:
    anchors: set[str] = set()
    for page in (built_site / "reference").rglob("index.html"):
        anchors |= set(re.findall(r'id="([\w.]+)"', page.read_text(encoding="utf-8")))
    lines = (ROOT / "tests" / "public_api.txt").read_text(encoding="utf-8").splitlines()
    names = [
        f"{module}.{name}"
        for module, _, listed in (line.partition(":") for line in lines if line.strip())
        for name in listed.split()
    ]
    assert [name for name in names if name not in anchors] == []


def test_the_api_page_of_tool_shows_its_docstring_and_its_example(built_site: Path) -> None:
    page = (built_site / "reference" / "toolchain" / "index.html").read_text(encoding="utf-8")
    assert 'id="toolchain.Tool"' in page
    assert "A typed tool: validated input" in page
    # The doctest under it is a highlighted Python session, not a stack of quotes.
    assert '<span class="gp">&gt;&gt;&gt; </span>' in page
    assert "<blockquote>\n<blockquote>" not in page


# What a page loads by itself (not what it merely links to): scripts, styles, fonts,
# images, frames, preconnects; in HTML attributes and in CSS url(...) and @import.
_LOADS = re.compile(
    r"<(?:script|img|iframe|source|audio|video)\b[^>]*\bsrc=[\"']?(https?:)?//([^/\"' >]+)"
    r"|<link\b[^>]*\bhref=[\"']?(https?:)?//([^/\"' >]+)"
    r"|url\([\"']?(https?:)?//([^/\"')]+)"
    r"|@import\s+[\"'](https?:)?//([^/\"']+)",
    re.I,
)


def test_no_page_loads_anything_from_outside(built_site: Path) -> None:
    outside: set[str] = set()
    for path in built_site.rglob("*"):
        if path.suffix in (".html", ".css", ".js"):
            for found in _LOADS.finditer(path.read_text(encoding="utf-8", errors="replace")):
                host = next(group for group in found.groups()[1::2] if group)
                if host.split(":")[0] not in ("127.0.0.1", "localhost"):
                    outside.add(f"{path.relative_to(built_site)}: {found.group(0)[:80]}")
    assert sorted(outside) == []


def _doctest_fences() -> ModuleType:
    path = ROOT / "docs" / "_ext" / "doctest_fences.py"
    spec = importlib.util.spec_from_file_location("doctest_fences", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("docstring", "shown"),
    [
        ("No example.", "No example."),
        (
            "Greets.\n\n>>> greet('Ada')  # doctest: +ELLIPSIS\n'Hello...'\n\nMore.",
            "Greets.\n\n```pycon\n>>> greet('Ada')\n'Hello...'\n```\n\nMore.",
        ),
        (  # inside a list item: the fence keeps its indentation
            "- a:\n\n  >>> 1 + 1\n  2",
            "- a:\n\n  ```pycon\n  >>> 1 + 1\n  2\n  ```",
        ),
        (  # a fence the docstring wrote itself is left alone
            "```python\n>>> not a doctest\n```",
            "```python\n>>> not a doctest\n```",
        ),
    ],
)
def test_doctests_are_fenced_as_python_sessions(docstring: str, shown: str) -> None:
    assert _doctest_fences().fence_doctests(docstring) == shown
