"""``CompositeTool``: its sub-tools behind one tool, and the sequence of sub-calls one call
runs (parsed, checked against the run's limits and guards, observed, each in its place)."""

from __future__ import annotations

import difflib
import time
from collections.abc import Mapping, Sequence
from typing import Any, cast

import pydantic

from toolchain import (
    ArgumentsError,
    ContentPart,
    ExecutionContext,
    InputCodec,
    Stats,
    Tool,
    ToolCall,
    ToolCallError,
    ToolCallFinished,
    ToolCallStarted,
    ToolDefinitionError,
    ToolError,
    ToolResult,
)
from toolchain._errors import ToolchainValueError
from toolchain._hooks import guard_call
from toolchain._syntax._json import NAME_KEYS, JSONValue, call_from_mapping
from toolchain._tool import check_tool, check_tool_name
from toolchain.composite._schema import calls_schema, parameters
from toolchain.composite._subcall import cancel_text, invoke, unshowable

__all__ = ["CompositeInput", "CompositeOutput", "CompositeTool"]

AnyTool = Tool[Any, Any]
CompositeOutput = dict[str, list[dict[str, object]]]
"""``{"results": [entry, ...]}``; an entry is ``{"name", "result"}`` or ``{"name", "error"}``."""

DEFAULT_MAX_CALLS = 20
_MAX_SHOWN_NAME = 80


class CompositeInput(pydantic.BaseModel):
    """The composite's arguments: the sub-calls, each checked on its own when it runs.

    Items stay untyped here so that one malformed sub-call fails only itself.
    """

    model_config = pydantic.ConfigDict(extra="forbid", frozen=True)

    calls: list[Any]


class _CompositeCodec(InputCodec[CompositeInput]):
    """Validates the outer shape and the number of calls; documents each sub-tool's
    arguments in a JSON Schema that is precise for native tool calling."""

    def __init__(self, name: str, max_calls: int, schema: dict[str, object]) -> None:
        super().__init__(CompositeInput)
        self._name, self._max_calls, self._calls_schema = name, max_calls, schema

    def validate(self, args: Mapping[str, object]) -> CompositeInput:
        value = super().validate(args)
        problem = _too_many(self._name, self._max_calls, len(value.calls))
        if problem is not None:
            raise ArgumentsError([problem])
        return value

    def json_schema(self) -> dict[str, object]:
        return self._calls_schema


class CompositeTool(Tool[CompositeInput, CompositeOutput]):
    """One tool that runs a list of calls to its sub-tools, in order (see ``toolchain.composite``).

    ``subtools`` are ordinary ``Tool``s (``@tool`` functions or subclasses) with
    distinct names. ``max_calls`` bounds the sub-calls of one call: a longer list is
    refused whole, as invalid arguments, before anything runs (a half-run sequence of
    dependent steps would be worse than none). ``policy`` and ``timeout`` are the
    composite's own, as on any tool.

    >>> from toolchain import tool
    >>> @tool
    ... def add(a: int, b: int) -> int:
    ...     '''Add two integers.'''
    ...     return a + b
    >>> maths = CompositeTool("maths", "Arithmetic.", [add], max_calls=5)
    >>> print(maths.description)
    Arithmetic.
    <BLANKLINE>
    Sub-tools, called as {"calls": [{"name": "<sub-tool>", "args": {...}}, ...]} (at most 5 \
calls; they run one after another, in order, and each gets its own result or error):
    - add(a: integer, b: integer): Add two integers.
    """

    def __init__(
        self,
        name: str,
        description: str,
        subtools: Sequence[AnyTool],
        *,
        max_calls: int = DEFAULT_MAX_CALLS,
        policy: str = "",
        timeout: float | None = None,
    ) -> None:
        self.name = check_tool_name(name, "CompositeTool")
        owner = f"CompositeTool {name!r}"
        if not description.strip():
            raise ToolDefinitionError(
                f"{owner} has no description: the model reads it to choose the tool"
            )
        if isinstance(max_calls, bool) or max_calls < 1:
            raise ToolchainValueError(f"{owner}: max_calls must be >= 1, got {max_calls!r}")
        tools: dict[str, AnyTool] = {}
        for sub in subtools:
            check_tool(sub)
            if sub.name in tools:
                raise ToolDefinitionError(f"{owner} has two sub-tools named {sub.name!r}")
            sub.input_schema()  # a bad input type fails here, not at the first call
            tools[sub.name] = sub
        if not tools:
            raise ToolDefinitionError(f"{owner} has no sub-tools")
        self.subtools: Mapping[str, AnyTool] = tools
        self.max_calls = max_calls
        self.policy = policy
        self.timeout = timeout
        self.description = f"{description.strip()}\n\n{self._guide()}"
        schema = calls_schema(tools, max_calls)
        vars(self)["_codec"] = _CompositeCodec(name, max_calls, schema)  # read by Tool.codec

    async def call(
        self, ctx: ExecutionContext, input: CompositeInput
    ) -> ToolResult[CompositeOutput]:
        problem = _too_many(self.name, self.max_calls, len(input.calls))
        if problem is not None:  # the chain's validation refuses these; a direct caller may not
            raise ToolError(problem)
        group = ctx.new_call_id()
        entries: list[dict[str, object]] = []
        media: list[ContentPart] = []
        notes: dict[str, None] = {}  # instructions, each once, in order
        paused_before = ctx.pause_reason
        for index, item in enumerate(input.calls):
            held = ctx.pause_reason and not paused_before  # a sub-call of ours paused the run
            name, result, error = await self._run_one(
                ctx, f"{group}/{index}", index, item, held=bool(held)
            )
            entry: dict[str, object] = {"name": name}
            if result is None:
                entry["error"] = error.message if error is not None else "no result"
                entries.append(entry)
                continue
            entry["result"] = result.text
            if result.media:
                entry["attachments"] = len(result.media)
                media.extend(result.media)
            if result.instructions.strip():
                notes[f"{name}: {result.instructions.strip()}"] = None
            entries.append(entry)
        return ToolResult({"results": entries}, media=tuple(media), instructions="\n".join(notes))

    # -- one sub-call ----------------------------------------------------------------

    async def _run_one(
        self, ctx: ExecutionContext, id: str, index: int, item: object, *, held: bool
    ) -> tuple[str | None, ToolResult[object] | None, ToolCallError | None]:
        """(the name to report, the result or None, the error or None); never raises
        but for the composite's own cancellation. ``held``: an earlier sub-call paused
        the run, so this one is not run."""
        started = time.perf_counter()
        parsed = self._parse(index, item)
        result: ToolResult[object] | None = None
        if isinstance(parsed, str):
            name = _shown_name(item)
            call = ToolCall(name or "", {}, id)
            failure: ToolCallError | None = ToolCallError("parse", parsed)
        elif held:
            name, call = _short(parsed.name), ToolCall(parsed.name, parsed.args, id)
            message = (
                f"not run: the run paused before it ({ctx.pause_reason}); make this call "
                "again once the run resumes"
            )
            failure = ToolCallError("refused", message)
        else:
            name, call = _short(parsed.name), ToolCall(parsed.name, parsed.args, id)
            result, failure = await self._attempt(ctx, index, call)
        # Every sub-call ends here, failed or not: observers see them all.
        qualified = self._qualified(call.name)
        if ctx.events.has_subscribers(ToolCallFinished):
            duration = time.perf_counter() - started
            event = ToolCallFinished(
                ctx, index, qualified, call.args, result, failure, duration, id
            )
            ctx.events.emit(event)
        if failure is not None:
            ctx.stats.count_call(Stats.TOOL_ERRORS, qualified)
        return name, result, failure

    def _parse(self, index: int, item: object) -> ToolCall | str:
        """The sub-call in ``item``, or why it is not one (the chain's leniency: ``tool``
        for ``name``, ``arguments`` for ``args`` …)."""
        if isinstance(item, Mapping) and not any(key in item for key in (*NAME_KEYS, "function")):
            keys = ", ".join(map(str, cast("Mapping[object, object]", item))) or "none"
            return f'no "name" (keys: {keys}); name one of: {", ".join(self.subtools)}'
        return call_from_mapping(index, cast(JSONValue, item))

    async def _attempt(
        self, ctx: ExecutionContext, index: int, call: ToolCall
    ) -> tuple[ToolResult[object] | None, ToolCallError | None]:
        if ctx.cancelled:
            return None, ToolCallError("cancelled", f"not run: {cancel_text(ctx)}")
        qualified = self._qualified(call.name)
        ctx.stats.count_call(Stats.TOOL_CALLS, qualified)
        sub = self.subtools.get(call.name)
        if sub is None:
            return None, ToolCallError("unknown_tool", self._unknown(call.name))
        over = ctx.limits.tool_call_refused(ctx.stats, qualified)
        if over is not None:
            message = f"{call.name} was not run: the run's {over} limit is reached"
            return None, ToolCallError("limit", message)
        if ctx.hooks.guarded:  # approvals and activation, as for a direct call
            refusal = await guard_call(ctx, ToolCall(sub.name, call.args, call.id))
            if refusal is not None:
                return None, refusal
        if ctx.events.has_subscribers(ToolCallStarted):
            ctx.events.emit(ToolCallStarted(ctx, index, qualified, call.args, call.id))
        result, failure = await invoke(ctx, sub, call.args, call.id)
        if result is not None:
            failure = unshowable(sub.name, result)
        return (result if failure is None else None), failure

    def _qualified(self, name: str) -> str:
        """How a sub-call is named in events and stats: ``file.write``."""
        return f"{self.name}.{_short(name) or '?'}"

    def _unknown(self, name: str) -> str:
        known = list(self.subtools)
        close = difflib.get_close_matches(name, known, n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        return (
            f"unknown sub-tool {_short(name)!r}.{hint} Sub-tools of {self.name}: {', '.join(known)}"
        )

    # -- what the model reads --------------------------------------------------------

    def _guide(self) -> str:
        lines = [
            'Sub-tools, called as {"calls": [{"name": "<sub-tool>", "args": {...}}, ...]} '
            f"(at most {self.max_calls} calls; they run one after another, in order, and "
            "each gets its own result or error):"
        ]
        for sub in self.subtools.values():
            line = f"- {sub.name}({parameters(sub.prompt_schema())}): {sub.description.strip()}"
            if sub.policy.strip():
                line += f" Policy: {sub.policy.strip()}"
            lines.append(line)
        return "\n".join(lines)


def _too_many(name: str, max_calls: int, count: int) -> str | None:
    """Why ``count`` sub-calls are refused, or None when they may run."""
    if count <= max_calls:
        return None
    return (
        f"calls: {count} calls given, but one {name} call takes at most {max_calls}; "
        f"split them over several {name} calls"
    )


def _short(name: str) -> str:
    """A name the model wrote, cut to a length fit to show back."""
    name = name.strip()
    return name if len(name) <= _MAX_SHOWN_NAME else name[: _MAX_SHOWN_NAME - 3] + "..."


def _shown_name(item: object) -> str | None:
    """The sub-tool name a malformed item gives, for its entry (None when it gives none)."""
    if not isinstance(item, Mapping):
        return None
    mapping = cast("Mapping[str, object]", item)
    name = next((mapping[key] for key in NAME_KEYS if key in mapping), None)
    return _short(name) or None if isinstance(name, str) else None
