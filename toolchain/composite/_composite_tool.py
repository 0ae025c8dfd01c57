"""``CompositeTool``: its sub-tools behind one tool, and the sequence of sub-calls one call
runs (parsed, checked against the run's limits and guards, observed, each in its place)."""

from __future__ import annotations

import dataclasses
import difflib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
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
from toolchain import _approvals as approvals
from toolchain._approvals import Approval, ApprovalRequest, CallHeld, Hold, Settle
from toolchain._errors import ToolchainValueError
from toolchain._hooks import guard_call
from toolchain._syntax._json import NAME_KEYS, JSONValue, call_from_mapping
from toolchain._tool import check_tool, check_tool_name
from toolchain.chain import _step_seam
from toolchain.chain._run import UNVALIDATED
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
    dependent steps would be worse than none). ``policy``, ``timeout``,
    ``requires_approval`` and ``max_concurrency`` are the composite's own, as on any tool.

    A sub-tool that needs approval (``Tool.requires_approval``) is decided as a direct
    call is; when nobody can decide now, the sub-call is held, the sub-calls after it
    are not run (each says so), and the composite's own call is held in its action
    (its ``ApprovalRequest`` names the sub-call, ``via`` the composite). Resuming runs
    that sub-call alone, never the ones before it again, and makes the composite's
    result with it in its place.

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
        requires_approval: bool | Callable[[Any], object] = False,
        max_concurrency: int | None = None,
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
        self.requires_approval = requires_approval
        self.max_concurrency = max_concurrency
        # A sub-call may wait for a person: chains now tell their calls' tools which call
        # they run in (the approver, the clock to stop while one waits).
        approvals.nesting = True
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
        parts: list[_Part] = []
        paused_before = ctx.pause_reason
        waiting: _Waiting | None = None  # a sub-call held for a person's decision
        for index, item in enumerate(input.calls):
            skipped = None
            if waiting is not None:
                skipped = (
                    f"not run: {waiting.call.name} before it waits for a person's approval; "
                    "make this call again once the run resumes"
                )
            elif ctx.pause_reason and not paused_before:  # a sub-call of ours paused the run
                skipped = (
                    f"not run: the run paused before it ({ctx.pause_reason}); make this call "
                    "again once the run resumes"
                )
            name, result, error = await self._run_one(
                ctx, f"{group}/{index}", index, item, skipped=skipped
            )
            if isinstance(error, Hold):
                waiting = _Waiting(
                    index, name, error, ToolCall(error.request.tool, {}, f"{group}/{index}")
                )
                parts.append(_part(name, None, approvals.held_error(CallHeld(error.request))))
                continue
            nested = approvals.held_in(error)
            if nested is not None:  # a sub-tool's own calls wait (a sub-agent's)
                waiting = self._nested(index, name, nested, f"{group}/{index}")
                parts.append(_part(name, None, error))
                continue
            parts.append(_part(name, result, error))
        if waiting is not None:
            raise self._held(ctx, parts, waiting)
        return _result(parts)

    def _nested(self, index: int, name: str | None, nested: CallHeld, id: str) -> _Waiting:
        """A sub-call waiting on calls of its own, its requests under this composite."""
        requests = tuple(
            dataclasses.replace(request, via=(self.name, *request.via))
            for request in nested.requests
        )
        hold = Hold(requests[0], UNVALIDATED)
        return _Waiting(index, name, hold, ToolCall(requests[0].tool, {}, id), nested, requests)

    def _held(self, ctx: ExecutionContext, parts: list[_Part], waiting: _Waiting) -> CallHeld:
        more = waiting.requests[1:]
        return CallHeld(waiting.hold.request, settle=self._settle(ctx, parts, waiting), more=more)

    def _settle(self, ctx: ExecutionContext, parts: list[_Part], waiting: _Waiting) -> Settle:
        """How this call's result is made once its held sub-call is decided: that
        sub-call run (only it: the ones before it ran already), or answered with the
        denial, in its place among the others."""
        if waiting.nested is not None:
            return self._settle_nested(ctx, parts, waiting, waiting.nested)
        sub = self.subtools[waiting.hold.request.tool]
        request = waiting.hold.request
        call = ToolCall(sub.name, request.args, request.call_id)

        async def settle(
            decisions: Mapping[str, Approval],
        ) -> tuple[ToolResult[object] | None, ToolCallError | None]:
            decision = decisions[request.call_id]  # the only call it waits on
            started = time.perf_counter()
            result: ToolResult[object] | None = None
            if decision.approved:
                qualified = self._qualified(sub.name)
                if ctx.events.has_subscribers(ToolCallStarted):
                    event = ToolCallStarted(ctx, waiting.index, qualified, call.args, call.id)
                    ctx.events.emit(event)
                result, failure = await _step_seam.stepped(
                    ctx, call, sub, lambda: invoke(ctx, sub, call.args, call.id, waiting.hold.value)
                )
                if result is not None:
                    failure = unshowable(sub.name, result)
                if failure is not None:
                    result = None
            else:
                failure = approvals.denial(sub.name, decision)
            self._ended(ctx, waiting.index, call, result, failure, started)
            parts[waiting.index] = _part(waiting.name, result, failure)
            return cast("ToolResult[object]", _result(parts)), None

        return settle

    def _settle_nested(
        self, ctx: ExecutionContext, parts: list[_Part], waiting: _Waiting, nested: CallHeld
    ) -> Settle:
        """How this call's result is made once calls its sub-call waits on are decided:
        the sub-call's own ``settle``; it may wait again (a sub-agent that paused again),
        and so does this call."""
        inner = nested.settle
        assert inner is not None  # a sub-tool's held calls come with how to settle them

        async def settle(
            decisions: Mapping[str, Approval],
        ) -> tuple[ToolResult[object] | None, ToolCallError | None]:
            started = time.perf_counter()
            result, failure = await inner(decisions)
            still = approvals.held_in(failure)
            if still is not None:
                again = self._nested(waiting.index, waiting.name, still, waiting.call.id)
                parts[waiting.index] = _part(waiting.name, None, failure)
                return None, approvals.held_error(self._held(ctx, parts, again))
            if result is not None:
                failure = unshowable(waiting.call.name, result)
                if failure is not None:
                    result = None
            self._ended(ctx, waiting.index, waiting.call, result, failure, started)
            parts[waiting.index] = _part(waiting.name, result, failure)
            return cast("ToolResult[object]", _result(parts)), None

        return settle

    # -- one sub-call ----------------------------------------------------------------

    async def _run_one(
        self, ctx: ExecutionContext, id: str, index: int, item: object, *, skipped: str | None
    ) -> tuple[str | None, ToolResult[object] | None, ToolCallError | Hold | None]:
        """(the name to report, the result or None, the error, the held call or None);
        never raises but for the composite's own cancellation. ``skipped``: why it is
        not run (an earlier sub-call paused the run, or waits for a person)."""
        started = time.perf_counter()
        parsed = self._parse(index, item)
        result: ToolResult[object] | None = None
        if isinstance(parsed, str):
            name = _shown_name(item)
            call = ToolCall(name or "", {}, id)
            failure: ToolCallError | Hold | None = ToolCallError("parse", parsed)
        elif skipped is not None:
            name, call = _short(parsed.name), ToolCall(parsed.name, parsed.args, id)
            failure = ToolCallError("refused", skipped)
        else:
            name, call = _short(parsed.name), ToolCall(parsed.name, parsed.args, id)
            result, failure = await self._attempt(ctx, index, call)
        if isinstance(failure, Hold):  # it ends once decided (`_settle`)
            return name, None, failure
        self._ended(ctx, index, call, result, failure, started)
        return name, result, failure

    def _ended(
        self,
        ctx: ExecutionContext,
        index: int,
        call: ToolCall,
        result: ToolResult[object] | None,
        failure: ToolCallError | None,
        started: float,
    ) -> None:
        """Every sub-call ends here, failed or not: observers see them all."""
        qualified = self._qualified(call.name)
        if ctx.events.has_subscribers(ToolCallFinished):
            duration = time.perf_counter() - started
            event = ToolCallFinished(
                ctx, index, qualified, call.args, result, failure, duration, call.id
            )
            ctx.events.emit(event)
        if failure is not None:
            ctx.stats.count_call(Stats.TOOL_ERRORS, qualified)

    def _parse(self, index: int, item: object) -> ToolCall | str:
        """The sub-call in ``item``, or why it is not one (the chain's leniency: ``tool``
        for ``name``, ``arguments`` for ``args`` …)."""
        if isinstance(item, Mapping) and not any(key in item for key in (*NAME_KEYS, "function")):
            keys = ", ".join(map(str, cast("Mapping[object, object]", item))) or "none"
            return f'no "name" (keys: {keys}); name one of: {", ".join(self.subtools)}'
        return call_from_mapping(index, cast(JSONValue, item))

    async def _attempt(
        self, ctx: ExecutionContext, index: int, call: ToolCall
    ) -> tuple[ToolResult[object] | None, ToolCallError | Hold | None]:
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
        value: object = UNVALIDATED
        if approvals.waits(ctx, sub):  # decided on its input, as a direct call is
            around = approvals.enclosing.get()
            checked = await approvals.check(
                ctx,
                sub,
                ToolCall(sub.name, call.args, call.id),
                default=around.approve if around is not None else None,
                via=(self.name,),
                stop_clock=around.stop_clock if around is not None else None,
                start_clock=around.start_clock if around is not None else None,
            )
            if isinstance(checked, ToolCallError | Hold):
                return None, checked
            if checked is not None:
                value = checked.value
        if ctx.events.has_subscribers(ToolCallStarted):
            ctx.events.emit(ToolCallStarted(ctx, index, qualified, call.args, call.id))
        # In a durable run, a step of its own: sub-calls run one after another, and a
        # durable action with a composite in it runs one call at a time.
        result, failure = await _step_seam.stepped(
            ctx, call, sub, lambda: invoke(ctx, sub, call.args, call.id, value)
        )
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


_Part = tuple[dict[str, object], tuple[ContentPart, ...], str]
"""A sub-call's entry in the composite's output, its media, its instructions."""


@dataclass(frozen=True, slots=True)
class _Waiting:
    """The sub-call of a call held for a person's decision, and where it stands."""

    index: int
    name: str | None
    hold: Hold
    call: ToolCall
    nested: CallHeld | None = None
    """The sub-call's tool waits on calls of its own (a sub-agent's held calls)."""
    requests: tuple[ApprovalRequest, ...] = ()
    """Those calls, as this composite's call lists them."""


def _part(
    name: str | None, result: ToolResult[object] | None, error: ToolCallError | None
) -> _Part:
    entry: dict[str, object] = {"name": name}
    if result is None:
        entry["error"] = error.message if error is not None else "no result"
        return entry, (), ""
    entry["result"] = result.text
    if result.media:
        entry["attachments"] = len(result.media)
    note = f"{name}: {result.instructions.strip()}" if result.instructions.strip() else ""
    return entry, tuple(result.media), note


def _result(parts: Sequence[_Part]) -> ToolResult[CompositeOutput]:
    """The composite's result: every sub-call's entry in order, their media, and each
    instruction once."""
    entries = [entry for entry, _, _ in parts]
    media = [part for _, shown, _ in parts for part in shown]
    notes = dict.fromkeys(note for _, _, note in parts if note)
    return ToolResult({"results": entries}, media=tuple(media), instructions="\n".join(notes))


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
