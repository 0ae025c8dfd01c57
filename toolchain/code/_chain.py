"""`PythonToolChain`: a chain whose action is one Python program calling the tools.

The model writes a program (the action section's content, or the ``code`` of the one
native tool ``run_python``); the program runs in Monty (``_sandbox``), type-checked
first against the tools' stubs (``_stubs``). Each tool call it makes is a call of this
chain, through the same stages as a JSON call (checked, hooks and guards, run under its
timeout, observed, events and raw results), so nothing a JSON call would do is skipped.
What the model reads back is only what the program printed and the value of its last
expression; the tools' outputs stay in the sandbox unless the program shows them.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Self, Unpack, cast

import msgspec
import pydantic_monty as monty
from typing_extensions import TypedDict

from formats import FormattedSection, TextFormat
from toolchain import _approvals as approvals
from toolchain._approvals import Approval
from toolchain._context import ExecutionContext
from toolchain._errors import ToolchainStateError, duplicate_tool
from toolchain._events import ToolCallFinished, ToolCallStarted
from toolchain._extension import install_extensions
from toolchain._observations import to_builtins, to_json
from toolchain._result import (
    CallObservation,
    ErrorKind,
    RawToolCallResult,
    RawToolChainResult,
    ToolCall,
    ToolCallError,
    ToolChainResult,
    ToolResult,
)
from toolchain._syntax._json import unfence
from toolchain._tool import Tool, check_tool
from toolchain.chain._base import ChainOptions, ToolChainBase
from toolchain.chain._check import plan
from toolchain.chain._config import ChainConfig
from toolchain.chain._observe import fail, observation_hooks, section_name
from toolchain.chain._pipeline import held_outcome
from toolchain.chain._resume import _settle as settle_held  # pyright: ignore[reportPrivateUsage]  # the chain's own settling of a held call, reused as is
from toolchain.chain._resume import hold
from toolchain.chain._schedule import run_action, run_alone
from toolchain.chain._stages import AnyTool, Outcome, Problem, Signals
from toolchain.chain._view import added_tools
from toolchain.code._sandbox import (
    HOLD,
    Failed,
    Finished,
    Limits,
    Paused,
    ProgramEnd,
    Stop,
    ToolReply,
    ToolRequest,
    resume_program,
    run_program,
)
from toolchain.code._stubs import Stubs, tool_stubs

__all__ = ["PROGRAM_TOOL", "ProgramInput", "ProgramOutput", "PythonSyntax", "PythonToolChain"]

PROGRAM_TOOL = "run_python"
"""The one tool a native agent's model calls: its ``code`` is the program."""

_KINDS: dict[str, ErrorKind] = {
    "type_check": "invalid_arguments",
    "syntax": "parse",
    "exception": "tool_error",
    "timeout": "timeout",
    "memory": "limit",
    "recursion": "limit",
    "tool_calls": "limit",
    "crashed": "tool_error",
    "cancelled": "cancelled",
}


class ProgramInput(TypedDict):
    """The arguments of ``run_python``."""

    code: str


@dataclass(frozen=True)
class ProgramOutput:
    """What a program left, as ``raw`` keeps it: what it printed (up to the limit), the
    value of its last expression (``None`` when it has none), and ``text``, what the
    model read of it (the chain writes a program's output as this text)."""

    printed: str
    value: object
    text: str = ""


class _RunPython(Tool[ProgramInput, ProgramOutput]):
    """The native tool standing for a chain's programs; its chain runs each call."""

    name = PROGRAM_TOOL
    description = "Run a Python program that calls the tools."

    def __init__(self, description: str) -> None:
        self.description = description

    def call(self, ctx: ExecutionContext, input: ProgramInput) -> ToolResult[ProgramOutput]:
        raise ToolchainStateError(
            "run_python runs only through its PythonToolChain (chain.execute_calls)"
        )


_GUIDANCE = (
    "Write one Python program that calls the tools: each tool is an async function (the "
    "signatures are in the tool listing); await every call, and use asyncio.gather(...) "
    "for independent calls (import asyncio). Only print() output and the value of the "
    "last expression come back to you: print what you need, not whole results. The "
    "program has no files, network, environment or imports beyond a small standard "
    "library (asyncio, json, re, math, datetime...), and it is type-checked against the "
    "signatures before it runs."
)


class PythonSyntax:
    """A program as the action: the whole content (unfenced) is one call of
    ``run_python``; outputs are written as JSON (a chain's ``observations`` may say
    otherwise)."""

    label = "Python"

    def read(self, content: str, tools: Mapping[str, AnyTool], limit: int) -> list[ToolCall | str]:
        code = unfence(content)
        return [ToolCall(PROGRAM_TOOL, {"code": code})]

    def write(self, output: object) -> str:
        return to_json(output)

    def schema_text(self, schema: Mapping[str, object]) -> str:
        return to_json(schema)

    def guidance(self) -> str:
        return _GUIDANCE


class PythonToolChain(ToolChainBase):
    """Tool calls written as one Python program, run in the Monty sandbox (extra ``[code]``).

    The tools are offered to the model as typed ``async def`` stubs (``available_tools_prompt``),
    and the program is type-checked against them before it runs: a wrong argument name
    or type, a misspelt result key, a wrong arity is answered with the checker's message
    and no tool runs. Under ``ToolCallingAgent`` the chain offers one native tool,
    ``run_python(code)``, whose description carries the stubs.

    Every call the program makes is a call of this chain (validated into the tool's input
    type, hooks, guards, approvals, timeouts, events, ``raw``); the model reads only what
    the program printed and the value of its last expression, written as
    ``observations`` says. A call held for approval holds the program where it waits
    (see the package text); ``raw`` lists the calls a program made, then the program.

    Bounds, per program, beside every ``ChainOptions`` one:

    - ``program_timeout``: seconds the program itself may run (10; time spent in tools
      is bounded by their own timeout, not this);
    - ``program_memory``: bytes of sandbox heap (64 MiB);
    - ``max_tool_calls``: tool calls (100); the program is stopped before the next one;
    - ``max_print_chars``: printed characters kept (20,000); the rest is counted and
      the model told;
    - ``max_recursion``: nested calls (200);
    - ``type_check``: check programs against the stubs first (True);
    - ``pool``: a ``pydantic_monty.Monty`` pool (entered) to run in; by default the
      process's own, started on first use and closed at exit.

    >>> from formats import XMLFormat
    >>> from toolchain import ExecutionContext, tool
    >>> @tool
    ... def add(a: int, b: int) -> int:
    ...     '''Add two integers.'''
    ...     return a + b
    >>> chain = PythonToolChain().register_tool(add)
    >>> program = "x = await add(2, 3)\\nprint('sum', x)\\nx * 10"
    >>> print(chain.execute_sync(ExecutionContext(), program, XMLFormat()).text)
    <observation>
    <run_python>
    sum 5
    50
    </run_python>
    </observation>
    """

    def __init__(
        self,
        *,
        pool: monty.Monty | None = None,
        type_check: bool = True,
        program_timeout: float = 10.0,
        program_memory: int = 64 * 2**20,
        max_tool_calls: int = 100,
        max_print_chars: int = 20_000,
        max_recursion: int = 200,
        **options: Unpack[ChainOptions],
    ) -> None:
        options.setdefault("observations", "json")
        self.pool = pool
        self.type_check = type_check
        self.limits = Limits(
            timeout=program_timeout,
            memory=program_memory,
            tool_calls=max_tool_calls,
            print_chars=max_print_chars,
            recursion=max_recursion,
        )
        self._stubs: tuple[ChainConfig, Stubs] | None = None
        self._program: tuple[str, _RunPython] | None = None
        super().__init__(PythonSyntax(), **options)

    def _make_config(self) -> ChainConfig:
        config = super()._make_config()
        encode = config.encode_output

        def encode_output(output: object) -> str:
            # A program's output is written as what the model read of it (a resumed
            # program's too, which the chain's resume writes as any call's output).
            return output.text if isinstance(output, ProgramOutput) else encode(output)

        return msgspec.structs.replace(config, encode_output=encode_output)

    # -- what the model sees: one tool, and the tools as stubs ------------------------

    @property
    def tools(self) -> Mapping[str, AnyTool]:
        """The one tool the model calls directly: ``run_python``."""
        return {PROGRAM_TOOL: self.program_tool}

    @property
    def registry(self) -> Mapping[str, AnyTool]:
        return self.tools

    @property
    def program_tools(self) -> Mapping[str, AnyTool]:
        """The tools a program may call, by name."""
        return dict(self.config.offered)

    @property
    def stubs(self) -> Stubs:
        """The stubs of the tools a program may call (made again after a change)."""
        config = self.config
        known = self._stubs
        if known is None or known[0] is not config:
            known = self._stubs = (config, tool_stubs(config.offered.values()))
        return known[1]

    @property
    def program_tool(self) -> AnyTool:
        """``run_python``, described with the current stubs."""
        text = self.stubs.text
        known = self._program
        if known is None or known[0] != text:
            description = f"{_GUIDANCE}\n\nThe tools:\n```python\n{text}\n```"
            known = self._program = (text, _RunPython(description))
        return known[1]

    def available_tools_prompt(self, names: Iterable[str] | None = None) -> str:
        """The tools as typed Python stubs (what programs are checked against); ``names``
        lists only those (a step's active tools; ``run_python`` alone stands for all)."""
        wanted = None if names is None else [n for n in names if n != PROGRAM_TOOL]
        if not wanted:
            return f"```python\n{self.stubs.text}\n```"
        return f"```python\n{self.narrowed(wanted).stubs.text}\n```"

    def register_tool(self, tool: AnyTool) -> Self:
        """Add a tool programs may call; returns the chain (see ``ToolChainBase``)."""
        check_tool(tool)
        existing = self.config.tools.get(tool.name)
        if existing is None and tool.name == PROGRAM_TOOL:
            existing = self.program_tool
        if existing is not None:
            raise duplicate_tool(tool.name, existing)
        tool.input_schema()  # fail now, not at the first call, on a bad input type
        self._registry.add(tool)
        return self

    def with_tools(self, tools: Sequence[AnyTool]) -> Self:
        """This chain with ``tools`` callable from programs too (see ``ToolChainBase``)."""
        added = added_tools(self.config.tools, self._added, tools)
        if len(added) == len(self._added):
            return self
        return self._view(added=added)

    def narrowed(self, active: Iterable[str]) -> Self:
        """This chain with only the ``active`` tools callable from programs; naming
        ``run_python`` alone (what agents pass) keeps every tool."""
        wanted = [name for name in active if name != PROGRAM_TOOL]
        if not wanted:
            return self
        return super().narrowed(wanted)

    # -- running programs --------------------------------------------------------------

    async def _run(
        self,
        config: ChainConfig,
        ctx: ExecutionContext,
        items: list[ToolCall | str],
        text_format: TextFormat,
    ) -> ToolChainResult:
        if not items:
            return ToolChainResult()
        if config.extensions:
            install_extensions(ctx, config.extensions)
        stubs = self.stubs
        made: list[Outcome] = []
        programs: list[Outcome] = []
        for index, item in enumerate(plan(ctx, items, config.max_calls)):
            started = time.perf_counter()
            if isinstance(item, Problem):
                call = ToolCall(PROGRAM_TOOL, {})
                outcome = fail(ctx, call, "parse", item.message)
            else:
                call = item
                outcome = await self._program_call(config, ctx, index, item, stubs, made)
            held = approvals.held_in(outcome.error) is not None  # ends when decided
            if not held and ctx.events.has_subscribers(ToolCallFinished):  # one end a call
                duration = time.perf_counter() - started
                result, error = outcome.result, outcome.error
                ctx.events.emit(
                    ToolCallFinished(
                        ctx, index, call.name, call.args, result, error, duration, call.id
                    )
                )
            programs.append(outcome)
        observed = self._result(config, made, programs, text_format)
        if any(approvals.held_in(o.error) is not None for o in programs):
            # A program waits for a person: the chain's own hold, resumed as any action
            # (ToolChainBase.resume, agent.resume) through the program's settle.
            reserved = self._reserved_names(config, text_format)
            return hold(config, ctx, programs, observed, reserved)
        return observed

    async def _program_call(
        self,
        config: ChainConfig,
        ctx: ExecutionContext,
        index: int,
        call: ToolCall,
        stubs: Stubs,
        made: list[Outcome],
    ) -> Outcome:
        """One program: run, its calls added to ``made``, its outcome what the model reads."""
        code = call.args.get("code")
        if call.name != PROGRAM_TOOL or call.rejected is not None or not isinstance(code, str):
            why = (
                call.rejected.message
                if call.rejected is not None
                else f"only {PROGRAM_TOOL} can be called: write a program that calls "
                f"{call.name}(...)"
                if call.name != PROGRAM_TOOL
                else f'{PROGRAM_TOOL} takes {{"code": "<a Python program>"}}'
            )
            return fail(ctx, call, "invalid_arguments", why)
        if ctx.events.has_subscribers(ToolCallStarted):
            ctx.events.emit(ToolCallStarted(ctx, index, call.name, call.args, call.id))
        program = _ProgramRun(self, config, ctx, call, stubs, made)
        end = await _unless_cancelled(
            ctx,
            lambda stop: run_program(
                code,
                stubs,
                self.limits,
                program.call_tools,
                pool=self.pool,
                check_types=self.type_check,
                stop=stop,
            ),
        )
        outcome = program.outcome(end)
        if ctx.hooks.observation and outcome.result is not None:
            outcome = await _observed(ctx, outcome)
        return outcome

    def _result(
        self,
        config: ChainConfig,
        made: list[Outcome],
        programs: list[Outcome],
        text_format: TextFormat,
    ) -> ToolChainResult:
        """The observation holds the programs only; ``raw`` holds every tool call the
        programs made, then the programs (the calls inside come first: they ended first)."""
        share = min(config.max_output_chars, max(1, config.max_observation_chars // len(programs)))
        reserved = self._reserved_names(config, text_format)
        sections: list[FormattedSection] = []
        observations: list[CallObservation] = []
        for outcome in programs:
            text = outcome.text
            if len(text) > share:
                text = (
                    f"{text[:share]}\n[output truncated: {share} of {len(text)} characters "
                    "shown; print less, e.g. a summary or a slice]"
                )
            name = section_name(PROGRAM_TOOL, {PROGRAM_TOOL: self.program_tool}, reserved)
            sections.append(FormattedSection(name, text))
            call = outcome.call
            observations.append(CallObservation(call.id, call.name, text, (), "", outcome.error))
        everything = [*made, *programs]
        raw = RawToolChainResult(
            tuple(o.call for o in everything),
            tuple(
                None
                if o.result is None
                else RawToolCallResult(o.call.name, o.result.text, o.result, o.call.id)
                for o in everything
            ),
            tuple(o.error for o in everything),
        )
        text = text_format.wrap_observation(text_format.format_sections(sections))
        return ToolChainResult(text, (), raw, tuple(observations))


async def _run_calls(
    config: ChainConfig,
    ctx: ExecutionContext,
    requests: Sequence[ToolRequest],
    made: list[Outcome],
) -> list[Outcome]:
    """The calls a program waits on, run as one action's calls are: each through every
    stage of the chain (``run_alone`` / ``run_action``), at most ``max_calls`` at a time;
    their outcomes, also added to ``made``."""
    done: list[Outcome] = []
    size = config.max_calls
    # The program's calls: an approver is told they come from it (``via``), as a
    # person reading ``pending`` is.
    token = approvals.made_in.set((len(approvals.via_of(ctx)), PROGRAM_TOOL))
    try:
        for start in range(0, len(requests), size):
            chunk = [ToolCall(r.name, dict(r.args)) for r in requests[start : start + size]]
            planned = plan(ctx, list[ToolCall | str](chunk), size)
            if len(planned) == 1:
                outcomes = [await run_alone(config, ctx, planned[0], len(made))]
            else:
                outcomes = await run_action(config, ctx, planned)
            made.extend(outcomes)
            done.extend(outcomes)
    finally:
        approvals.made_in.reset(token)
    return done


async def _observed(ctx: ExecutionContext, outcome: Outcome) -> Outcome:
    """What the model reads of a program, through the observation hooks as a call's
    output goes: the relay boxes a long one, the variables name it. They see the
    program's value as its output (what it printed, when it printed), so a reference
    names that value and a later call, or program, gets it whole; ``raw`` keeps the
    ``ProgramOutput``."""
    assert outcome.result is not None
    kept = outcome.result
    output = cast("ProgramOutput", kept.text)
    value = output.text if output.printed else output.value
    seen = Outcome(outcome.call, ToolResult[object](value), None, outcome.text)
    shown = observation_hooks(ctx, seen)
    if not isinstance(shown, Outcome):
        shown = await shown
    if shown.error is not None or shown.result is None:
        return shown  # a hook failed: the program's call fails with its words
    return Outcome(outcome.call, kept, None, shown.text, shown.media)


def _ended(
    config: ChainConfig,
    ctx: ExecutionContext,
    call: ToolCall,
    limits: Limits,
    end: Finished | Failed,
) -> Outcome:
    """The outcome of a program that ended: what it printed and its value, or why not."""
    if isinstance(end, Failed):
        return fail(ctx, call, _KINDS[end.kind], _failure_text(limits, end))
    text = _finished_text(config, limits, end)
    output = ProgramOutput(end.printed, end.value, text)
    return Outcome(call, ToolResult[object](output), None, text)


def _failure_text(limits: Limits, end: Failed) -> str:
    """What the model reads of a program that failed: why, then what it printed."""
    limit = limits.print_chars
    message = end.message
    if end.printed:
        message += f"\nPrinted before it stopped:\n{end.printed.rstrip()}"
        if end.printed_total > limit:
            message += f"\n{_print_note(end.printed_total, limit)}"
    return message


def _finished_text(config: ChainConfig, limits: Limits, end: Finished) -> str:
    """What the model reads of a program that ran to its end."""
    limit = limits.print_chars
    parts: list[str] = []
    if end.printed:
        parts.append(end.printed.rstrip("\n"))
    if end.printed_total > limit:
        parts.append(_print_note(end.printed_total, limit))
    if end.value is not None:
        parts.append(_shown(config, end.value))
    for request in end.unawaited:
        parts.append(
            f"Note: {request.name}(...) on line {request.line} was never awaited, so it "
            f"did not run; write `await {request.name}(...)`"
        )
    if not parts:
        parts.append(
            "(the program printed nothing and its last expression has no value: print "
            "what you need)"
        )
    return "\n".join(parts)


class _ProgramRun:
    """One program of an action: the calls it waits on run through the chain; when one
    of them waits for a person, the program stops there (Monty's snapshot) and its own
    call is held, with a settle that decides that call and goes on with the program."""

    def __init__(
        self,
        chain: PythonToolChain,
        config: ChainConfig,
        ctx: ExecutionContext,
        call: ToolCall,
        stubs: Stubs,
        made: list[Outcome],
    ) -> None:
        self.chain = chain
        self.config = config
        self.ctx = ctx
        self.call = call
        self.stubs = stubs
        self.made = made
        self.waiting: list[Outcome] = []
        """The outcomes of the calls the program waits on when it paused."""

    async def call_tools(self, requests: Sequence[ToolRequest]) -> list[ToolReply] | None:
        outcomes = await _run_calls(self.config, self.ctx, requests, self.made)
        if any(approvals.held_in(o.error) is not None for o in outcomes):
            self.waiting = outcomes
            return HOLD
        return [_reply(outcome) for outcome in outcomes]

    def outcome(self, end: ProgramEnd) -> Outcome:
        """What the program's call comes to: held, or ended."""
        if isinstance(end, Paused):
            return held_outcome(self._held(end))
        return _ended(self.config, self.ctx, self.call, self.chain.limits, end)

    def _held(self, paused: Paused) -> approvals.CallHeld:
        """The program's call held for the first call it waits on that a person must
        decide (the others of its batch are decided after it, one at a time)."""
        position, inner = next(
            (n, found)
            for n, o in enumerate(self.waiting)
            if (found := approvals.held_in(o.error)) is not None
        )
        request = inner.request  # its via names the program already (`made_in`)

        async def settle(
            decisions: Mapping[str, Approval],
        ) -> tuple[ToolResult[object] | None, ToolCallError | None]:
            return await self._settle(paused, position, inner, decisions[request.call_id])

        return approvals.CallHeld(request, settle=settle, call=self.call)

    async def _settle(
        self, paused: Paused, position: int, inner: approvals.CallHeld, decision: Approval
    ) -> tuple[ToolResult[object] | None, ToolCallError | None]:
        """The held call decided (run as reviewed, or denied), then the program goes on
        from where it waited once every call it waits on is decided."""
        config, ctx = self.config, self.ctx
        decisions = {inner.request.call_id: decision}
        decided = await settle_held(config, ctx, position, inner, decisions, 0, Signals())
        self.waiting[position] = decided
        self.made.append(decided)
        if any(approvals.held_in(o.error) is not None for o in self.waiting):
            return None, approvals.held_error(self._held(paused))
        replies = [_reply(outcome) for outcome in self.waiting]
        chain = self.chain
        end = await _unless_cancelled(
            ctx,
            lambda stop: resume_program(
                paused,
                replies,
                self.stubs,
                chain.limits,
                self.call_tools,
                pool=chain.pool,
                stop=stop,
            ),
        )
        if isinstance(end, Paused):
            return None, approvals.held_error(self._held(end))
        if isinstance(end, Failed):
            return None, ToolCallError(_KINDS[end.kind], _failure_text(chain.limits, end))
        text = _finished_text(config, chain.limits, end)
        return ToolResult[object](ProgramOutput(end.printed, end.value, text)), None


async def _unless_cancelled(
    ctx: ExecutionContext, run: Callable[[Stop], Awaitable[ProgramEnd]]
) -> ProgramEnd:
    """``run(stop)``, stopped at once when the run is cancelled: a program that catches
    its calls' cancellation and goes on must not hold the run (its worker is ended,
    and it fails ``cancelled``)."""
    stop = Stop()
    remove = ctx.on_cancel(lambda: stop(ctx.cancel_reason or "cancelled"))
    try:
        return await run(stop)
    finally:
        remove()


def _reply(outcome: Outcome) -> ToolReply:
    """What a call gives the program: its output as plain data, or its error raised."""
    if outcome.error is not None or outcome.result is None:
        message = outcome.error.message if outcome.error is not None else "no result"
        return ToolReply(error=message)
    try:
        return ToolReply(to_builtins(outcome.result.text))
    except Exception as error:  # an output with no plain-data form
        return ToolReply(
            error=f"{outcome.call.name} returned a value a program cannot hold: {error}"
        )


def _shown(config: ChainConfig, value: object) -> str:
    """The last expression's value in the chain's ``observations`` encoding."""
    try:
        return config.encode_output(value)
    except Exception:  # a value of the sandbox's own (a class it defined): its repr
        return repr(value)


def _print_note(total: int, limit: int) -> str:
    return (
        f"[output limit: the program printed {total:,} characters; only the first "
        f"{limit:,} are shown. Print less: a summary, a count or a slice]"
    )
