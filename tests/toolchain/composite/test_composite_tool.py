"""Composite tools: many sub-tool calls in one tool call, in order, each with its own
result or error; through both chains, as text and as native tool calls."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field
from syrupy.assertion import SnapshotAssertion

from agents import ToolCallingAgent
from agents._tool_specs import tool_spec
from agents.models import ScriptedModel
from formats import XMLFormat
from tests.support.tools import AsyncSleeper, Sleeper
from toolchain import (
    CompositeTool,
    ExecutionContext,
    ImageContent,
    JSONToolChain,
    Limits,
    StateKey,
    Stats,
    Tool,
    ToolCall,
    ToolCallFinished,
    ToolCallStarted,
    ToolDefinitionError,
    ToolError,
    ToolResult,
    YAMLToolChain,
    tool,
)
from toolchain.composite import CompositeInput, CompositeOutput

FMT = XMLFormat()


class Disk:
    """An in-memory "filesystem" and the composite file tool over it (lmthing's example)."""

    def __init__(self) -> None:
        self.files: dict[str, str] = {}

        @tool
        def write(path: str, content: str) -> dict[str, bool]:
            """Write content to a file."""
            self.files[path] = content
            return {"success": True}

        @tool
        async def append(path: str, content: str) -> dict[str, bool]:
            """Append content to a file."""
            self.files[path] = self.files.get(path, "") + content
            return {"success": True}

        @tool
        def read(path: str) -> dict[str, str]:
            """Read content from a file."""
            if path not in self.files:
                raise ToolError(f"no file {path!r}; write it first")
            return {"content": self.files[path]}

        self.subtools: list[Tool[Any, Any]] = [write, append, read]

    def tool(self, **options: Any) -> CompositeTool:
        return CompositeTool("file", "File system operations.", self.subtools, **options)


def calls(*items: tuple[str, Mapping[str, object]]) -> list[object]:
    return [{"name": name, "args": args} for name, args in items]


async def run(
    composite: CompositeTool, items: Sequence[object], ctx: ExecutionContext | None = None
) -> ToolResult[CompositeOutput]:
    return await composite.call(ctx or ExecutionContext(), CompositeInput(calls=list(items)))


def entries(result: ToolResult[CompositeOutput]) -> list[dict[str, object]]:
    return result.text["results"]


WRITE_APPEND_READ = calls(
    ("write", {"path": "/tmp/test.txt", "content": "Hello"}),
    ("read", {"path": "/tmp/missing.txt"}),
    ("append", {"path": "/tmp/test.txt", "content": " World"}),
    ("read", {"path": "/tmp/test.txt"}),
)


async def test_sub_calls_run_in_order_and_a_failure_stays_in_its_place() -> None:
    disk = Disk()
    result = await run(disk.tool(), WRITE_APPEND_READ)
    assert entries(result) == [
        {"name": "write", "result": {"success": True}},
        {"name": "read", "error": "no file '/tmp/missing.txt'; write it first"},
        {"name": "append", "result": {"success": True}},
        {"name": "read", "result": {"content": "Hello World"}},
    ]
    assert disk.files == {"/tmp/test.txt": "Hello World"}


async def test_observation_through_the_json_chain(snapshot_xml: SnapshotAssertion) -> None:
    disk = Disk()
    chain = JSONToolChain().register_tool(disk.tool())
    items = [
        *WRITE_APPEND_READ,
        {"name": "append", "args": {"path": "/tmp/test.txt"}},  # content is missing
        {"name": "delete", "args": {"path": "/tmp/test.txt"}},
    ]
    action = json.dumps({"tool": "file", "args": {"calls": items}})
    result = await chain.execute(ExecutionContext(), action, FMT)
    assert result.raw.errors == (None,)  # the composite call itself succeeded
    assert result.text == snapshot_xml


async def test_the_yaml_chain_reads_the_same_calls() -> None:
    disk = Disk()
    chain = YAMLToolChain().register_tool(disk.tool())
    action = (
        "- tool: file\n  args:\n    calls:\n"
        "    - name: write\n      args: {path: a.txt, content: '0123'}\n"
        "    - name: read\n      args: {path: a.txt}\n"
    )
    result = await chain.execute(ExecutionContext(), action, FMT)
    assert result.raw.output(0, dict)["results"][1] == {
        "name": "read",
        "result": {"content": "0123"},
    }
    assert "content: '0123'" in result.text


@pytest.mark.xfail(
    strict=True,
    reason="YAML types a sub-call's plain scalars by the first anyOf branch with an `args`, "
    "not the branch its `name` picks (toolchain/_yaml_calls.py _property)",
)
async def test_yaml_plain_scalars_follow_the_named_sub_tool() -> None:
    @tool
    def lookup(code: str) -> str:
        """Look up a code."""
        return code

    chain = YAMLToolChain().register_tool(CompositeTool("c", "C.", [*Disk().subtools, lookup]))
    action = "- tool: c\n  args:\n    calls:\n    - name: lookup\n      args: {code: 0123}\n"
    result = await chain.execute(ExecutionContext(), action, FMT)
    assert result.raw.output(0, dict)["results"] == [{"name": "lookup", "result": "0123"}]


def test_the_schema_is_a_union_discriminated_by_name() -> None:
    disk = Disk()
    schema = disk.tool().input_schema()
    assert schema["required"] == ["calls"]
    assert schema["additionalProperties"] is False
    calls_schema: Any = schema["properties"]
    assert calls_schema["calls"]["type"] == "array"
    assert "maxItems" not in calls_schema["calls"]  # Anthropic's strict mode refuses it
    branches = calls_schema["calls"]["items"]["anyOf"]
    assert [b["properties"]["name"] for b in branches] == [
        {"type": "string", "enum": [name]} for name in ("write", "append", "read")
    ]
    for branch, sub in zip(branches, disk.subtools, strict=True):
        assert branch["properties"]["args"] == sub.input_schema()
        assert branch["required"] == ["name", "args"]
        assert branch["additionalProperties"] is False
    spec = tool_spec(disk.tool())
    assert spec.strict  # every sub-tool's arguments are required: strict for native calls


class Point(BaseModel):
    x: int


class Segment(BaseModel):
    start: Point
    end: Point


class Label(BaseModel):
    text: str = Field(description="What the label says")


class Map:
    class Point(BaseModel):
        """A clashing `Point` definition: another sub-tool's own."""

        lat: float


class PinIn(BaseModel):
    where: Map.Point
    label: Label | None = None


def test_sub_tools_definitions_move_to_the_root_renamed_on_a_clash() -> None:
    @tool
    def measure(segment: Segment) -> float:
        """Length of a segment."""
        return float(segment.end.x - segment.start.x)

    @tool
    def pin(input: PinIn) -> str:
        """Pin a point on the map."""
        return "pinned"

    composite = CompositeTool("geo", "Geometry.", [measure, pin])
    schema: Any = composite.input_schema()
    defs = schema["$defs"]
    assert set(defs) == {"Point", "pin_Point", "Label"}
    assert defs["Point"]["properties"] == {"x": {"type": "integer"}}
    assert defs["pin_Point"]["properties"] == {"lat": {"type": "number"}}
    pin_args = schema["properties"]["calls"]["items"]["anyOf"][1]["properties"]["args"]
    assert pin_args["properties"]["where"] == {"$ref": "#/$defs/pin_Point"}
    assert all(ref.removeprefix("#/$defs/") in defs for ref in _refs(schema))
    result = asyncio.run(run(composite, calls(("measure", {"start": {"x": 1}, "end": {"x": 4}}))))
    assert entries(result) == [{"name": "measure", "result": 3.0}]


def _refs(node: object) -> list[str]:
    """Every ``$ref`` in a JSON Schema."""
    if isinstance(node, list):
        return [ref for item in node for ref in _refs(item)]
    if not isinstance(node, dict):
        return []
    found = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
    return found + [ref for value in node.values() for ref in _refs(value)]


def test_a_native_tool_call_reaches_the_sub_tools() -> None:
    disk = Disk()
    model = ScriptedModel(
        [ScriptedModel.call("file", {"calls": WRITE_APPEND_READ}, id="c1"), "Done."]
    )
    chain = JSONToolChain().register_tool(disk.tool())
    result = ToolCallingAgent(model, tool_chain=chain).run_sync("Write Hello World.")
    assert result.answer == "Done."
    [spec] = model.requests[0].options.tools
    assert spec.name == "file" and spec.strict
    [reply] = [m for m in result.messages if m.role == "tool"]
    assert reply.tool_call_id == "c1"
    assert json.loads(reply.text_content())["results"][3] == {
        "name": "read",
        "result": {"content": "Hello World"},
    }


def test_the_description_lists_each_sub_tool_with_its_parameters() -> None:
    @tool
    def find(query: str, limit: int = 10, mode: str = "any") -> list[str]:
        """Find files by name."""
        return []

    composite = CompositeTool("file", "File system operations.", [*Disk().subtools, find])
    assert composite.description.splitlines()[0] == "File system operations."
    assert composite.description.splitlines()[-4:] == [
        "- write(path: string, content: string): Write content to a file.",
        "- append(path: string, content: string): Append content to a file.",
        "- read(path: string): Read content from a file.",
        "- find(query: string, limit?: integer, mode?: string): Find files by name.",
    ]
    assert "at most 20 calls" in composite.description
    assert not tool_spec(composite).strict  # optional parameters: not strict, not bent


async def test_too_many_calls_are_refused_whole_before_anything_runs() -> None:
    disk = Disk()
    chain = JSONToolChain().register_tool(disk.tool(max_calls=2))
    items = calls(*[("write", {"path": f"{i}.txt", "content": "x"}) for i in range(3)])
    result = await chain.execute_calls(
        ExecutionContext(), [ToolCall("file", {"calls": items})], FMT
    )
    error = result.raw.errors[0]
    assert error is not None and error.kind == "invalid_arguments"
    assert error.message == (
        "invalid arguments for file: calls: 3 calls given, but one file call takes at most 2; "
        "split them over several file calls"
    )
    assert disk.files == {}
    with pytest.raises(ToolError, match="at most 2"):  # called directly, past validation
        await run(disk.tool(max_calls=2), items)


async def test_the_default_limit_is_twenty() -> None:
    composite = Disk().tool()
    items = calls(*[("read", {"path": "x"}) for _ in range(20)])
    assert len(entries(await run(composite, items))) == 20
    assert composite.codec.validate({"calls": items}).calls == items
    with pytest.raises(ValueError, match="21 calls given"):
        composite.codec.validate({"calls": [*items, items[0]]})


async def test_unknown_sub_tool_and_malformed_items_fail_only_themselves() -> None:
    disk = Disk()
    items: list[object] = [
        {"name": "wirte", "args": {"path": "a", "content": "b"}},
        {"path": "a"},
        ["write", {"path": "a"}],
        {"name": "write", "args": "not an object"},
        {"tool": "write", "arguments": {"path": "a", "content": "b"}},  # the chain's aliases
        {"name": "read", "args": {"path": "a", "mode": "r"}},
        {"name": "read"},
    ]
    assert entries(await run(disk.tool(), items)) == [
        {
            "name": "wirte",
            "error": "unknown sub-tool 'wirte'. Did you mean 'write'? "
            "Sub-tools of file: write, append, read",
        },
        {"name": None, "error": 'no "name" (keys: path); name one of: write, append, read'},
        {"name": None, "error": "call 3 is not an object with a tool name (got a list)"},
        {
            "name": "write",
            "error": 'call 4 (write): "arguments" is a string that is not JSON (JSON is '
            "malformed: invalid character (byte 4)); write the arguments as a JSON object",
        },
        {"name": "write", "result": {"success": True}},
        {
            "name": "read",
            "error": "invalid arguments for read: mode: Extra inputs are not permitted (got 'r')",
        },
        {"name": "read", "error": "invalid arguments for read: path: required field is missing"},
    ]


async def test_raising_and_misbehaving_sub_tools_fail_only_their_sub_call() -> None:
    @tool
    def boom(reason: str) -> str:
        """Always fails."""
        raise RuntimeError(reason)

    @tool
    def junk() -> object:
        """Returns something no encoder can write."""
        return {"handle": object()}

    class NoResult(Tool[CompositeInput, str]):
        name = "no_result"
        description = "Forgets to wrap its output."

        def call(self, ctx: ExecutionContext, input: CompositeInput) -> ToolResult[str]:
            return "plain"  # type: ignore[return-value]

    composite = CompositeTool("misc", "Odd tools.", [boom, junk, NoResult(), *Disk().subtools])
    items: list[object] = [
        {"name": "boom", "args": {"reason": "disk full"}},
        {"name": "junk", "args": {}},
        {"name": "no_result", "args": {"calls": []}},
        {"name": "write", "args": {"path": "a", "content": "b"}},
    ]
    found = entries(await run(composite, items))
    assert found[0] == {"name": "boom", "error": "boom failed: RuntimeError: disk full"}
    assert found[1]["name"] == "junk"
    assert str(found[1]["error"]).startswith("junk produced output that cannot be shown: ")
    assert found[2] == {"name": "no_result", "error": "no_result returned str, not a ToolResult"}
    assert found[3] == {"name": "write", "result": {"success": True}}


async def test_a_sub_call_fails_as_a_call_of_the_chain_does_log_record_too(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # One mapping of a tool's failures to the model's words, for a chain's call and a
    # composite's sub-call: the same error and the same record for the developer (a
    # sub-tool returning junk logged nothing before).
    class NoResult(Tool[CompositeInput, str]):
        name = "no_result"
        description = "Forgets to wrap its output."

        def call(self, ctx: ExecutionContext, input: CompositeInput) -> ToolResult[str]:
            return "plain"  # type: ignore[return-value]  # the fault under test

    @tool
    def boom(reason: str) -> str:
        """Always fails."""
        raise RuntimeError(reason)

    seen: dict[str, list[tuple[str, str | None, str]]] = {}
    for how in ("chain", "composite"):
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="toolchain"):
            if how == "chain":
                chain = JSONToolChain().register_tool(NoResult()).register_tool(boom)
                action = json.dumps(
                    [
                        {"tool": "no_result", "args": {"calls": []}},
                        {"tool": "boom", "args": {"reason": "disk full"}},
                    ]
                )
                raw = (await chain.execute(ExecutionContext(), action, FMT)).raw
                errors = [error.message for error in raw.errors if error is not None]
            else:
                composite = CompositeTool("misc", "Odd tools.", [NoResult(), boom])
                items = calls(("no_result", {"calls": []}), ("boom", {"reason": "disk full"}))
                errors = [str(entry["error"]) for entry in entries(await run(composite, items))]
        records = [
            (
                r.levelname,
                r.exc_info[0].__name__ if r.exc_info and r.exc_info[0] else None,
                r.getMessage(),
            )
            for r in caplog.records
            if r.levelno >= logging.WARNING
        ]
        seen[how] = [("errors", None, " | ".join(errors)), *records]
    assert (
        seen["chain"]
        == seen["composite"]
        == [
            (
                "errors",
                None,
                "no_result returned str, not a ToolResult | boom failed: RuntimeError: disk full",
            ),
            (
                "ERROR",
                None,
                "no_result returned str, not a ToolResult: its call() must return ToolResult(...)",
            ),
            ("WARNING", "RuntimeError", "tool boom raised"),
        ]
    )


class TimedSleeper(AsyncSleeper):
    timeout = 0.05


@pytest.mark.parametrize("through_chain", [False, True], ids=["direct", "chain"])
async def test_each_sub_tool_keeps_its_own_timeout(through_chain: bool) -> None:
    composite = CompositeTool("naps", "Naps.", [TimedSleeper(), Sleeper()])
    items = calls(
        ("async_sleep", {"seconds": 5}),
        ("sleep", {"seconds": 0.3}),  # a sync tool in a worker thread
        ("async_sleep", {"seconds": 0}),
    )
    started = time.perf_counter()
    if through_chain:  # one call: the chain drives it in its caller's task
        chain = JSONToolChain().register_tool(composite)
        action = [ToolCall("naps", {"calls": items})]
        found = (await chain.execute_calls(ExecutionContext(), action, FMT)).raw.output(0, dict)
    else:
        found = (await run(composite, items)).text
    assert found["results"] == [
        {"name": "async_sleep", "error": "async_sleep did not finish within 0.05 s"},
        {"name": "sleep", "error": "sleep did not finish within 0.05 s"},
        {"name": "async_sleep", "result": "awake"},
    ]
    assert time.perf_counter() - started < 2


async def test_a_sub_tool_raising_timeout_error_itself_is_a_tool_failure() -> None:
    @tool
    async def flaky() -> str:
        """Times out on its own."""
        raise TimeoutError("upstream timed out")

    found = entries(await run(CompositeTool("c", "C.", [flaky]), calls(("flaky", {}))))
    assert found == [{"name": "flaky", "error": "flaky failed: TimeoutError: upstream timed out"}]


async def test_once_the_run_is_cancelled_later_sub_calls_do_not_start() -> None:
    started: list[str] = []

    @tool
    def step(ctx: ExecutionContext, label: str) -> str:
        """Records that it ran; `stop` cancels the run."""
        started.append(label)
        if label == "stop":
            ctx.cancel("user pressed stop")
        return label

    composite = CompositeTool("steps", "Steps.", [step])
    items = calls(*[("step", {"label": label}) for label in ("a", "stop", "b")])
    assert entries(await run(composite, items)) == [
        {"name": "step", "result": "a"},
        {"name": "step", "result": "stop"},
        {"name": "step", "error": "not run: the run was cancelled (user pressed stop)"},
    ]
    assert started == ["a", "stop"]


@pytest.mark.parametrize("alone", [True, False], ids=["alone", "beside_another_call"])
async def test_cancelling_the_run_stops_the_running_sub_call(alone: bool) -> None:
    disk = Disk()

    @tool
    def noop() -> str:
        """Does nothing."""
        return "ok"

    @tool
    async def stall(ctx: ExecutionContext) -> str:
        """Waits until the run is stopped from outside."""
        asyncio.get_running_loop().call_soon(ctx.cancel, "stop")  # as a user would, later
        await asyncio.sleep(30)
        return "never"

    chain = JSONToolChain().register_tool(CompositeTool("work", "Work.", [stall, *disk.subtools]))
    chain.register_tool(noop)
    ctx = ExecutionContext()
    items = calls(("write", {"path": "a", "content": "b"}), ("stall", {}), ("read", {"path": "a"}))
    actions = [ToolCall("work", {"calls": items})] + ([] if alone else [ToolCall("noop")])
    started = time.perf_counter()
    result = await chain.execute_calls(ctx, actions, FMT)
    assert result.raw.output(0, dict)["results"] == [
        {"name": "write", "result": {"success": True}},
        {"name": "stall", "error": "stall was cancelled: the run was cancelled (stop)"},
        {"name": "read", "error": "not run: the run was cancelled (stop)"},
    ]
    assert time.perf_counter() - started < 5


async def test_media_and_instructions_of_sub_results_are_kept() -> None:
    png = ImageContent(b"\x89PNG", media_type="image/png")

    @tool
    def snapshot(page: str) -> ToolResult[str]:
        """Screenshot a page."""
        return ToolResult(f"shot of {page}", media=[png], instructions="Describe the image.")

    composite = CompositeTool("browser", "Browser.", [snapshot])
    chain = JSONToolChain().register_tool(composite)
    items = calls(("snapshot", {"page": "home"}), ("snapshot", {"page": "about"}))
    result = await chain.execute_calls(
        ExecutionContext(), [ToolCall("browser", {"calls": items})], FMT
    )
    assert result.media == (png, png)
    assert result.raw.output(0, dict)["results"][0] == {
        "name": "snapshot",
        "result": "shot of home",
        "attachments": 1,
    }
    observation = result.observations[0]
    assert observation.instructions == "snapshot: Describe the image."  # once, not twice
    assert "[1] image" in result.text and "[2] image" in result.text


async def test_sub_calls_are_events_stats_and_limits_of_the_run() -> None:
    disk = Disk()
    chain = JSONToolChain().register_tool(disk.tool())
    ctx = ExecutionContext(limits=Limits(max_tool_calls=3))
    before: list[ToolCallStarted] = []
    after: list[ToolCallFinished] = []
    ctx.events.subscribe(ToolCallStarted, before.append)
    ctx.events.subscribe(ToolCallFinished, after.append)
    items = calls(
        ("write", {"path": "a", "content": "b"}),
        ("nope", {}),
        ("read", {"path": "a"}),  # the run's 4th tool call: past max_tool_calls=3
    )
    result = await chain.execute_calls(ctx, [ToolCall("file", {"calls": items})], FMT)
    assert result.raw.output(0, dict)["results"][2] == {
        "name": "read",
        "error": "read was not run: the run's max_tool_calls=3 limit is reached",
    }
    # The composite's own events, and each sub-call's, named <composite>.<sub-tool>.
    assert [(e.name, e.index) for e in before] == [("file", 0), ("file.write", 0)]
    subs = [e for e in after if e.name != "file"]
    assert [(e.name, e.index, e.error and e.error.kind) for e in subs] == [
        ("file.write", 0, None),
        ("file.nope", 1, "unknown_tool"),
        ("file.read", 2, "limit"),
    ]
    assert all(e.ctx is ctx for e in subs)
    # call_1 is the composite call's own id; call_2 the id its sub-calls are grouped by.
    assert [e.id for e in subs] == ["call_2/0", "call_2/1", "call_2/2"]
    assert ctx.stats.get(Stats.TOOL_CALLS) == 4
    assert ctx.stats.get("tool_calls:file.write") == 1
    assert ctx.stats.get(Stats.TOOL_ERRORS) == 2


async def test_sub_tools_see_the_run_state() -> None:
    user = StateKey[str]("user")

    @tool
    def whoami(ctx: ExecutionContext) -> str:
        """The signed-in user."""
        return ctx.state.get(user, "nobody")

    ctx = ExecutionContext()
    ctx.state.set(user, "ada")
    result = await run(CompositeTool("me", "Me.", [whoami]), calls(("whoami", {})), ctx)
    assert entries(result) == [{"name": "whoami", "result": "ada"}]


def test_composites_are_checked_when_built() -> None:
    disk = Disk()
    with pytest.raises(ToolDefinitionError, match="two sub-tools named 'write'"):
        CompositeTool("file", "Files.", [*disk.subtools, disk.subtools[0]])
    with pytest.raises(ToolDefinitionError, match="no sub-tools"):
        CompositeTool("file", "Files.", [])
    with pytest.raises(ToolDefinitionError, match="no description"):
        CompositeTool("file", " ", disk.subtools)
    with pytest.raises(ToolDefinitionError, match="tool name 'a file' is invalid"):
        CompositeTool("a file", "Files.", disk.subtools)
    with pytest.raises(ToolDefinitionError, match="is not a Tool"):
        CompositeTool("file", "Files.", [print])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="max_calls must be >= 1"):
        CompositeTool("file", "Files.", disk.subtools, max_calls=0)


async def test_a_composite_can_be_a_sub_tool() -> None:
    disk = Disk()
    outer = CompositeTool("workspace", "Workspace.", [disk.tool()])
    items = [{"name": "file", "args": {"calls": calls(("write", {"path": "a", "content": "b"}))}}]
    assert entries(await run(outer, items)) == [
        {"name": "file", "result": {"results": [{"name": "write", "result": {"success": True}}]}}
    ]


# -- any list of sub-calls ------------------------------------------------------------

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)
NAMES = st.sampled_from(["write", "append", "read", "boom", "wirte", "", " read "]) | st.text(
    max_size=6
)
ARGS = (
    st.fixed_dictionaries(
        {"path": st.sampled_from(["a", "b"])}, optional={"content": st.text(max_size=4)}
    )
    | JSON_VALUES
)
ITEMS = st.one_of(
    st.builds(lambda name, args: {"name": name, "args": args}, NAMES, ARGS),
    st.builds(lambda name: {"name": name}, NAMES),
    st.dictionaries(
        st.sampled_from(["name", "tool", "args", "arguments", "x"]), JSON_VALUES, max_size=3
    ),
    JSON_VALUES,
)


def _expected_name(item: object) -> object:
    if isinstance(item, dict):
        for key in ("tool", "name", "tool_name"):
            if key in item:
                value = item[key]
                return value.strip() if isinstance(value, str) and value.strip() else None
    return None


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(items=st.lists(ITEMS, max_size=8))
def test_any_sub_calls_give_one_entry_each_in_order(items: list[object]) -> None:
    @tool
    def boom(path: str) -> str:
        """Fails."""
        raise KeyError(path)

    disk = Disk()
    composite = CompositeTool("file", "Files.", [*disk.subtools, boom])
    chain = JSONToolChain().register_tool(composite)
    result = asyncio.run(
        chain.execute_calls(ExecutionContext(), [ToolCall("file", {"calls": items})], FMT)
    )
    assert result.raw.errors == (None,)
    found = result.raw.output(0, dict)["results"]
    assert len(found) == len(items)
    for item, entry in zip(items, found, strict=True):
        assert set(entry) in ({"name", "result"}, {"name", "error"})
        name = _expected_name(item)
        if entry["name"] is not None or name is not None:
            assert entry["name"] == name
