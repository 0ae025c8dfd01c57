"""Tool hooks: ordered code that may change a call, apart from read-only observers,
and the one runner every hook stage goes through.

A ``ToolHook`` may rewrite a call before it is validated, refuse it, replace its
result before it is serialised, or rewrite the serialised text the model will see
(while ``raw`` keeps the real result: how the context relay boxes large outputs and
variables name them). Hooks run in the order they were added, before hooks
and after hooks alike. A hook that raises fails *that call* only (``hook_error``;
``refused`` for ``ToolCallRefused``); the other calls of the action go on. Hooks may
be plain or ``async`` methods.

A guard (``ToolHook.guard_tool_call``) is the one hook that sees every call of a tool,
however deep: the chain's calls, each sub-call of a composite tool, and the calls of
child runs (``ExecutionContext.child``: sub-agents), whose contexts consult their
parents' guards. Approvals and activation checks live there, so nesting a tool
cannot skip them.

``Hooks`` is a run's set of them (``ctx.hooks``): one ordered tuple per stage, replaced,
never mutated, so the chain reads them without a lock. `run_stage` runs any stage's
hooks (a chain's four, an agent's step hooks through `run_hooks`): in order, each given
what the one before returned, plain or ``async`` alike, a failure made the stage's own
result by its `HookStage`, and no coroutine made while every hook is plain.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeAlias, TypeVar

from toolchain._content import ContentPart
from toolchain._errors import (
    ModelFeedback,
    ToolchainError,
    ToolchainTypeError,
    describe_exception,
    exception_text,
)
from toolchain._redact import logger
from toolchain._result import ToolCall, ToolCallError, ToolResult

if TYPE_CHECKING:
    from toolchain._context import ExecutionContext

_log = logger("toolchain")


__all__ = [
    "AfterHook",
    "BeforeHook",
    "GuardHook",
    "HookFailed",
    "HookStage",
    "Hooks",
    "ObservationHook",
    "Shown",
    "ToolCallRefused",
    "ToolHook",
    "check_guards",
    "guard_call",
    "hook_default",
    "hook_error",
    "refusal_error",
    "run_hooks",
    "run_stage",
]

T = TypeVar("T")
V = TypeVar("V")
R = TypeVar("R")
X = TypeVar("X")

Accept = Callable[[object, T], "T | None"]
"""What a stage takes from a hook: ``accept(returned, value)`` is the new value, or None
when ``returned`` is not of the stage's kind (the hook then fails)."""

# Never a hook's failure: they stop the program, close a coroutine or cancel the task.
_THROUGH = (KeyboardInterrupt, GeneratorExit, asyncio.CancelledError)


class HookFailed(ToolchainError):
    """A hook raised (``error``), or returned ``returned``, which its stage does not take."""

    def __init__(self, hook: object, error: BaseException | None, returned: object = None):
        self.hook = hook
        self.error = error
        self.returned = returned
        what = repr(error) if error is not None else f"returned {type(returned).__name__}"
        super().__init__(f"hook {hook!r} failed: {what}")


class HookStage(Generic[V, X, R]):
    """One stage's rules for `run_stage`: its hooks' values are ``V``; ``X`` is what the
    stage knows of the call besides (``extra``); ``R`` is what the stage hands on.

    - ``accept(returned, value, extra)``: the value a hook's return makes, or None when
      the stage does not take it (the hook fails);
    - ``done(value, extra)``: the stage's result once every hook ran;
    - ``failed(failure, value, extra)``: the stage's result when a hook failed (raised:
      ``failure.error``; returned what ``accept`` refused: ``failure.returned``), with
      ``value`` as the hooks before it had left it. It may raise instead.

    >>> stage: HookStage[int, None, str] = HookStage(
    ...     lambda returned, n, extra: returned if isinstance(returned, int) else None,
    ...     lambda n, extra: f"got {n}",
    ...     lambda failure, n, extra: f"failed at {n}",
    ... )
    >>> run_stage(stage, (lambda ctx, n: n * 2, lambda ctx, n: n + 1), ("ctx",), 3, None)
    'got 7'
    >>> run_stage(stage, (lambda ctx, n: n * 2, lambda ctx, n: "x"), ("ctx",), 3, None)
    'failed at 6'
    """

    __slots__ = ("accept", "done", "failed")

    def __init__(
        self,
        accept: Callable[[object, V, X], V | None],
        done: Callable[[V, X], R],
        failed: Callable[[HookFailed, V, X], R],
    ) -> None:
        self.accept = accept
        self.done = done
        self.failed = failed


def run_stage(
    stage: HookStage[V, X, R],
    hooks: Sequence[Callable[..., Any]],
    args: tuple[object, ...],
    value: V,
    extra: X,
) -> R | Awaitable[R]:
    """``stage``'s result after each of ``hooks`` (``hook(*args, value)``) in order.

    A hook returning None keeps the value. The result comes back as it is while every
    hook is plain; once a hook returns an awaitable, the rest runs in a coroutine (only
    then is one made) whose result the caller awaits.
    """
    for at, hook in enumerate(hooks):
        try:
            returned = hook(*args, value)
        except _THROUGH:
            raise
        except BaseException as error:
            return stage.failed(HookFailed(hook, error), value, extra)
        if returned is None:
            continue
        # A value of the stage's own type (the text, call or request it was handed, or a
        # new one) is no awaitable: only anything else is asked (`isawaitable` walks the
        # ABC's registry, and a step hook's request came back every step).
        if type(returned) is not type(value) and inspect.isawaitable(returned):
            return _finish(stage, hooks, at, returned, args, value, extra)
        taken = stage.accept(returned, value, extra)
        if taken is None:
            return stage.failed(HookFailed(hook, None, returned), value, extra)
        value = taken
    return stage.done(value, extra)


async def _finish(
    stage: HookStage[V, X, R],
    hooks: Sequence[Callable[..., Any]],
    at: int,
    pending: Awaitable[object],
    args: tuple[object, ...],
    value: V,
    extra: X,
) -> R:
    """The rest of `run_stage`, once hook ``at`` handed over ``pending``."""
    for index in range(at, len(hooks)):
        hook = hooks[index]
        try:
            returned = await pending if index == at else hook(*args, value)
            if returned is not None and inspect.isawaitable(returned):
                returned = await returned
        except _THROUGH:
            raise
        except BaseException as error:
            return stage.failed(HookFailed(hook, error), value, extra)
        if returned is not None:
            taken = stage.accept(returned, value, extra)
            if taken is None:
                return stage.failed(HookFailed(hook, None, returned), value, extra)
            value = taken
    return stage.done(value, extra)


def run_hooks(
    hooks: Sequence[Callable[..., Any]],
    args: tuple[object, ...],
    value: T,
    accept: Accept[T],
    passthrough: tuple[type[BaseException], ...] = (),
) -> T | Awaitable[T]:
    """``value`` after each of ``hooks`` (``hook(*args, value)``) in order: `run_stage`
    for a stage whose failures are raised.

    A hook returning None keeps the value; an awaitable is awaited, from then on in a
    coroutine the caller awaits (only then is one made). A hook that raises an
    exception of ``passthrough`` (a refusal the stage understands) lets it through;
    any other raises `HookFailed` from it, and so does a return ``accept`` refuses.

    >>> def double(ctx: object, n: int) -> int:
    ...     return n * 2
    >>> def accept(returned: object, n: int) -> int | None:
    ...     return returned if isinstance(returned, int) else None
    >>> run_hooks((double, double), ("ctx",), 3, accept)
    12
    """
    return run_stage(_RAISING, hooks, args, value, (accept, passthrough))


_Raising = tuple[Accept[Any], tuple[type[BaseException], ...]]
"""`run_hooks`'s ``extra``: the caller's ``accept`` and the refusals it lets through."""


def _accepted(returned: object, value: Any, extra: _Raising) -> Any:
    return extra[0](returned, value)


def _same(value: T, extra: object) -> T:
    return value


def _raise(failure: HookFailed, value: object, extra: _Raising) -> Any:
    """`run_hooks`'s failures: a refusal the caller understands as it was raised, any
    other failure as `HookFailed`."""
    if failure.error is not None and isinstance(failure.error, extra[1]):
        raise failure.error
    raise failure from failure.error


# One stage for every `run_hooks` call, the caller's accept in its extra: an agent runs
# its step hooks through it every step, and made a stage and a lambda for it each time.
_RAISING: HookStage[Any, _Raising, Any] = HookStage(_accepted, _same, _raise)


def hook_error(
    failure: HookFailed,
    call: ToolCall,
    *,
    hook: str,
    during: str,
    takes: str,
    refusable: bool = False,
) -> ToolCallError:
    """The error a call fails with when a tool hook failed: what the model reads, and the
    record the developer gets (the one wording every tool-hook stage shares).

    ``hook`` names the hook in the model's words, ``during`` in the log's, ``takes``
    what its stage takes. In a stage that may refuse a call (``refusable``: the before
    hooks, the guards), a ``ToolCallRefused`` is a refusal, not a failure.

    >>> failed = HookFailed("my_hook", None, 42)
    >>> hook_error(failed, ToolCall("ping"), hook="a hook", during="", takes="a str").message
    'a hook returned int, not a str'
    """
    error = failure.error
    if refusable and isinstance(error, ToolCallRefused):
        return refusal_error(call, error)
    if error is None:
        message = f"{hook} returned {type(failure.returned).__name__}, not {takes}"
        _log.error("%s (hook %r)", message, failure.hook)
        return ToolCallError("hook_error", message)
    _log.warning("%s failed on %s", during, call.name, exc_info=error)
    message = f"a tool-call hook failed: {describe_exception(error)}"
    return ToolCallError("hook_error", message, error)


C = TypeVar("C")
F = TypeVar("F", bound=Callable[..., Any])

Shown: TypeAlias = "str | tuple[str, tuple[ContentPart, ...]]"
"""What an observation hook returns: the text, or the text and the parts shown beside it."""
BeforeHook: TypeAlias = Callable[[C, ToolCall], "ToolCall | Awaitable[ToolCall | None] | None"]
AfterHook: TypeAlias = Callable[
    [C, ToolCall, ToolResult[Any]], "ToolResult[Any] | Awaitable[ToolResult[Any] | None] | None"
]
ObservationHook: TypeAlias = Callable[
    [C, ToolCall, ToolResult[Any], str], "Shown | Awaitable[Shown | None] | None"
]
GuardHook: TypeAlias = Callable[[C, ToolCall], "Awaitable[None] | None"]

_STAGES = ("before_tool_call", "after_tool_call", "rewrite_observation", "guard_tool_call")


def hook_default(method: F) -> F:
    """Mark a hook method that does nothing, so `Hooks.add` does not run it at all."""
    method.__hook_default__ = True  # type: ignore[attr-defined]  # a marker on a function
    return method


class Hooks(Generic[C]):
    """A run's ordered tool hooks (``ctx.hooks``).

    ``parent`` is the hooks of the parent run (``ExecutionContext.child``): its guards
    watch this run's calls too (``guard_chain``); its other hooks do not.

    >>> from toolchain import ToolHook
    >>> hooks: Hooks[object] = Hooks()
    >>> remove = hooks.add(ToolHook())
    >>> len(hooks.before), len(hooks.after), len(hooks.observation)  # nothing overridden
    (0, 0, 0)
    """

    def __init__(self, *, parent: Hooks[C] | None = None) -> None:
        self.parent = parent
        self._lock = threading.Lock()
        self.before: tuple[BeforeHook[C], ...] = ()
        """The before-tool-call hooks, in order (replaced, never mutated)."""
        self.after: tuple[AfterHook[C], ...] = ()
        """The after-tool-call hooks, in order (replaced, never mutated)."""
        self.observation: tuple[ObservationHook[C], ...] = ()
        """The observation rewriters, in order (replaced, never mutated)."""
        self.guards: tuple[GuardHook[C], ...] = ()
        """This run's own guards, in order (replaced, never mutated); see ``guard_chain``."""

    def add(self, hook: object) -> Callable[[], None]:
        """Append ``hook``'s overridden methods (a ``ToolHook``); returns a function that
        removes them. A ``TypeError`` says so when ``hook`` overrides none of them."""
        before, after, observation, guard = (_overridden(hook, stage) for stage in _STAGES)
        if before is after is observation is guard is None and not _is_tool_hook(hook):
            raise ToolchainTypeError(
                f"{type(hook).__name__} is not a tool hook: subclass toolchain.ToolHook and "
                "override before_tool_call, after_tool_call, rewrite_observation or "
                "guard_tool_call"
            )
        with self._lock:
            if before is not None:
                self.before = (*self.before, before)
            if after is not None:
                self.after = (*self.after, after)
            if observation is not None:
                self.observation = (*self.observation, observation)
            if guard is not None:
                self.guards = (*self.guards, guard)

        def remove() -> None:
            with self._lock:
                self.before = tuple(h for h in self.before if h != before)
                self.after = tuple(h for h in self.after if h != after)
                self.observation = tuple(h for h in self.observation if h != observation)
                self.guards = tuple(h for h in self.guards if h != guard)

        return remove

    @property
    def guarded(self) -> bool:
        """Whether any guard watches this run's calls (its own or a parent run's)."""
        hooks: Hooks[C] | None = self
        while hooks is not None:
            if hooks.guards:
                return True
            hooks = hooks.parent
        return False

    def guard_chain(self) -> tuple[GuardHook[C], ...]:
        """Every guard that checks this run's calls, in the order they run: this run's
        own first, then its parent's, outwards."""
        chain = self.guards
        hooks = self.parent
        while hooks is not None:
            chain = (*chain, *hooks.guards)
            hooks = hooks.parent
        return chain

    def __bool__(self) -> bool:
        return bool(self.before or self.after or self.observation or self.guarded)


def _overridden(hook: object, stage: str) -> Any:
    """``hook``'s bound method for ``stage``, or None where it keeps the default."""
    method = getattr(type(hook), stage, None)
    if method is None or getattr(method, "__hook_default__", False):
        return None
    return getattr(hook, stage)


def _is_tool_hook(hook: object) -> bool:
    """A hook that overrides nothing is still welcome when it is a ToolHook (a no-op)."""
    return all(hasattr(type(hook), stage) for stage in _STAGES)


RefusalKind = Literal["refused", "invalid_arguments", "unknown_tool"]


class ToolCallRefused(ModelFeedback):
    """Raise from a before-tool-call hook to refuse the call; the message is for the model.

    ``kind`` is the error kind the call fails with: ``refused`` (a policy said no),
    ``invalid_arguments`` when the hook found the arguments unusable (a reference to
    a variable that does not exist, say), or ``unknown_tool`` when the tool cannot be
    called now (discovery has not activated it); that message is shown as it is.

    >>> str(ToolCallRefused("deleting bookings needs a human's approval"))
    "deleting bookings needs a human's approval"
    >>> ToolCallRefused("unknown variable $x", kind="invalid_arguments").kind
    'invalid_arguments'
    """

    def __init__(self, message: str, *, kind: RefusalKind = "refused"):
        super().__init__(message)
        self.kind: RefusalKind = kind


class ToolHook:
    """Override either method (or both). Returning ``None`` keeps what was given.

    ``before_tool_call`` sees the call as the model wrote it (after earlier hooks) and
    may return a replacement (new arguments); ``after_tool_call`` sees a successful
    call's ``ToolResult`` and may return another one.

    >>> from toolchain import ExecutionContext, ToolCall
    >>> class HomeCity(ToolHook):
    ...     def before_tool_call(self, ctx: ExecutionContext, call: ToolCall) -> ToolCall | None:
    ...         if call.args.get("city") == "$home":
    ...             return ToolCall(call.name, {**call.args, "city": "Lisbon"}, call.id)
    ...         return None
    >>> ctx = ExecutionContext()
    >>> remove = ctx.hooks.add(HomeCity())
    """

    @hook_default
    def before_tool_call(
        self, ctx: ExecutionContext, call: ToolCall
    ) -> ToolCall | Awaitable[ToolCall | None] | None:
        """Return a replacement call, ``None`` to keep it, or raise ``ToolCallRefused``."""
        return None

    @hook_default
    def after_tool_call(
        self, ctx: ExecutionContext, call: ToolCall, result: ToolResult[Any]
    ) -> ToolResult[Any] | Awaitable[ToolResult[Any] | None] | None:
        """Return a replacement result, or ``None`` to keep it."""
        return None

    @hook_default
    def rewrite_observation(
        self, ctx: ExecutionContext, call: ToolCall, result: ToolResult[Any], text: str
    ) -> Shown | Awaitable[Shown | None] | None:
        """Return the text the model sees for this successful call (``text`` is the
        output as the chain serialised it, or an earlier hook's rewrite), or ``None``
        to keep it. Return ``(text, media)`` to replace the parts shown beside it too
        (``result.media`` until a hook replaces them; the relay boxes large text parts
        this way). ``raw`` results keep the real output and media either way."""
        return None

    @hook_default
    def guard_tool_call(self, ctx: ExecutionContext, call: ToolCall) -> Awaitable[None] | None:
        """Raise ``ToolCallRefused`` to stop this call; return to let it run.

        Unlike the other methods, a guard sees every call of a tool in the run and in
        its child runs: the chain's calls (after the before hooks, as they will run), a
        composite's sub-calls (``call.name`` the sub-tool's own name, ``call.id``
        ``<id>/<index>``) and the calls a sub-agent makes, with ``ctx`` the context
        the call runs in (a child's, for a sub-agent). It cannot change the call.
        A run's own guards run first, then its parent's, outwards: what the run itself
        allows is settled before an outer policy (an approval) is asked.

        >>> from toolchain import ExecutionContext, ToolCall
        >>> class NoDeletes(ToolHook):
        ...     def guard_tool_call(self, ctx: ExecutionContext, call: ToolCall) -> None:
        ...         if call.name.startswith("delete_"):
        ...             raise ToolCallRefused("deleting is not allowed here")
        >>> run = ExecutionContext()
        >>> remove = run.hooks.add(NoDeletes())
        >>> sub = run.child("cleaner")  # a sub-agent's context
        >>> len(sub.hooks.guard_chain())  # the run's guard watches its calls too
        1
        """
        return None


def refusal_error(call: ToolCall, refused: ToolCallRefused) -> ToolCallError:
    """The error a call refused by a hook or guard fails with (its message for the model)."""
    if refused.kind == "invalid_arguments":
        message = f"invalid arguments for {call.name}: {exception_text(refused)}"
    elif refused.kind == "unknown_tool":
        message = exception_text(refused)
    else:
        message = f"{call.name} was refused: {exception_text(refused)}"
    return ToolCallError(refused.kind, message, refused)


def check_guards(
    ctx: ExecutionContext,
    call: ToolCall,
    guards: tuple[GuardHook[ExecutionContext], ...] | None = None,
) -> ToolCallError | Awaitable[ToolCallError | None] | None:
    """Run every guard of ``ctx`` (its own first, then its parents') on ``call``: the
    error it fails with, or None when all let it run; an awaitable of that only once a
    guard is ``async`` (a chain's stage then awaits it; no coroutine otherwise).
    ``guards``: ``ctx.hooks.guard_chain()`` as the caller just read it (a chain reads
    it once per call, to know whether any guard watches)."""
    if guards is None:
        guards = ctx.hooks.guard_chain()
    return run_stage(_GUARDS, guards, (ctx,), call, None)


async def guard_call(ctx: ExecutionContext, call: ToolCall) -> ToolCallError | None:
    """`check_guards`, awaited: for whoever runs a tool outside a chain (a composite's
    sub-calls), which must call it first."""
    checked = check_guards(ctx, call)
    if checked is None or isinstance(checked, ToolCallError):
        return checked
    return await checked


def _guard_failed(failure: HookFailed, call: ToolCall, extra: None) -> ToolCallError:
    during = "a tool-call guard"
    return hook_error(failure, call, hook=during, during=during, takes="None", refusable=True)


# A guard's return is not used: it lets the call run by returning at all.
_GUARDS: HookStage[ToolCall, None, ToolCallError | None] = HookStage(
    lambda returned, call, extra: call, lambda call, extra: None, _guard_failed
)
