"""The distribution installs as users get it: a wheel, and an editable install type checkers see.

The wheel is built from a copy of the source tree (the build writes `build/` and
`*.egg-info` beside its sources) by setuptools' PEP 517 hooks, as pip calls them, with
no build isolation and no network: the venv's setuptools builds it (`setuptools>=77` is
in the dev extra for that).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("formats", "toolchain", "agents")

pytestmark = pytest.mark.install


def source_files() -> set[str]:
    """Every file a package ships: modules, `py.typed` and data, as wheel paths."""
    found: set[str] = set()
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*"):
            relative = path.relative_to(ROOT)
            hidden = any(part.startswith(".") or part == "__pycache__" for part in relative.parts)
            if path.is_file() and not hidden and path.suffix not in {".pyc", ".pyo"}:
                found.add(relative.as_posix())
    return found


def module_name(wheel_path: str) -> str:
    parts = wheel_path.removesuffix(".py").split("/")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def run(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    completed = subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    output = completed.stdout + completed.stderr
    assert completed.returncode == 0, output
    return output


def clean_env() -> dict[str, str]:
    """The environment without Python's and mypy's own settings (PYTHONPATH and the like)."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "MYPY"))}


def build(tmp: Path, hook: str) -> tuple[Path, str]:
    """Run one setuptools build hook on a fresh copy of the project; the artifact and output."""
    source = tmp / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    for package in PACKAGES:
        ignore = shutil.ignore_patterns(".*", "__pycache__", "*.pyc", "*.pyo")
        shutil.copytree(ROOT / package, source / package, ignore=ignore)
    out = tmp / "dist"
    script = (
        "import sys; from setuptools import build_meta; "
        f"print('ARTIFACT=' + build_meta.{hook}(sys.argv[1]))"
    )
    # With PYTHONDONTWRITEBYTECODE set, distutils warns that it skips byte-compiling.
    command = [sys.executable, "-W", "default", "-c", script, str(out)]
    output = run(command, cwd=source, env=clean_env())
    artifact = re.findall(r"^ARTIFACT=(.*)$", output, re.MULTILINE)[-1]
    return out / artifact, output


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    return build(tmp_path_factory.mktemp("wheel"), "build_wheel")


@pytest.fixture(scope="module")
def wheel_files(wheel: tuple[Path, str]) -> set[str]:
    with zipfile.ZipFile(wheel[0]) as archive:
        return {name for name in archive.namelist() if ".dist-info/" not in name}


def test_the_wheel_ships_every_module_and_data_file(wheel_files: set[str]) -> None:
    expected = source_files()
    assert {f"{package}/py.typed" for package in PACKAGES} <= expected
    assert {"agents/models/__init__.py", "agents/demo/__init__.py"} <= expected
    assert sorted(expected - wheel_files) == []
    assert sorted(wheel_files - expected) == []


def test_the_wheel_builds_without_warnings(wheel: tuple[Path, str]) -> None:
    assert "warning" not in wheel[1].lower(), wheel[1]


def test_the_wheel_declares_an_spdx_license(wheel: tuple[Path, str]) -> None:
    with zipfile.ZipFile(wheel[0]) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        metadata = archive.read(name).decode()
    assert "License-Expression: MIT" in metadata.splitlines()


def test_every_entry_point_names_a_module_the_wheel_ships(
    wheel: tuple[Path, str], wheel_files: set[str]
) -> None:
    with zipfile.ZipFile(wheel[0]) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/entry_points.txt")]
        text = archive.read(name).decode()
    targets = re.findall(r"^\S+ = ([\w.]+)", text, re.MULTILINE)
    assert "agents.cli" in targets
    shipped = {module_name(path) for path in wheel_files if path.endswith(".py")}
    assert sorted(set(targets) - shipped) == []


def test_every_module_imports_from_an_installed_wheel(
    wheel: tuple[Path, str], wheel_files: set[str], tmp_path: Path
) -> None:
    target = tmp_path / "site"
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    run([*pip, "--no-deps", "--no-index", "--target", str(target), str(wheel[0])], cwd=tmp_path)
    modules = sorted(
        module_name(path)
        for path in wheel_files
        if path.endswith(".py") and not path.endswith("__main__.py")
    )
    # `-P` keeps the working directory off sys.path; the editable install's path entry
    # (and any editable import hook) is dropped, so only the installed copy can answer.
    script = f"""
import importlib, json, os, sys
root, target = {str(ROOT)!r}, {str(target)!r}
sys.path[:] = [p for p in sys.path if p and os.path.realpath(p) != root]
sys.path.insert(0, target)
sys.meta_path[:] = [f for f in sys.meta_path if "__editable__" not in repr(f)]
files = {{m: importlib.import_module(m).__file__ for m in {modules!r}}}
print(json.dumps(files))
"""
    output = run([sys.executable, "-P", "-c", script], cwd=tmp_path, env=clean_env())
    files: dict[str, str] = json.loads(output.splitlines()[-1])
    assert sorted(files) == modules
    outside = {m: f for m, f in files.items() if not f.startswith(str(target) + os.sep)}
    assert outside == {}


def test_an_editable_install_is_a_plain_path_entry(tmp_path: Path) -> None:
    """No import hook: mypy and pyright follow `.pth` path entries, not setuptools' finders."""
    editable, output = build(tmp_path, "build_editable")
    assert "warning" not in output.lower(), output
    with zipfile.ZipFile(editable) as archive:
        (pth,) = [name for name in archive.namelist() if name.endswith(".pth")]
        lines = archive.read(pth).decode().splitlines()
        modules = [name for name in archive.namelist() if name.endswith(".py")]
    assert [Path(line).resolve() for line in lines] == [(tmp_path / "src").resolve()]
    assert modules == []


USER_MODULE = """\
from pydantic import BaseModel

from formats import XMLFormat
from toolchain import ExecutionContext, JSONToolChain, Tool, ToolResult


class CityIn(BaseModel):
    city: str


class Weather(Tool[CityIn, str]):
    name = "weather"
    description = "Weather for a city."

    def call(self, ctx: ExecutionContext, input: CityIn) -> ToolResult[str]:
        return ToolResult(input.city.upper())


chain = JSONToolChain().register_tool(Weather())
call = '{"tool": "weather", "args": {"city": "Oslo"}}'
result = chain.execute_sync(ExecutionContext(), call, XMLFormat())
text: str = result.text
wrong: int = result.text
"""
DELIBERATE_ERROR_LINE = USER_MODULE.splitlines().index("wrong: int = result.text") + 1


@pytest.fixture
def user_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A user's own project outside the repo, checked by the venv's own type checkers."""
    try:
        distribution("gent-py")
    except PackageNotFoundError:
        pytest.skip("gent-py is not installed in this environment (`make` installs it)")
    project = tmp_path_factory.mktemp("user_project")
    assert ROOT not in project.parents
    (project / "user_tool.py").write_text(USER_MODULE)
    return project


def test_a_users_mypy_strict_sees_the_installed_package(user_project: Path) -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-error-summary", "user_tool.py"],
        cwd=user_project,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    output = completed.stdout + completed.stderr
    assert "Cannot find implementation" not in output, output
    errors = re.findall(r"^user_tool\.py:(\d+): error: (.*)$", output, re.MULTILINE)
    assert errors == [
        (
            str(DELIBERATE_ERROR_LINE),
            'Incompatible types in assignment (expression has type "str", '
            'variable has type "int")  [assignment]',
        )
    ], output
    assert completed.returncode == 1


def test_a_users_pyright_sees_the_installed_package(user_project: Path) -> None:
    pyright = Path(sys.executable).with_name("pyright")
    assert pyright.exists(), "pyright is in the dev extra"
    completed = subprocess.run(
        [str(pyright), "--outputjson", "--pythonpath", sys.executable, "user_tool.py"],
        cwd=user_project,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    report = json.loads(completed.stdout)
    found = [
        (d["range"]["start"]["line"] + 1, d["rule"])
        for d in report["generalDiagnostics"]
        if d["severity"] == "error"
    ]
    assert found == [(DELIBERATE_ERROR_LINE, "reportAssignmentType")], completed.stdout


@pytest.fixture(scope="module")
def installed_wheel(
    wheel: tuple[Path, str], tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, Path]:
    """A fresh venv outside the repo with the built wheel installed (console script and all).

    Its dependencies come from this venv's site-packages through a path entry (no network),
    which adds no `.pth` file of theirs, so the editable install of the checkout is not seen.
    Returns the venv's python and an empty working directory.
    """
    base = tmp_path_factory.mktemp("user")
    venv = base / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)], cwd=base)
    python = venv / "bin" / "python"
    site = run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], base)
    ours = run(
        [sys.executable, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], base
    )
    (Path(site.strip()) / "borrowed_deps.pth").write_text(ours.strip() + "\n", encoding="utf-8")
    pip = [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet"]
    run([*pip, "--no-deps", "--no-index", "--disable-pip-version-check", str(wheel[0])], base)
    empty = base / "empty"
    empty.mkdir()
    return python, empty


def test_the_installed_wheel_is_what_runs(installed_wheel: tuple[Path, Path]) -> None:
    python, empty = installed_wheel
    script = "import agents, toolchain, formats; print(agents.__file__, toolchain.__file__)"
    files = run([str(python), "-c", script], cwd=empty, env=clean_env()).split()
    venv = python.parent.parent
    assert all(Path(f).is_relative_to(venv) for f in files), files


@pytest.mark.parametrize(
    ("suite", "cases"), [("relay", 6), ("airline", 2)], ids=["relay", "airline"]
)
def test_shipped_suites_replay_from_the_installed_wheel(
    installed_wheel: tuple[Path, Path], suite: str, cases: int
) -> None:
    """No checkout, no model named, no key: the recordings ship in the wheel."""
    python, empty = installed_wheel
    env = {k: v for k, v in clean_env().items() if not k.endswith("_API_KEY")}
    command = [
        str(python),
        "-m",
        "agents",
        "eval",
        "--suite",
        suite,
        "--replay",
        "--color",
        "never",
    ]
    output = run(command, cwd=empty, env=env)
    assert f"{cases} passed, 0 failed" in output
    listed = run([str(python), "-m", "agents", "eval", "--list-suites"], cwd=empty, env=env)
    assert f"{suite}: {cases} cases; " in listed
