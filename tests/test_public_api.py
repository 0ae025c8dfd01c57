"""The public API is a contract: every module without an underscore in its path, and the
names it exports (its ``__all__``), are listed in ``tests/public_api.txt``.

A layout change (modules moved, split or merged) must keep that list as it is; a name
added or removed on purpose updates the file in the same commit:
``python -m tests.test_public_api > tests/public_api.txt``.
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

PACKAGES = ("formats", "toolchain", "agents")
LISTED = Path(__file__).with_name("public_api.txt")


def public_modules() -> list[str]:
    found: list[str] = []
    for package in PACKAGES:
        found.append(package)
        root = importlib.import_module(package)
        for info in pkgutil.walk_packages(root.__path__, f"{package}."):
            if not any(part.startswith("_") for part in info.name.split(".")):
                found.append(info.name)
    return sorted(found)


def exported(module_name: str) -> list[str]:
    module = importlib.import_module(module_name)
    names = getattr(module, "__all__", None)
    if names is None:  # no __all__: what it defines itself, without an underscore
        names = [
            name
            for name, value in vars(module).items()
            if not name.startswith("_") and getattr(value, "__module__", None) == module_name
        ]
    return sorted(names)


def listing() -> str:
    lines = [f"{module}: {' '.join(exported(module))}" for module in public_modules()]
    return "\n".join(lines) + "\n"


def test_the_public_api_is_the_listed_one() -> None:
    assert listing() == LISTED.read_text(encoding="utf-8")


def test_every_exported_name_can_be_imported() -> None:
    for module_name in public_modules():
        module = importlib.import_module(module_name)
        missing = [n for n in exported(module_name) if not hasattr(module, n)]
        assert missing == [], f"{module_name} exports names it does not have: {missing}"


if __name__ == "__main__":
    print(listing(), end="")
