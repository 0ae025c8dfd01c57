"""One program run in Monty: the worker pool, the limits, and the drive from suspension to
suspension until the program ends.

Monty runs the program in a worker subprocess (no filesystem, network, environment or
imports beyond its own small standard library) and stops at every call of a function
the program did not define. `run_program` answers each tool call with a future, so the
calls a program makes before it awaits (``asyncio.gather``) arrive together; when the
program waits on them, the chain runs them (``call_tools``) and the program resumes
with their results. Every blocking step of the worker protocol runs on a worker thread,
never on the event loop.

The pool is the process's (`shared_pool`): started by the first program, shared by
every run, closed when the interpreter exits. A chain given its own pool uses that.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import signal
import threading
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias, cast

import pydantic_monty as monty

from toolchain._concurrency import run_in_worker
from toolchain._errors import ToolchainError, ToolchainStateError
from toolchain._redact import logger
from toolchain.code._stubs import Stubs

__all__ = [
    "HOLD",
    "Failed",
    "Finished",
    "Limits",
    "Paused",
    "ProgramEnd",
    "Stop",
    "ToolReply",
    "ToolRequest",
    "resume_program",
    "run_program",
    "shared_pool",
    "type_check",
]

_log = logger("toolchain")
MAX_WORKERS = 32
"""Programs of this process running at once in the shared pool (each in a worker)."""
SCRIPT = "program.py"
"""The program's file name in tracebacks and type errors."""
RELEASE_GRACE = 5.0
"""Seconds a worker has to take its session back once its program ended (it answers in
milliseconds); past that it is ended and the pool replaces it."""

FailureKind = Literal[
    "type_check",
    "syntax",
    "exception",
    "timeout",
    "memory",
    "recursion",
    "tool_calls",
    "crashed",
    "cancelled",
]


@dataclass(frozen=True)
class Limits:
    """What one program may use. ``timeout`` counts the sandbox's own running time (a
    tool's time is bounded by its own timeout); ``print_chars`` bounds what is kept of
    its printed output."""

    timeout: float
    memory: int
    tool_calls: int
    print_chars: int
    recursion: int


@dataclass(frozen=True)
class ToolRequest:
    """A call the program made: the tool, its arguments by name, the line it is on."""

    call_id: int
    name: str
    args: dict[str, object]
    line: int


@dataclass(frozen=True)
class ToolReply:
    """What a call gives back to the program: its value, or the error it raises there."""

    value: object = None
    error: str | None = None


@dataclass(frozen=True)
class Finished:
    """A program that ran to its end."""

    printed: str
    value: object
    printed_total: int
    unawaited: tuple[ToolRequest, ...] = ()
    """Calls the program made but never awaited: they did not run."""


@dataclass(frozen=True)
class Failed:
    """A program that did not run, or stopped: why, in words for the model."""

    kind: FailureKind
    message: str
    printed: str = ""
    printed_total: int = 0
    line: int | None = None


@dataclass(frozen=True)
class Paused:
    """A program stopped while it waits on calls that wait for a person: the worker's
    state at that point (``dump``, Monty's own snapshot), the calls it waits on, and
    what it has done so far. `resume_program` goes on from there, in any worker."""

    dump: bytes
    due: tuple[ToolRequest, ...]
    """The calls the program waits on, answered together when it resumes."""
    code: str
    waiting: tuple[tuple[int, ToolRequest], ...]
    """Calls made and not yet waited on (by Monty's call id)."""
    made: int
    printed: str
    printed_total: int


ProgramEnd: TypeAlias = Finished | Failed | Paused

HOLD = None
"""What ``call_tools`` returns instead of replies to stop the program where it waits
(its calls wait for a person): the program ends `Paused`."""

CallTools = Callable[[Sequence[ToolRequest]], Awaitable[Sequence[ToolReply] | None]]


class Stop:
    """Ends a program from outside, at once (the run was cancelled): a step running is
    cut short by ending its worker, and no step runs after. Callable from any thread."""

    __slots__ = ("_end", "reason")

    def __init__(self) -> None:
        self.reason: str | None = None
        self._end: Callable[[], None] | None = None

    def __call__(self, reason: str) -> None:
        self.reason = reason
        end = self._end
        if end is not None:
            end()


class _Stopped(ToolchainError):
    """Raised in place of a step once the program was stopped."""


# -- the pool ----------------------------------------------------------------------

_pool: monty.Monty | None = None
_pool_lock = threading.Lock()


def shared_pool() -> monty.Monty:
    """The process's worker pool, started on first use and closed at exit.

    Blocking (it spawns the first worker): called on a worker thread.
    """
    global _pool
    with _pool_lock:
        if _pool is None:
            # Workers start on demand up to the cap: a program waits for a worker only past
            # it, and a program whose tool runs another program (a sub-agent in code mode)
            # needs a second one while it holds its own.
            pool = monty.Monty(min_processes=1, max_processes=MAX_WORKERS)
            pool.__enter__()
            atexit.register(_close, pool)
            _pool = pool
        return _pool


def _close(pool: monty.Monty) -> None:
    global _pool
    with _pool_lock:
        pool.__exit__(None, None, None)
        if _pool is pool:
            _pool = None


# -- one program -------------------------------------------------------------------


class _Printed:
    """The program's printed output, kept up to a limit; the rest only counted."""

    __slots__ = ("limit", "parts", "size", "total")

    def __init__(self, limit: int, kept: str = "", total: int = 0) -> None:
        self.limit = limit
        self.parts: list[str] = [kept] if kept else []
        self.size = len(kept)
        self.total = total

    def __call__(self, stream: Literal["stdout", "stderr"], text: str) -> None:
        self.total += len(text)
        room = self.limit - self.size
        if room > 0:
            kept = text[:room]
            self.parts.append(kept)
            self.size += len(kept)

    @property
    def text(self) -> str:
        return "".join(self.parts)


@dataclass
class _Drive:
    """One program's state between suspensions."""

    code: str
    stubs: Stubs
    limits: Limits
    call_tools: CallTools
    printed: _Printed
    waiting: dict[int, ToolRequest] = field(default_factory=lambda: dict[int, ToolRequest]())
    made: int = 0


async def run_program(
    code: str,
    stubs: Stubs,
    limits: Limits,
    call_tools: CallTools,
    *,
    pool: monty.Monty | None = None,
    check_types: bool = True,
    stop: Stop | None = None,
) -> ProgramEnd:
    """Run ``code`` against the tools ``stubs`` describes; ``call_tools`` runs the calls
    it waits on. Never raises for anything the program does: every end is a value."""
    drive = _Drive(code, stubs, limits, call_tools, _Printed(limits.print_chars))
    lookup = dict.fromkeys(stubs.signatures, _never_called)

    def start(session: monty.MontySession) -> monty.SyncSnapshot:
        return session.feed_start(code, print_callback=drive.printed, external_lookup=lookup)

    checkout: dict[str, Any] = {
        "limits": {
            "max_feed_duration_secs": limits.timeout,
            "max_memory": limits.memory,
            "max_recursion_depth": limits.recursion,
            # Each call is two suspensions (the call, then its future); name lookups too.
            "max_suspensions": 4 * limits.tool_calls + 64,
        },
        "type_check": check_types,
        "type_check_stubs": stubs.text if check_types else None,
        "type_check_format": "concise",
    }
    return await _in_session(drive, pool, checkout, start, None, stop or Stop())


async def resume_program(
    paused: Paused,
    replies: Sequence[ToolReply],
    stubs: Stubs,
    limits: Limits,
    call_tools: CallTools,
    *,
    pool: monty.Monty | None = None,
    stop: Stop | None = None,
) -> ProgramEnd:
    """Go on with a `Paused` program, its awaited calls answered by ``replies`` (in the
    order of ``paused.due``), in a fresh worker: the program continues from where it
    waited, not from its start (its limits are the dump's own)."""
    printed = _Printed(limits.print_chars, paused.printed, paused.printed_total)
    drive = _Drive(paused.code, stubs, limits, call_tools, printed, dict(paused.waiting))
    drive.made = paused.made
    lookup = dict.fromkeys(stubs.signatures, _never_called)

    def load(session: monty.MontySession) -> monty.SyncSnapshot:
        return session.load_snapshot(paused.dump, print_callback=printed, external_lookup=lookup)

    answers = _answers(paused.due, replies)
    return await _in_session(drive, pool, {}, load, answers, stop or Stop())


async def _in_session(
    drive: _Drive,
    pool: monty.Monty | None,
    checkout: dict[str, Any],
    begin: Callable[[monty.MontySession], monty.SyncSnapshot],
    answers: dict[int, monty.ExternalSettledResult] | None,
    stop: Stop,
) -> ProgramEnd:
    """Drive a program in a worker of ``pool`` from ``begin`` (a feed, or a snapshot
    loaded and first answered with ``answers``) to its end."""
    worker_pool = pool if pool is not None else await run_in_worker(shared_pool)
    session = worker_pool.checkout(script_name=SCRIPT, **checkout)
    busy = threading.Lock()  # a step and the session's exit never overlap
    worker: list[int] = []  # the worker's pid, once the session has one

    def end_worker() -> None:
        if busy.locked() and worker:
            _kill(worker[0], "of a cancelled program")  # the step running returns at once

    async def step(fn: Callable[..., Any], *args: Any) -> Any:
        """One blocking step of the worker protocol, on a worker thread. Once the
        program is stopped (or this task cancelled) a step still running is ended at
        once: its worker is killed (the pool replaces it), nothing runs on after."""
        if stop.reason is not None:
            raise _Stopped

        def locked() -> Any:
            with busy:
                return fn(*args)

        job = asyncio.ensure_future(run_in_worker(locked, tool=SCRIPT))
        try:
            return await asyncio.shield(job)
        except asyncio.CancelledError:
            end_worker()
            with contextlib.suppress(BaseException):
                await job
            raise

    entered = False

    def enter() -> None:
        nonlocal entered
        session.__enter__()
        # Set here, not after the await: a task cancelled while it waits for a free
        # worker still gets one (the step is awaited to its end), and must give it back.
        entered = True

    stop._end = end_worker  # pyright: ignore[reportPrivateUsage]  # Stop is this module's
    try:
        await step(enter)
        pid = session.worker_pid  # read between turns: it is None while one runs
        if pid is not None:
            worker.append(pid)
        snapshot: monty.SyncSnapshot = await step(begin, session)
        if answers is not None:
            assert isinstance(snapshot, monty.FutureSnapshot)  # where a pause was taken
            snapshot = await step(snapshot.resume, answers)
        return await _drive(drive, snapshot, step)
    except _Stopped:
        return _cancelled(drive, stop)
    except monty.MontyError as error:
        return _cancelled(drive, stop) if stop.reason is not None else _failure(drive, error)
    finally:
        stop._end = None  # pyright: ignore[reportPrivateUsage]  # as above
        if entered:
            if stop.reason is not None and worker and not busy.locked():
                # Stopped between two steps: nothing tells whether the worker still
                # answers (a tool may have frozen it), and the session's exit waits for
                # it forever; ended, the pool replaces it.
                _kill(worker[0], "of a cancelled program")
            await _release(session, busy, worker[0] if worker else None)


def _cancelled(drive: _Drive, stop: Stop) -> Failed:
    return Failed(
        "cancelled",
        f"the program was stopped: the run was cancelled ({stop.reason})",
        drive.printed.text,
        drive.printed.total,
    )


def _answers(
    due: Sequence[ToolRequest], replies: Sequence[ToolReply]
) -> dict[int, monty.ExternalSettledResult]:
    """Replies as Monty takes them: each call's value, or its error raised there."""
    results: dict[int, monty.ExternalSettledResult] = {}
    for request, reply in zip(due, replies, strict=True):
        if reply.error is None:
            results[request.call_id] = {"return_value": reply.value}
        else:
            results[request.call_id] = {"exc_type": "RuntimeError", "message": reply.error}
    return results


async def _release(session: monty.MontySession, busy: threading.Lock, pid: int | None) -> None:
    """Give the worker back to the pool, off the event loop and within `RELEASE_GRACE`.

    The session's exit talks to its worker and waits for it with no bound of its own: a
    worker that froze as its program ended (a tool stopped it and the program finished
    before the stop took hold, or the host stalls it) would hold the run there forever.
    Past the grace the worker is ended; its exit then returns at once and the pool
    replaces it. The program's end is already taken: nothing it computed is lost.
    """

    def release() -> None:
        with busy:  # a step still running after a cancellation returns first
            try:
                session.__exit__(None, None, None)
            except Exception:  # a worker that died: the pool replaces it
                _log.debug("a sandbox session ended with an error", exc_info=True)

    if busy.locked():
        # A step still runs after a cancellation: its worker was ended, so it returns
        # soon; the exit follows it on a thread of its own and the run does not wait.
        threading.Thread(target=release, name="monty-release", daemon=True).start()
        return
    job = asyncio.ensure_future(run_in_worker(release, tool=SCRIPT))
    try:
        await asyncio.wait_for(asyncio.shield(job), RELEASE_GRACE)
    except (TimeoutError, asyncio.CancelledError) as error:
        if pid is not None:
            why = (
                "that stopped answering"
                if isinstance(error, TimeoutError)
                else "of a cancelled program"
            )
            _kill(pid, why)
        with contextlib.suppress(BaseException):
            await job  # returns at once: its worker is gone
        if isinstance(error, asyncio.CancelledError):
            raise


def _kill(pid: int, why: str) -> None:
    """End a worker the run no longer waits for (the pool replaces it)."""
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:  # it ended already
        return
    _log.info("ended the sandbox worker %s (pid %d)", why, pid)


def _never_called(*args: object, **kwargs: object) -> object:
    """What a tool name is bound to when the program reads it without calling it: a
    host function; calling it suspends the program like any tool call (``resume``, never
    ``resume_auto``, answers it), so this body never runs."""
    raise ToolchainStateError("a tool is called through its chain only")


async def _drive(
    drive: _Drive,
    snapshot: monty.SyncSnapshot,
    step: Callable[..., Awaitable[Any]],
) -> ProgramEnd:
    while True:
        if isinstance(snapshot, monty.MontyComplete):
            return Finished(
                drive.printed.text,
                snapshot.output,
                drive.printed.total,
                tuple(drive.waiting.values()),
            )
        current = snapshot
        if isinstance(current, monty.FunctionSnapshot):
            if current.is_os_function:  # files, environment, clock: Monty's own refusal
                snapshot = await step(current.resume_not_handled)
                continue
            request = _request(drive, current)
            if isinstance(request, str):
                error: monty.ExternalResult = {"exc_type": "NameError", "message": request}
                snapshot = await step(current.resume, error)
                continue
            drive.made += 1
            if drive.made > drive.limits.tool_calls:
                return Failed(
                    "tool_calls",
                    f"tool-call limit: the program made more than {drive.limits.tool_calls} "
                    "tool calls and was stopped before the next one ran; make fewer calls "
                    "per program (filter or batch first)",
                    drive.printed.text,
                    drive.printed.total,
                    request.line,
                )
            drive.waiting[current.call_id] = request
            snapshot = await step(current.resume, {"future": ...})
        elif isinstance(current, monty.FutureSnapshot):
            ids = sorted(current.pending_call_ids)  # in the order the program made them
            due = [drive.waiting.pop(i) for i in ids if i in drive.waiting]
            replies = await drive.call_tools(due) if due else ()
            if replies is None:  # HOLD: calls wait for a person; keep the program as it is
                dump: bytes = await step(current.dump)
                return Paused(
                    dump,
                    tuple(due),
                    drive.code,
                    tuple(drive.waiting.items()),
                    drive.made,
                    drive.printed.text,
                    drive.printed.total,
                )
            snapshot = await step(current.resume, _answers(due, replies))
        else:  # a name read but not called: a tool is a function, anything else undefined
            if current.variable_name in drive.stubs.signatures and current.object_id is None:
                snapshot = await step(current.resume_auto)
            else:
                snapshot = await step(current.resume)


def _request(drive: _Drive, snapshot: monty.FunctionSnapshot) -> ToolRequest | str:
    """The call a snapshot stands for, its positional arguments named by the stub, or
    why it is not a tool call."""
    name = str(snapshot.function_name)
    signature = drive.stubs.signatures.get(name)
    if signature is None:
        return f"name {name!r} is not defined (the tools are: {', '.join(drive.stubs.signatures)})"
    args: dict[str, object] = {}
    positional = cast("tuple[object, ...]", snapshot.args)
    if len(positional) > len(signature.params):
        return f"{name}() takes {len(signature.params)} arguments, {len(positional)} were given"
    for param, value in zip(signature.params, positional, strict=False):
        args[param] = value
    for key, value in cast("dict[str, object]", snapshot.kwargs).items():
        if key in args:
            return f"{name}() got multiple values for argument {key!r}"
        args[key] = value
    return ToolRequest(snapshot.call_id, name, args, _line(drive.code, snapshot.position.start))


def _line(code: str, offset: int) -> int:
    return code.encode("utf-8")[:offset].count(b"\n") + 1


def _failure(drive: _Drive, error: monty.MontyError) -> Failed:
    printed, total = drive.printed.text, drive.printed.total
    limits = drive.limits
    if isinstance(error, monty.MontyTypingError):
        return Failed(
            "type_check",
            "the program was not run (no tool ran): it does not type-check against the "
            f"tools' signatures:\n{error.display().strip()}",
        )
    if isinstance(error, monty.MontyCrashedError):
        what = (
            "stopped answering and was ended"
            if error.timed_out
            else f"died (exit status {error.exit_status})"
        )
        _log.warning("the sandbox worker running a program %s", what)
        return Failed(
            "crashed",
            f"the sandbox worker running the program {what}; the program was stopped. "
            "Tool calls it finished before that ran once and are not repeated; run what is "
            "left in a new program",
            printed,
            total,
        )
    if isinstance(error, monty.MontySyntaxError):
        line = _error_line(error)
        return Failed("syntax", _at(error.display("type-msg"), line), printed, total, line)
    assert isinstance(error, monty.MontyRuntimeError | monty.MontyConversionError)
    inner = error.exception()
    text = error.display("type-msg") if isinstance(error, monty.MontyRuntimeError) else str(error)
    line = _error_line(error) if isinstance(error, monty.MontyRuntimeError) else None
    if isinstance(inner, TimeoutError) and "time limit exceeded" in text:
        return Failed(
            "timeout",
            f"time limit: the program ran for more than {limits.timeout:g} s and was stopped; "
            "do less work in one program (an endless loop never ends)",
            printed,
            total,
            line,
        )
    if isinstance(inner, MemoryError) and "memory limit exceeded" in text:
        return Failed(
            "memory",
            f"memory limit: the program used more than {limits.memory:,} bytes and was "
            "stopped; keep less in memory (process items one at a time)",
            printed,
            total,
            line,
        )
    if isinstance(inner, RecursionError):
        return Failed(
            "recursion",
            f"recursion limit: calls nested more than {limits.recursion} deep; the program "
            "was stopped. Use a loop instead",
            printed,
            total,
            line,
        )
    if "max_suspensions" in text or "suspension" in text.lower():
        return Failed(
            "tool_calls",
            f"tool-call limit: the program waited on the host more than the "
            f"{limits.tool_calls} calls allowed and was stopped",
            printed,
            total,
            line,
        )
    return Failed("exception", _at(text, line), printed, total, line)


def _at(text: str, line: int | None) -> str:
    return f"{text} (line {line})" if line is not None else text


def _error_line(error: monty.MontyRuntimeError | monty.MontySyntaxError) -> int | None:
    """The line of the program the error happened on (its innermost frame there)."""
    frames = [f for f in error.traceback() if f.filename.startswith("<python-input")]
    return frames[-1].line if frames else None


def type_check(code: str, stubs: Stubs, *, pool: monty.Monty | None = None) -> str | None:
    """The type checker's message for ``code`` against ``stubs``, or None when it
    passes; runs nothing (blocking: call it off the event loop).

    The function the type-checking measurement reuses: what a program with a mistake
    gets back, without any tool running.
    """
    worker_pool = pool if pool is not None else shared_pool()
    with worker_pool.checkout(
        script_name=SCRIPT,
        type_check=True,
        type_check_stubs=stubs.text,
        type_check_format="concise",
    ) as session:
        try:
            snapshot = session.feed_start(code, print_callback=_Printed(0))
        except monty.MontyTypingError as error:
            return error.display().strip()
        except monty.MontyError:
            return None  # it type-checks; it failed running (nothing external ran)
        del snapshot  # suspended at its first call, or done: never resumed
    return None
