"""Every error the library raises is in its package's tree (issue 27).

``except formats.FormatError``, ``except toolchain.ToolchainError`` and ``except
agents.AgentError`` catch every error their package raises, a bad argument included: a
call the package cannot honour raises its usage error (``ToolchainValueError``,
``AgentStateError``, ...), which keeps the builtin class it was before as a mixin, so an
``except ValueError`` written before the tree still catches it.

The source is walked with ``ast`` for ``raise X`` / ``raise X(...)`` where ``X`` is a
builtin exception: each is a failure here unless it is one of the exemptions below,
where Python's own protocol needs exactly that class. They are keyed by file, enclosing
function and class, not by line, so an edit elsewhere in the module does not move them.
"""

from __future__ import annotations

import ast
import builtins
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agents import AgentError
from agents.models import messages_from_json
from formats import FormatError, GentError, Section, XMLFormat
from tests.toolchain.mcp.servers import SERVER
from toolchain import DialectStream, ToolchainError
from toolchain.mcp import MCPServer
from toolchain.runtime import run_sync

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("formats", "toolchain", "agents")

BUILTIN_ERRORS = frozenset(
    name
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException)
)

# The iteration protocol ends an iterator with exactly these, wherever they are raised.
PROTOCOL = frozenset({"StopIteration", "StopAsyncIteration"})

# (file, enclosing function, builtin raised): why Python needs exactly that class.
EXEMPT: dict[tuple[str, str, str], str] = {
    ("toolchain/__init__.py", "__getattr__", "AttributeError"): "module __getattr__ protocol",
    ("toolchain/stores/__init__.py", "__getattr__", "AttributeError"): (
        "module __getattr__ protocol"
    ),
    ("toolchain/testing.py", "__getattr__", "AttributeError"): "module __getattr__ protocol",
    ("agents/__init__.py", "_adapter", "AttributeError"): (
        "module __getattr__ protocol (the fallback agents.__getattr__ hands names to)"
    ),
    ("agents/_renamed.py", "renamed_names.__getattr__", "AttributeError"): (
        "module __getattr__ protocol (made for the modules with renamed names)"
    ),
    ("agents/models/__init__.py", "__getattr__", "AttributeError"): ("module __getattr__ protocol"),
    ("toolchain/_observations.py", "_enc_hook", "NotImplementedError"): (
        "msgspec's enc_hook protocol: NotImplementedError means 'no encoding for this "
        "type', which the caller turns into an OutputError"
    ),
    ("agents/durable/_serializer.py", "_record_of", "NotImplementedError"): (
        "msgspec's enc_hook protocol: msgspec then raises its own error (not plain data)"
    ),
    ("toolchain/variables/_keeping.py", "LiveValues.__getitem__", "KeyError"): (
        "Mapping protocol: Mapping.get and `in` rely on exactly KeyError"
    ),
    ("toolchain/_concurrency.py", "run_in_worker", "RuntimeError"): (
        "PEP 479's stand-in for a tool's own StopIteration: it is the tool's error, "
        "reported to the model as the tool's RuntimeError, not a library failure"
    ),
}


def builtin_raises(node: ast.AST, scope: tuple[str, ...]) -> Iterator[tuple[int, str, str]]:
    """(line, enclosing function, builtin) of each ``raise`` of a builtin error under
    ``node``; a bare ``raise`` (a re-raise) names nothing and is not one."""
    if isinstance(node, ast.Raise) and node.exc is not None:
        target = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
        if isinstance(target, ast.Name) and target.id in BUILTIN_ERRORS:
            yield node.lineno, ".".join(scope), target.id
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        scope = (*scope, node.name)
    for child in ast.iter_child_nodes(node):
        yield from builtin_raises(child, scope)


def raises_of_builtins(package: str) -> Iterator[tuple[str, int, str, str]]:
    """(file, line, enclosing function, builtin) of each ``raise`` of a builtin error."""
    for path in sorted((ROOT / package).rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"), relative)
        for line, function, name in builtin_raises(tree, ()):
            yield relative, line, function, name


@pytest.mark.parametrize("package", PACKAGES)
def test_the_library_raises_no_builtin_error_but_where_python_needs_one(package: str) -> None:
    found = list(raises_of_builtins(package))
    unexplained = [
        f"{path}:{line} raise {name} in {function or '<module>'}: raise {package}'s usage "
        "error that keeps it as a base instead, or exempt it here with the reason"
        for path, line, function, name in found
        if (path, function, name) not in EXEMPT and name not in PROTOCOL
    ]
    assert unexplained == []
    # each exemption still names a raise that is there (none left behind by a move)
    assert {(path, function, name) for path, _, function, name in found} >= {
        key for key in EXEMPT if key[0].startswith(f"{package}/")
    }


def test_the_walk_finds_a_builtin_raise() -> None:
    """The walk itself sees what it must (the test above cannot pass by finding nothing)."""
    found = list(raises_of_builtins("toolchain"))
    assert ("toolchain/_observations.py", "_enc_hook", "NotImplementedError") in {
        (path, function, name) for path, _, function, name in found
    }


# --- through the public API: caught by the package's root and by the old builtin -----------


def test_a_section_registered_twice_is_a_format_error_and_still_a_value_error() -> None:
    text_format = XMLFormat().register_section(Section("answer"))
    with pytest.raises(FormatError, match="section 'answer' is already registered") as raised:
        text_format.register_section(Section("answer"))
    assert isinstance(raised.value, ValueError)
    assert isinstance(raised.value, GentError)


async def test_run_sync_inside_a_running_loop_is_a_toolchain_error_and_still_a_runtime_error() -> (
    None
):
    async def answer() -> int:
        return 42

    coroutine = answer()
    try:
        with pytest.raises(ToolchainError, match="inside a running event loop") as raised:
            run_sync(coroutine)
    finally:
        coroutine.close()  # never awaited: run_sync refused it
    assert isinstance(raised.value, RuntimeError)


def test_feeding_a_finished_dialect_stream_is_a_toolchain_error_and_still_a_runtime_error() -> None:
    stream = DialectStream()
    stream.feed("Thinking")
    stream.finish()
    with pytest.raises(ToolchainError, match=r"feed\(\) after finish\(\)") as raised:
        stream.feed(" more")
    assert isinstance(raised.value, RuntimeError)


async def test_an_mcp_server_unknown_tool_and_second_connect_are_toolchain_errors() -> None:
    server = MCPServer.stdio(sys.executable, [str(SERVER), "stdio"], prefix="t_")
    async with server:
        with pytest.raises(ToolchainError) as unknown:
            server.tool("weather")
        assert isinstance(unknown.value, KeyError)
        # the message reads as written, not quoted as a bare key would be
        assert str(unknown.value).startswith("the MCP server 'test-server' has no tool 'weather'")
        with pytest.raises(ToolchainError, match="is already connected") as twice:
            await server.connect()
        assert isinstance(twice.value, RuntimeError)
    assert not server.connected


def test_bad_conversation_json_is_an_agent_error_and_still_a_value_error() -> None:
    with pytest.raises(AgentError, match="not a conversation JSON document") as raised:
        messages_from_json("{not json")
    assert isinstance(raised.value, ValueError)
    assert isinstance(raised.value, GentError)


def test_launching_durable_runs_twice_is_an_agent_error_and_still_a_runtime_error(
    tmp_path: Path,
) -> None:
    pytest.importorskip("dbos")
    from agents.durable import launch, shutdown

    launch(f"sqlite:///{tmp_path / 'runs.sqlite'}")
    try:
        with pytest.raises(AgentError, match=r"launch\(\) was called already") as raised:
            launch(f"sqlite:///{tmp_path / 'other.sqlite'}")
    finally:
        shutdown()
    assert isinstance(raised.value, RuntimeError)
