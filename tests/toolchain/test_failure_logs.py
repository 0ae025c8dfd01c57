"""Every failed tool call leaves one INFO record on the ``toolchain`` logger.

The record names the tool, the call id and the ``ToolCallError.kind`` (as attributes a
handler can filter on, and in its message), and quotes the error the model reads. One
test per kind, each through a chain as a program runs it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from formats import XMLFormat
from toolchain import (
    ExecutionContext,
    JSONToolChain,
    Limits,
    Tool,
    ToolCall,
    ToolCallRefused,
    ToolChainResult,
    ToolError,
    ToolHook,
    ToolResult,
    tool,
)


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool
def find_flight(number: str) -> str:
    """Look a flight up."""
    raise ToolError(f"no flight {number}")


@tool
def crash() -> str:
    """A tool with a bug."""
    raise RuntimeError("division by zero, somewhere")


@tool(timeout=0.05)
async def hang() -> str:
    """Never answers."""
    await asyncio.Event().wait()
    return "never"


@tool
def quit_early(ctx: ExecutionContext) -> str:
    """Stops the run, then notices."""
    ctx.cancel("the user left")
    ctx.raise_if_cancelled()
    return "never"


@dataclass
class NoInput:
    pass


class Junk(Tool[NoInput, str]):
    name = "junk"
    description = "Returns something that is not a ToolResult."

    def call(self, ctx: ExecutionContext, input: NoInput) -> ToolResult[str]:
        return "not a ToolResult"  # type: ignore[return-value]  # the bug under test


class Refuse(ToolHook):
    def before_tool_call(self, ctx: ExecutionContext, call: ToolCall) -> None:
        if call.name == "add":
            raise ToolCallRefused("adding needs approval")


class Broken(ToolHook):
    def before_tool_call(self, ctx: ExecutionContext, call: ToolCall) -> None:
        raise RuntimeError("the hook has a bug")


def chain() -> JSONToolChain:
    chain = JSONToolChain()
    for one in (add, find_flight, crash, hang, quit_early, Junk()):
        chain.register_tool(one)
    return chain


def plain() -> ExecutionContext:
    return ExecutionContext()


def refusing() -> ExecutionContext:
    ctx = ExecutionContext()
    ctx.hooks.add(Refuse())
    return ctx


def broken() -> ExecutionContext:
    ctx = ExecutionContext()
    ctx.hooks.add(Broken())
    return ctx


def limited() -> ExecutionContext:
    return ExecutionContext(limits=Limits(max_tool_calls_per_tool={"add": 0}))


@pytest.mark.parametrize(
    ("kind", "action", "make_ctx", "tool_name", "quoted"),
    [
        ("unknown_tool", '{"tool": "ad", "args": {}}', plain, "ad", "Did you mean 'add'?"),
        (
            "invalid_arguments",
            '{"tool": "add", "args": {"a": "two", "b": 2}}',
            plain,
            "add",
            "invalid arguments for add",
        ),
        (
            "tool_error",
            '{"tool": "find_flight", "args": {"number": "AA9"}}',
            plain,
            "find_flight",
            "no flight AA9",
        ),
        ("tool_error", '{"tool": "crash", "args": {}}', plain, "crash", "division by zero"),
        ("timeout", '{"tool": "hang", "args": {}}', plain, "hang", "did not finish within 0.05 s"),
        ("cancelled", '{"tool": "quit_early", "args": {}}', plain, "quit_early", "the user left"),
        ("output_error", '{"tool": "junk", "args": {}}', plain, "junk", "not a ToolResult"),
        ("refused", '{"tool": "add", "args": {"a": 1, "b": 2}}', refusing, "add", "needs approval"),
        ("hook_error", '{"tool": "add", "args": {"a": 1, "b": 2}}', broken, "add", "RuntimeError"),
        ("limit", '{"tool": "add", "args": {"a": 1, "b": 2}}', limited, "add", "limit is reached"),
        (
            "parse",
            '[{"tool": "add", "args": {"a": 1, "b": 2}}, 42]',
            plain,
            "error",
            "not an object with a tool name",
        ),
    ],
)
async def test_each_failed_call_logs_its_tool_id_and_kind(
    caplog: pytest.LogCaptureFixture,
    kind: str,
    action: str,
    make_ctx: Callable[[], ExecutionContext],
    tool_name: str,
    quoted: str,
) -> None:
    caplog.set_level(logging.INFO, logger="toolchain")
    result = await chain().execute(make_ctx(), action, XMLFormat())
    failed = [(c, e) for c, e in zip(result.raw.calls, result.raw.errors, strict=True) if e]
    assert [error.kind for _, error in failed] == [kind]
    call, error = failed[0]
    records = [
        r
        for r in caplog.records
        if r.name == "toolchain" and r.levelno == logging.INFO and hasattr(r, "error_kind")
    ]
    assert len(records) == 1, [r.getMessage() for r in caplog.records]
    record = records[0]
    assert tuple(record.__dict__[name] for name in ("tool", "call_id", "error_kind")) == (
        tool_name,
        call.id,
        kind,
    )
    message = record.getMessage()
    shown_id = call.id or "no id"  # an item that is no call at all has none
    assert message.startswith(f"tool call {tool_name} ({shown_id}) failed: {kind}: ")
    assert quoted in message and quoted in error.message


async def test_a_call_that_succeeds_logs_nothing(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="toolchain")
    result = await chain().execute(
        plain(), '{"tool": "add", "args": {"a": 1, "b": 2}}', XMLFormat()
    )
    assert result.raw.errors == (None,)
    assert caplog.records == []


async def test_the_record_is_one_bounded_line_whatever_the_model_wrote(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="toolchain")
    name = "x\nFAKE toolchain ERROR forged\x1b[2J" + "y" * 5000
    action = '{"tool": ' + _json_string(name) + ', "args": {}}'
    result: ToolChainResult = await chain().execute(plain(), action, XMLFormat())
    assert result.raw.errors[0] is not None
    (record,) = caplog.records
    message = record.getMessage()
    assert "\n" not in message and "\x1b" not in message and "\\x1b" in message
    assert len(message) < 1000


async def test_disabled_logging_builds_no_record(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="toolchain")
    await chain().execute(plain(), '{"tool": "ad", "args": {}}', XMLFormat())
    assert caplog.records == []


def _json_string(text: str) -> str:
    import json

    return json.dumps(text)
