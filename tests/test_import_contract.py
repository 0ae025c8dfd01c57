"""The import contract of ARCHITECTURE.md, read from the source: every import statement,
at the top of a module or inside a function, is an edge.

- ``formats`` <- ``toolchain`` <- ``agents``: imports point that way only.
- The toolchain core (its root modules, ``chain``, ``_syntax``, ``runtime``) imports no
  extension package; ``toolchain/__init__.py`` names a few of their classes, loaded on first
  use (PEP 562), and that is the one declared exception.
- An extension package imports the core, and ``stores`` (where values are kept), never another
  extension: each can be left out.
- ``agents`` uses the toolchain through its public modules only (no ``_private`` path): what it
  needs beyond chains and tools is in ``toolchain.runtime``, as it is for a user's own loop.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXTENSIONS = ("variables", "relay", "composite", "discovery", "dialects", "mcp", "stores")


def imports_of(path: Path) -> list[str]:
    """Every module ``path`` imports, absolute (the code base uses no relative imports)."""
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}: a relative import"
            base = node.module or ""
            found.append(base)
            # `from toolchain import chain` imports the module toolchain.chain
            found.extend(f"{base}.{alias.name}" for alias in node.names)
    return found


def modules(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


def extension_of(path: Path) -> str | None:
    parts = path.relative_to(ROOT / "toolchain").parts
    return parts[0] if len(parts) > 1 and parts[0] in EXTENSIONS else None


def test_imports_point_one_way() -> None:
    wrong = [
        f"{path.relative_to(ROOT)} imports {name}"
        for package, forbidden in (("formats", ("toolchain", "agents")), ("toolchain", ("agents",)))
        for path in modules(package)
        for name in imports_of(path)
        if name.split(".")[0] in forbidden
    ]
    assert wrong == []


def test_the_core_imports_no_extension() -> None:
    wrong = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in modules("toolchain")
        if extension_of(path) is None and path != ROOT / "toolchain" / "__init__.py"
        for name in imports_of(path)
        if name.split(".")[:2][-1] in EXTENSIONS and name.startswith("toolchain.")
    ]
    assert wrong == []


def test_an_extension_imports_the_core_and_stores_only() -> None:
    wrong = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in modules("toolchain")
        if (own := extension_of(path)) is not None
        for name in imports_of(path)
        if name.startswith("toolchain.")
        and (other := name.split(".")[1]) in EXTENSIONS
        and other not in (own, "stores")
    ]
    assert wrong == []


def test_agents_use_only_public_toolchain_modules() -> None:
    wrong = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in modules("agents")
        for name in imports_of(path)
        if name.startswith("toolchain") and any(p.startswith("_") for p in name.split("."))
    ]
    assert wrong == []


@pytest.mark.parametrize(
    "name",
    [
        "describe_exception",
        "eager_task",
        "install_extensions",
        "restore_state",
        "run_sync",
        "saved_state",
        "settle",
        "unfence",
    ],
)
def test_a_helper_moved_to_runtime_keeps_its_old_name_for_a_release(name: str) -> None:
    import toolchain
    import toolchain.runtime

    with pytest.warns(DeprecationWarning, match=rf"toolchain\.{name} moved to toolchain\.runtime"):
        value = getattr(toolchain, name)
    assert value is getattr(toolchain.runtime, name)
    assert name not in toolchain.__all__
