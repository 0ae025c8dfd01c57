"""One exception tree per package under one root, and what user code raises apart (issue 27).

``except GentError`` catches every exception class this library defines; each package
has its own root below it (``formats.FormatError``, ``toolchain.ToolchainError``,
``agents.AgentError``). A bad argument is still Python's own ``ValueError`` or
``TypeError`` (not walked here: those are raised, not defined, by us). What a user's own
code raises to tell a run something the model should read (``ToolError``,
``ToolCallRefused``, ``AnswerRejected``) is a ``toolchain.ModelFeedback`` and not a
``GentError``. Builtin bases stay beside the roots where callers catch by them
(``ArgumentsError`` is still a ``ValueError``).

The tree is drawn from the classes themselves and checked in as
``tests/exception_tree.txt``; after a deliberate change, regenerate it:
``python -m tests.test_exception_tree > tests/exception_tree.txt``.
Durable runs' errors are checked in ``tests/agents/durable/test_error_root.py``, a missing
extra in ``tests/test_extras.py`` (each in a fresh interpreter without the extra).
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pydantic
import pytest

import agents
import formats
import toolchain
from agents import AgentError, AnswerRejected, TypedTermination
from agents.models import AnthropicModel, Message, ModelCallError, OpenAIChatModel
from formats import FormatError, FormatParseError, GentError, Section, XMLFormat
from tests.support.loopback import LoopbackServer
from tests.test_public_api import exported, public_modules
from toolchain import (
    ExecutionContext,
    JSONToolChain,
    ModelFeedback,
    ToolCall,
    ToolCallParseError,
    ToolCallRefused,
    ToolchainError,
    ToolError,
    ToolHook,
    YAMLToolChain,
    tool,
)
from toolchain.mcp import MCPConnectionError, MCPServer
from toolchain.relay import UnknownReference
from toolchain.stores import SQLiteStore, StoredEntry, StoreError

PACKAGES = ("formats", "toolchain", "agents")
ROOTS: dict[str, type[GentError]] = {
    "formats": FormatError,
    "toolchain": ToolchainError,
    "agents": AgentError,
}
DRAWN = Path(__file__).with_name("exception_tree.txt")


# --- finding and drawing the classes ----------------------------------------------------


def modules_of(package: str) -> Iterator[str]:
    """Every module of ``package``, but ``__main__`` ones (importing one runs the CLI)."""
    yield package
    root = importlib.import_module(package)
    for info in pkgutil.walk_packages(root.__path__, f"{package}."):
        if info.name.rpartition(".")[2] != "__main__":
            yield info.name


def defined_exceptions(package: str) -> list[type[BaseException]]:
    """Every exception class a module of ``package`` defines, private ones too."""
    found: dict[type[BaseException], None] = {}
    for name in modules_of(package):
        for value in vars(importlib.import_module(name)).values():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__ == name
            ):
                found[value] = None
    return sorted(found, key=lambda kind: (kind.__module__, kind.__qualname__))


def ours(kind: type) -> bool:
    return kind.__module__.partition(".")[0] in PACKAGES


def where(kind: type[BaseException], exports: dict[type, list[str]]) -> str:
    """The public modules that export ``kind``, or the private module that defines it."""
    return ", ".join(exports[kind]) if kind in exports else f"private: {kind.__module__}"


def drawn_tree() -> str:
    """The exception tree of all three packages, as text.

    Each class is drawn under each of our classes it derives from directly (a class with
    two of ours, as ``UnknownReference``, is drawn under both), with its builtin bases
    in brackets and where to import it from (or the private module that holds it).
    """
    every = {kind for package in PACKAGES for kind in defined_exceptions(package)}
    exports: dict[type, list[str]] = {}
    for module_name in public_modules():
        module = importlib.import_module(module_name)
        for name in exported(module_name):
            value = getattr(module, name)
            if inspect.isclass(value) and value in every:
                exports.setdefault(value, []).append(module_name)
    children: dict[type | None, list[type[BaseException]]] = {}
    for kind in every:
        parents: list[type | None] = [base for base in kind.__bases__ if ours(base)]
        for parent in parents or [None]:
            children.setdefault(parent, []).append(kind)
    lines = ["Exception"]

    def draw(kind: type[BaseException], prefix: str, last: bool, under: type | None) -> None:
        builtin = [base.__name__ for base in kind.__bases__ if base.__module__ == "builtins"]
        builtin = [name for name in builtin if name != "Exception"]
        also = [base.__name__ for base in kind.__bases__ if ours(base) and base is not under]
        label = kind.__name__
        if builtin:
            label += f" [{', '.join(builtin)}]"
        if also:
            label += f" (also {', '.join(also)})"
        branch = "└── " if last else "├── "
        lines.append(f"{prefix}{branch}{label}  — {where(kind, exports)}")
        below = sorted(children.get(kind, []), key=lambda k: k.__name__)
        for index, child in enumerate(below):
            draw(child, prefix + ("    " if last else "│   "), index == len(below) - 1, kind)

    tops = sorted(children[None], key=lambda k: (k is not GentError, k.__name__))
    for index, top in enumerate(tops):
        draw(top, "", index == len(tops) - 1, None)
    return "\n".join(lines) + "\n"


# --- every class under its package's root -------------------------------------------------


def test_the_three_roots_are_one_tree_and_each_package_exports_the_library_root() -> None:
    assert [root.__bases__ for root in ROOTS.values()] == [(GentError,)] * 3
    assert GentError.__bases__ == (Exception,)
    assert formats.GentError is toolchain.GentError is agents.GentError
    assert (formats.FormatError, toolchain.ToolchainError, agents.AgentError) == tuple(
        ROOTS.values()
    )


@pytest.mark.parametrize("package", PACKAGES)
def test_every_error_a_package_defines_is_under_its_root_or_is_feedback(package: str) -> None:
    root = ROOTS[package]
    classes = defined_exceptions(package)
    outside = [
        f"{kind.__module__}.{kind.__qualname__}"
        for kind in classes
        if not issubclass(kind, root | ModelFeedback) and kind is not GentError
    ]
    assert outside == []
    assert len(classes) >= {"formats": 2, "toolchain": 25, "agents": 25}[package]  # found them


# Each error, with the builtin base callers caught it by before the roots: still caught so.
KEPT_BASES: list[tuple[str, type[Exception]]] = [
    ("formats.FormatParseError", ValueError),
    ("toolchain.ArgumentsError", ValueError),
    ("toolchain.DuplicateToolError", ValueError),
    ("toolchain.OutputError", TypeError),
    ("toolchain.ToolCallParseError", ValueError),
    ("toolchain.ToolDefinitionError", TypeError),
    ("toolchain.ToolInputTypeError", TypeError),
    ("toolchain.discovery.EmbeddingError", RuntimeError),
    ("toolchain.discovery.EmbeddingsUnavailable", ImportError),
    ("toolchain.discovery.ToolIndexError", ValueError),
    ("toolchain.mcp.MCPConnectionError", ConnectionError),
    ("toolchain.relay.UnknownReference", LookupError),
    ("toolchain.runtime.MissingExtra", ModuleNotFoundError),
    ("toolchain.variables.ReferenceProblem", ValueError),
    ("toolchain.variables.UnknownVariable", LookupError),
    ("agents.durable.ExecutorInUseError", RuntimeError),
    ("agents.durable.NotLaunchedError", RuntimeError),
    ("agents.durable.NothingToResumeError", ValueError),
    ("agents.durable.WorkflowIdTakenError", ValueError),
    ("agents.evals.CaseFileError", ValueError),
    ("agents.evals.cassettes.CassetteError", ValueError),
    ("agents.evals.matchers.MatcherSpecError", ValueError),
    ("agents.evals.profiles.EnvFileError", ValueError),
    ("agents.evals.suites.SuiteError", LookupError),
    ("agents.evals.toolsets.ToolsetError", ValueError),
]


@pytest.mark.parametrize(("path", "builtin"), KEPT_BASES, ids=[path for path, _ in KEPT_BASES])
def test_an_error_is_caught_by_its_root_and_still_by_its_builtin_base(
    path: str, builtin: type[Exception]
) -> None:
    module, _, name = path.rpartition(".")
    kind = getattr(importlib.import_module(module), name)
    assert issubclass(kind, ROOTS[module.partition(".")[0]])
    assert issubclass(kind, builtin)


# --- what user code raises ----------------------------------------------------------------


def test_what_user_code_raises_for_the_model_is_not_a_library_error() -> None:
    feedback: set[type[BaseException]] = {
        kind
        for package in PACKAGES
        for kind in defined_exceptions(package)
        if issubclass(kind, ModelFeedback)
    }
    assert feedback == {ModelFeedback, ToolError, ToolCallRefused, AnswerRejected, UnknownReference}
    # UnknownReference alone is both: a user's ReferenceReader raises it, and so does
    # ContextRelay.unbox, a library call.
    assert {kind for kind in feedback if issubclass(kind, GentError)} == {UnknownReference}
    assert issubclass(AnswerRejected, ValueError)  # pydantic validators turn it into theirs


class Weather(ToolHook):
    def before_tool_call(self, ctx: ExecutionContext, call: ToolCall) -> ToolCall | None:
        if call.name == "delete_city":
            raise ToolCallRefused("deleting needs a human's approval")
        return None


@tool
def forecast(city: str, days: int) -> str:
    """The forecast."""
    if city == "Atlantis":
        raise ToolError("no data for 'Atlantis'; known cities: Paris, Oslo")
    return f"{city}: sunny for {days} days"


@tool
def delete_city(city: str) -> str:
    """Delete a city."""
    return f"deleted {city}"


async def test_a_program_tells_the_library_failing_from_its_own_signals_by_the_root() -> None:
    ctx = ExecutionContext()
    ctx.hooks.add(Weather())
    chain = JSONToolChain().register_tool(forecast).register_tool(delete_city)
    action = (
        '[{"tool": "forecast", "args": {"city": "Oslo", "days": "many"}},'
        ' {"tool": "forecast", "args": {"city": "Atlantis", "days": 1}},'
        ' {"tool": "delete_city", "args": {"city": "Oslo"}},'
        ' {"tool": "forecast", "args": {"city": "Paris", "days": 2}}]'
    )
    result = await chain.execute(ctx, action, XMLFormat())

    errors = [error.exception if error else None for error in result.raw.errors]
    assert [type(error).__name__ for error in errors] == [
        "ArgumentsError",
        "ToolError",
        "ToolCallRefused",
        "NoneType",
    ]
    assert [isinstance(error, GentError) for error in errors] == [True, False, False, False]
    assert [isinstance(error, ModelFeedback) for error in errors] == [False, True, True, False]
    assert result.raw.results[3] is not None and result.raw.results[3].output == (
        "Paris: sunny for 2 days"
    )
    # what the model reads of a signal is the user's own words, as before
    assert "no data for 'Atlantis'; known cities: Paris, Oslo" in result.text
    assert "deleting needs a human's approval" in result.text


# --- what each package raises, caught by its root ------------------------------------------


@pytest.mark.parametrize("chain", [JSONToolChain(), YAMLToolChain()], ids=["json", "yaml"])
async def test_a_malformed_action_raises_a_toolchain_error(
    chain: JSONToolChain | YAMLToolChain,
) -> None:
    with pytest.raises(ToolchainError) as raised:
        await chain.execute(ExecutionContext(), "{tool: [unclosed", XMLFormat())
    assert isinstance(raised.value, ToolCallParseError)
    assert isinstance(raised.value, ValueError)
    assert isinstance(raised.value, GentError)


def test_output_with_no_section_raises_a_format_error() -> None:
    text_format = XMLFormat().register_section(Section("answer"))
    with pytest.raises(FormatError) as raised:
        text_format.parse("Paris, I think.")
    assert isinstance(raised.value, FormatParseError)
    assert isinstance(raised.value, ValueError)
    assert isinstance(raised.value, GentError)
    assert str(raised.value) == "no section found; write your response in sections: answer"


async def test_a_broken_store_file_is_a_toolchain_error(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"this is not a database\n" * 200)
    with pytest.raises(ToolchainError) as raised:
        await SQLiteStore(garbage).put("run-1", StoredEntry(b"x", "json"))
    assert isinstance(raised.value, StoreError)


async def test_an_mcp_server_that_exits_at_once_is_a_toolchain_error() -> None:
    crash = "import sys; sys.stderr.write('boom: no config file\\n'); sys.exit(3)"
    server = MCPServer.stdio(sys.executable, ["-c", crash])
    with pytest.raises(ToolchainError, match="its stderr ends with: boom: no config") as raised:
        await server.connect()
    assert isinstance(raised.value, MCPConnectionError)
    assert isinstance(raised.value, ConnectionError)


QUESTION = [Message.text("user", "Capital of France?")]


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_a_model_call_to_a_dead_server_is_an_agent_error(provider: str) -> None:
    with LoopbackServer() as gone:
        urls = (gone.openai_base_url, gone.base_url)
    model: OpenAIChatModel | AnthropicModel = (
        OpenAIChatModel("gpt-test", api_key="k", base_url=urls[0], max_retries=0)
        if provider == "openai"
        else AnthropicModel("claude-test", api_key="k", base_url=urls[1], max_retries=0)
    )
    try:
        with pytest.raises(AgentError) as raised:
            await model.generate(QUESTION)
    finally:
        await model.aclose()
    assert isinstance(raised.value, ModelCallError)
    assert raised.value.transient  # still what durable runs retry by
    assert "could not" in str(raised.value)


class Order(pydantic.BaseModel):
    item: str
    quantity: int


def test_a_validator_rejecting_an_answer_raises_feedback_not_a_library_error() -> None:
    def at_least_one(order: Order) -> None:
        if order.quantity < 1:
            raise AnswerRejected("quantity must be at least 1")

    termination = TypedTermination(Order, validators=[at_least_one])
    with pytest.raises(ModelFeedback) as rejected:
        termination.parse_section('{"item": "tea", "quantity": 0}')
    assert isinstance(rejected.value, AnswerRejected)
    assert not isinstance(rejected.value, GentError)
    assert str(rejected.value) == "quantity must be at least 1"


# --- the tree, drawn ------------------------------------------------------------------------


def test_the_drawn_tree_is_the_checked_in_one() -> None:
    assert drawn_tree() == DRAWN.read_text(encoding="utf-8")


def test_the_drawn_tree_shows_every_class_with_its_builtin_bases() -> None:
    tree = drawn_tree()
    for package in PACKAGES:
        for kind in defined_exceptions(package):
            assert f"── {kind.__name__}" in tree
    assert "── ArgumentsError [ValueError]  — toolchain" in tree
    assert "── MissingExtra [ModuleNotFoundError]  — toolchain.runtime" in tree
    assert "── UnknownReference [LookupError] (also ToolchainError)  — toolchain.relay" in tree


if __name__ == "__main__":
    print(drawn_tree(), end="")
