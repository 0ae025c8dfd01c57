"""Approvals: a call that waits for a person, decided in the run or held for later.

A tool whose ``requires_approval`` is ``True``, or a predicate its validated input
makes true, does not run until someone decides. The run's approver (``approve=`` of an
agent or a chain: an `Approver`) is asked with an `ApprovalRequest` and answers
``Approval.granted()``, ``Approval.denied(reason)``, or ``None``: nobody can decide now.
Then the call is *held*: its action's other calls finish, the action's result lists it
in ``pending`` (and ``raw.errors`` as a ``held`` error), and resuming
(``ToolChainBase.resume``, ``agent.resume``) runs it with the arguments that were
reviewed, or answers it with the denial's reason.

What this module holds: the public types (the data ones, `ApprovalRequest` and
`Approval`, live with the other data a chain hands back, in ``toolchain._result``), the
check a call goes through (`check`, on
the validated input, after the guards), the seal of held calls (`Seal`: an HMAC under a
key of this process, so a held call edited or forged between the pause and the resume
approves nothing), and `refusals`, which says of each decision given to a resume
whether it may be applied, and why not. The chain's side of holding and resuming an
action is ``toolchain.chain._resume``; the agents' is ``agents._resume``.

>>> from toolchain import ExecutionContext, JSONToolChain, tool
>>> from formats import XMLFormat
>>> @tool(requires_approval=True)
... def delete_account(user: str) -> str:
...     '''Delete a user's account.'''
...     return f"deleted {user}"
>>> chain = JSONToolChain().register_tool(delete_account)
>>> ctx, fmt = ExecutionContext(), XMLFormat()
>>> held = chain.execute_sync(ctx, '{"tool": "delete_account", "args": {"user": "ana"}}', fmt)
>>> [(request.tool, dict(request.args)) for request in held.pending]
[('delete_account', {'user': 'ana'})]
>>> done = chain.resume_sync(ctx, held, {held.pending[0].call_id: Approval.granted()}, fmt)
>>> done.raw.output(0, str)
'deleted ana'
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import inspect
import secrets
from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple, cast

import msgspec

from toolchain._context import ExecutionContext, StateKey
from toolchain._elicitation import ElicitationRequest
from toolchain._errors import ToolchainError, ToolchainValueError, describe_exception
from toolchain._events import ApprovalChecked, DecidedBy, Outcome
from toolchain._observations import to_builtins
from toolchain._redact import logger
from toolchain._result import (
    Approval,
    ApprovalRequest,
    Risk,
    ToolCall,
    ToolCallError,
    ToolResult,
)

if TYPE_CHECKING:
    from toolchain._tool import Tool

__all__ = [
    "PROCESS_KEY",
    "Approval",
    "ApprovalError",
    "ApprovalRequest",
    "Approver",
    "CallHeld",
    "Enclosing",
    "Gated",
    "Granted",
    "Hold",
    "Risk",
    "Seal",
    "approver_of",
    "args_digest",
    "calls_nest",
    "check",
    "decide",
    "denial",
    "enclosing",
    "gate_by_name",
    "gating",
    "held_error",
    "held_in",
    "made_in",
    "rebind",
    "refusals",
    "set_approver",
    "told",
    "verify",
    "via_of",
    "waits",
]

_log = logger("toolchain")

Approver = Callable[
    [ExecutionContext, ApprovalRequest], Awaitable[Approval | None] | Approval | None
]
"""Decides a call, sync or async: ``approve(ctx, request)``; ``None``: nobody can decide
now (the call is held). It gets the context of the run the call is made in, as every
hook does: its state (the user a run serves), its name, its cancellation (a wait for a
person should end when the run is cancelled), and the durable seam of the run."""


class ApprovalError(ToolchainValueError):
    """Decisions given to a resume that it refused: nothing was approved, nothing ran.

    ``refused`` maps each refused decision's call id (``"*"`` for the paused state as a
    whole) to why.

    >>> str(ApprovalError({"call_9": "no call with this id is held (held: call_1)"}))
    'nothing was approved: call_9: no call with this id is held (held: call_1)'
    """

    def __init__(self, refused: Mapping[str, str]) -> None:
        self.refused: Mapping[str, str] = dict(refused)
        lines = [f"{key}: {why}" for key, why in self.refused.items()]
        super().__init__("nothing was approved: " + "; ".join(lines))


# -- the seal ---------------------------------------------------------------------------

PROCESS_KEY = secrets.token_bytes(32)
"""Seals held calls when no other key is given: valid in this process only."""


class Seal:
    """HMACs of plain data under ``key``: what makes a held call (or a saved decision)
    something only this process (or one with the same key) could have written.

    >>> seal = Seal(b"k" * 32)
    >>> mac = seal.sign(["call_1", {"page": 1}])
    >>> seal.signed(["call_1", {"page": 1}], mac), seal.signed(["call_1", {"page": 2}], mac)
    (True, False)
    """

    __slots__ = ("_key",)

    def __init__(self, key: bytes) -> None:
        self._key = key

    def sign(self, data: object) -> str:
        """The HMAC (SHA-256, hex) of ``data``, written as deterministic JSON."""
        body = msgspec.json.encode(data, order="deterministic")
        return hmac.new(self._key, body, hashlib.sha256).hexdigest()

    def signed(self, data: object, mac: str) -> bool:
        """Whether ``mac`` is this key's HMAC of ``data`` (in constant time)."""
        return bool(mac) and hmac.compare_digest(mac, self.sign(data))

    def hold(self, request: ApprovalRequest, nonce: str) -> ApprovalRequest:
        """``request`` sealed as held in the pause ``nonce``: ``seal`` is ``nonce.mac``."""
        mac = self.sign([nonce, *_sealed_fields(request)])
        return _replace_seal(request, f"{nonce}.{mac}")

    def nonce_of(self, request: ApprovalRequest) -> str | None:
        """The pause a held ``request`` was sealed in, or None when its seal does not
        match (it was edited, or forged, or sealed with another key)."""
        nonce, _, mac = request.seal.partition(".")
        if not nonce or not self.signed([nonce, *_sealed_fields(request)], mac):
            return None
        return nonce


def _sealed_fields(request: ApprovalRequest) -> list[object]:
    return [
        request.run_id,
        request.call_id,
        request.tool,
        request.digest,
        list(request.via),
        request.risk,
    ]


def _replace_seal(request: ApprovalRequest, seal: str) -> ApprovalRequest:
    # replace, not a new ApprovalRequest: an ElicitationRequest stays one
    return dataclasses.replace(request, seal=seal)


def args_digest(args: object) -> str:
    """SHA-256 (hex) of plain arguments written as deterministic JSON: what a decision
    is bound to.

    >>> args_digest({"b": 1, "a": 2}) == args_digest({"a": 2, "b": 1})
    True
    """
    return hashlib.sha256(msgspec.json.encode(args, order="deterministic")).hexdigest()


# -- who decides --------------------------------------------------------------------------

_APPROVER = StateKey[Approver | None]("toolchain.approvals.approver")


def set_approver(ctx: ExecutionContext, approve: Approver | None) -> None:
    """``approve`` decides the calls of ``ctx``'s run (an agent's ``approve=``) and of its
    child runs (sub-agents) that have none of their own; ``None`` leaves that to the
    runs it is nested in, or the chain's own ``approve``."""
    ctx.state.set(_APPROVER, approve)


def approver_of(ctx: ExecutionContext, default: Approver | None) -> Approver | None:
    """The approver of ``ctx``'s run: its own, else the nearest run it is nested in that
    has one, else ``default`` (the chain's)."""
    current: ExecutionContext | None = ctx
    while current is not None:
        found = current.state.get(_APPROVER)
        if found is not None:
            return found
        current = current.parent
    return default


def via_of(ctx: ExecutionContext) -> tuple[str, ...]:
    """The child runs (sub-agents) ``ctx`` is nested in, outermost first."""
    names: list[str] = []
    while ctx.parent is not None:
        names.append(ctx.name.removeprefix(ctx.parent.name + "/"))
        ctx = ctx.parent
    return tuple(reversed(names))


# -- the call a nested call is made in ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Enclosing:
    """The chain call a tool runs in, for the calls it makes itself (a composite's
    sub-calls): the chain's default approver, and the call's clock, stopped while one of
    them waits for a person (its time limit counts from after the decision)."""

    approve: Approver | None
    stop_clock: Callable[[], None]
    start_clock: Callable[[], None]


enclosing: ContextVar[Enclosing | None] = ContextVar("toolchain.approvals.enclosing", default=None)

made_in: ContextVar[tuple[int, str] | None] = ContextVar(
    "toolchain.approvals.made_in", default=None
)
"""The tool the calls being made now come from, when a tool makes them through the
chain itself (a code-mode program: ``"run_python"``), with the depth of the run it runs
in (``len(via_of(ctx))``): their requests' ``via`` says so, in its place among the
sub-agents (a program's call of a sub-agent, or a program in a sub-agent), to an
approver in the run as to a person reading ``pending``."""


def _path(ctx: ExecutionContext) -> tuple[str, ...]:
    """The sub-agents ``ctx`` is nested in and the tool making its calls, outermost first."""
    names = via_of(ctx)
    inside = made_in.get()
    if inside is None or len(names) < inside[0]:
        return names
    depth, tool = inside
    return (*names[:depth], tool, *names[depth:])


"""Set while a chain runs a tool that makes calls of its own (``nesting``)."""

nesting = False
"""Whether a tool that makes calls of its own exists (a ``CompositeTool``): until then a
chain sets no `enclosing` call, and pays one module-attribute check per call."""


def calls_nest() -> None:
    """Say that a tool making calls of its own exists (a composite, a sub-agent, an MCP
    tool whose server asks questions): chains set `enclosing` from now on."""
    global nesting
    nesting = True


# -- tools an extension gates by name ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Gated:
    """Tools that need approval in a run by an extension's word, not their own
    ``requires_approval`` (``ToolSearch``: its index tools that ``requires_confirmation``):
    ``risk_of(name)`` is the risk of a gated tool's calls, or ``None`` for a tool it
    does not gate; ``approve``, when given, decides those calls before the run's own
    approver. The user's tool objects stay as they were given: a tool is gated in the
    runs of the extension that gates it, and in their child runs (a sub-agent's, a
    composite's sub-calls), however deep the call is made."""

    risk_of: Callable[[str], Risk | None]
    approve: Approver | None = None


_GATED = StateKey[tuple[Gated, ...]]("toolchain.approvals.gated")

gating = False
"""Whether any run has gated tools by name (`gate_by_name`): until then a chain pays one
module-attribute check per call for it."""


def gate_by_name(ctx: ExecutionContext, gated: Gated) -> None:
    """Gate ``gated``'s tools in ``ctx``'s run and the runs nested in it (an extension's
    ``install``)."""
    global gating
    gating = True
    ctx.state.set(_GATED, (*(ctx.state.get(_GATED) or ()), gated))


def _gated(ctx: ExecutionContext, name: str) -> tuple[Gated, Risk] | None:
    """The outermost gate on ``name`` in ``ctx``'s run and the runs it is nested in, with
    the risk it gives: the person the outermost run answers to decides."""
    found: tuple[Gated, Risk] | None = None
    current: ExecutionContext | None = ctx
    while current is not None:
        for gated in current.state.get(_GATED) or ():
            risk = gated.risk_of(name)
            if risk is not None:
                found = (gated, risk)
                break
        current = current.parent
    return found


def waits(ctx: ExecutionContext, tool: Tool[Any, Any]) -> bool:
    """Whether a call of ``tool`` in ``ctx``'s run may wait for a decision: its own
    ``requires_approval``, or an extension gates it (`gate_by_name`)."""
    return tool.requires_approval is not False or (gating and _gated(ctx, tool.name) is not None)


# -- the check ----------------------------------------------------------------------------


class Hold(NamedTuple):
    """A call nobody could decide now: its request, and the input that runs if approved."""

    request: ApprovalRequest
    value: object


class Granted(NamedTuple):
    """A call that may run, with its validated input (not validated again)."""

    value: object


Checked = Granted | Hold | ToolCallError | None
"""What `check` makes of a call: it runs (with this input), it is held, it fails with
this error (denied, or the approver failed), or ``None``: its arguments do not
validate, and the run reports that as it does for any call."""


async def check(
    ctx: ExecutionContext,
    tool: Tool[Any, Any],
    call: ToolCall,
    *,
    default: Approver | None,
    via: tuple[str, ...] = (),
    stop_clock: Callable[[], None] | None = None,
    start_clock: Callable[[], None] | None = None,
) -> Checked:
    """Whether ``call`` of ``tool`` may run: on its validated input, its tool's
    ``requires_approval`` (or an extension's gate on it, `gate_by_name`), then the
    gate's approver, the run's, or ``default``. Told as `ApprovalChecked`.

    ``stop_clock`` / ``start_clock`` stop the call's time limit while a person decides
    and start it afresh after.
    """
    try:
        value = tool.codec.validate(call.args)
    except Exception:  # the arguments do not validate: the call fails as any other would
        return None
    gate = _gated(ctx, tool.name) if gating else None
    if gate is None and not _requires(tool, value):
        return Granted(value)
    try:
        plain = to_builtins(value)
    except Exception:  # an input type of its own: its arguments as the model wrote them
        plain = to_builtins(dict(call.args))
    args: dict[str, object] = (
        cast("dict[str, object]", plain) if isinstance(plain, dict) else {"input": plain}
    )
    request = ApprovalRequest(
        call.id,
        tool.name,
        args,
        risk=gate[1] if gate is not None else "safe",
        via=(*_path(ctx), *via),
        digest=args_digest(args),
        run_id=ctx.run_id,
    )
    decided = await decide(
        ctx,
        request,
        default=default,
        first=gate[0].approve if gate is not None else None,
        stop_clock=stop_clock,
        start_clock=start_clock,
    )
    if decided is None:
        told(ctx, call.id, request, None)
        return Hold(request, value)
    if isinstance(decided, ToolCallError):
        return decided
    told(ctx, call.id, request, decided, "approver")
    return Granted(value) if decided.approved else denial(tool.name, decided)


def told(
    ctx: ExecutionContext,
    call_id: str,
    request: ApprovalRequest,
    decision: Approval | None,
    decided_by: DecidedBy = "",
) -> None:
    """Tell the run's observers what became of a call that needed approval: held when
    ``decision`` is None, else approved or denied by ``decided_by``."""
    if not ctx.events.has_subscribers(ApprovalChecked):
        return
    if decision is None:
        ctx.events.emit(ApprovalChecked(ctx, call_id, request, "held"))
        return
    outcome: Outcome = "approved" if decision.approved else "denied"
    ctx.events.emit(ApprovalChecked(ctx, call_id, request, outcome, decided_by, decision.reason))


async def decide(
    ctx: ExecutionContext,
    request: ApprovalRequest,
    *,
    default: Approver | None,
    first: Approver | None = None,
    stop_clock: Callable[[], None] | None = None,
    start_clock: Callable[[], None] | None = None,
) -> Approval | ToolCallError | None:
    """What ``first`` (a gate's own approver), else the run's approver (or ``default``),
    decides on ``request``: its decision; ``None``: nobody can decide now; or the error
    the call fails with (the approver raised, or answered something that is not a
    decision for this call). Its ``tool`` names the call in messages; the clock stops
    while the approver decides."""
    name = request.tool
    approve = first if first is not None else approver_of(ctx, default)
    if approve is None:
        return None
    if stop_clock is not None:
        stop_clock()
    try:
        answer = approve(ctx, request)
        # User code: what it returns is checked below, whatever its annotation says.
        decision = cast(object, await answer if inspect.isawaitable(answer) else answer)
    except Exception as error:
        _log.warning("the approval callback failed on %s", name, exc_info=error)
        message = (
            f"{name} needs approval, and asking for it failed "
            f"({describe_exception(error)}); do not retry it now"
        )
        return ToolCallError("refused", message[:1000], error)
    finally:
        if start_clock is not None:
            start_clock()
    if decision is None:
        return None
    if not isinstance(decision, Approval):
        _log.error(
            "the approval callback returned %s for %s, not an Approval or None: the call is "
            "refused",
            type(decision).__name__,
            name,
        )
        message = f"{name} was not run: its approval could not be read"
        return ToolCallError("refused", message)
    why = _binding(decision, request, request.call_id)
    if why is not None:
        _log.error("the approval callback's decision for %s was refused: %s", name, why)
        return ToolCallError("refused", f"{name} was not run: its approval {why}")
    return decision


def _requires(tool: Tool[Any, Any], value: object) -> bool:
    """Whether this input of ``tool`` needs a decision (a predicate that fails: yes)."""
    gate = tool.requires_approval
    if gate is True:
        return True
    if gate is False or gate is None:
        return False
    try:
        return bool(gate(value))
    except Exception as error:  # fail closed: a broken predicate never lets a call through
        _log.warning(
            "the requires_approval predicate of %s raised; the call waits for approval",
            tool.name,
            exc_info=error,
        )
        return True


def denial(name: str, decision: Approval) -> ToolCallError:
    """The error a denied call fails with; its reason is what the model reads."""
    why = f": {decision.reason}" if decision.reason else ""
    return ToolCallError("refused", f"{name} was not approved{why}")


Settle = Callable[
    [Mapping[str, Approval]],
    Awaitable[tuple[ToolResult[object] | None, ToolCallError | None]],
]
"""How a tool whose own call was held makes its result once calls it waits on are
decided: it gets the decisions (by call id) of those of its ``requests`` that were
decided. Its error may be a ``held`` one again (`held_error`): calls still wait (a
sub-agent that paused again), and the tool's call stays held with them."""


class CallHeld(ToolchainError):
    """A call held for a person's decision: what a held call's error carries.

    A tool that makes calls of its own raises it when any of them is held (a composite
    tool's sub-call, a sub-agent's held calls), with ``settle``: how the tool's result
    is made once they are decided; its own call is then held in the action.
    ``requests``: every call it waits on (``request``, the first, for one). The chain
    fills in the rest: ``call`` (the action's call that is held), and for a call held
    itself, its ``tool`` and validated input ``value``, which run as they are once
    approved.
    """

    def __init__(
        self,
        request: ApprovalRequest,
        *,
        settle: Settle | None = None,
        call: ToolCall | None = None,
        tool: Tool[Any, Any] | None = None,
        value: object = None,
        more: tuple[ApprovalRequest, ...] = (),
    ) -> None:
        super().__init__(f"{request.tool} is waiting for a person's approval")
        self.request = request
        self.requests: tuple[ApprovalRequest, ...] = (request, *more)
        self.settle = settle
        self.call = call
        self.tool = tool
        self.value = value


def held_error(held: CallHeld) -> ToolCallError:
    """The ``held`` error a held call stands under in its action's result until decided."""
    waiting: list[tuple[str, str]] = []
    for request in held.requests:
        where = f" (through {' > '.join(request.via)})" if request.via else ""
        waiting.append((f"{request.tool}{where}", request.call_id))
    # A server's question (an ElicitationRequest) waits for an answer, not an approval.
    asked = all(isinstance(request, ElicitationRequest) for request in held.requests)
    wanted = "answer" if asked else "approval"
    if len(waiting) == 1:
        [(what, call_id)] = waiting
        message = f"{what} is waiting for a person's {wanted} (call {call_id})"
    else:
        listed = ", ".join(f"{what} (call {call_id})" for what, call_id in waiting)
        message = f"{listed} are waiting for a person's {wanted}"
    return ToolCallError("held", message, held)


def held_in(error: ToolCallError | None) -> CallHeld | None:
    """The held call ``error`` stands for, if it is a ``held`` error."""
    if error is None or error.kind != "held" or not isinstance(error.exception, CallHeld):
        return None
    return error.exception


# -- decisions given to a resume ---------------------------------------------------------


def refusals(
    held: Mapping[str, ApprovalRequest], decisions: object
) -> tuple[dict[str, Approval], dict[str, str]]:
    """The decisions of ``decisions`` that apply to the held calls (by call id), and why
    each other one does not. ``held``: the held calls, checked against their seals.

    A decision applies when its key is a held call's id, it is an `Approval`, and,
    bound (`ApprovalRequest.approve`), it was made for that call of that run with those
    arguments.
    """
    if not isinstance(decisions, Mapping):
        return {}, {"*": f"decisions must map call ids to Approval, not {type(decisions).__name__}"}
    # Whatever the caller passed: each key and value is checked below.
    given = cast("Mapping[object, object]", decisions)
    taken: dict[str, Approval] = {}
    refused: dict[str, str] = {}
    if not given:
        refused["*"] = "no decision was given (held: " + ", ".join(held) + ")"
    for key, decision in given.items():
        shown = str(key)[:80]
        request = held.get(key) if isinstance(key, str) else None
        if request is None or not isinstance(key, str):
            listing = ", ".join(held) or "none"
            refused[shown] = f"no call with this id is held (held: {listing})"
            continue
        if not isinstance(decision, Approval):
            refused[shown] = (
                f"not an Approval but a {type(decision).__name__}: pass Approval.granted() "
                "or Approval.denied(reason)"
            )
            continue
        approved: object = decision.approved
        if type(approved) is not bool:  # an Approval changed after it was made
            refused[shown] = "its approved field is not True or False"
            continue
        why = _binding(decision, request, key)
        if why is not None:
            refused[shown] = why
            continue
        taken[key] = decision
    return taken, refused


def rebind(decision: Approval, request: ApprovalRequest) -> Approval:
    """``decision``, checked for the call that stands for ``request`` (a sub-agent's
    held call, as the parent lists it), bound to ``request`` itself: what the run that
    held it checks when it resumes.

    >>> inner = ApprovalRequest("call_1", "t", {}, digest="d1", run_id="child")
    >>> rebind(Approval.denied("no"), inner)
    Approval(approved=False, reason='no', call_id='call_1', run_id='child', digest='d1')
    """
    return dataclasses.replace(
        decision, call_id=request.call_id, run_id=request.run_id, digest=request.digest
    )


def _binding(decision: Approval, request: ApprovalRequest, key: str) -> str | None:
    """Why a bound ``decision`` does not apply to ``request`` (given under ``key``)."""
    if decision.call_id and decision.call_id != key:
        return f"was made for the call {decision.call_id[:80]}, not this one"
    if decision.run_id and decision.run_id != request.run_id:
        return "was made for a call of another run"
    if decision.digest and decision.digest != request.digest:
        return "was made for other arguments than the ones held"
    return None


def verify(seal: Seal, pending: object) -> tuple[set[str], dict[str, ApprovalRequest]]:
    """The pauses ``pending`` (held calls as a result lists them) was sealed in (one per
    action), and the held calls by id; `ApprovalError` when any of them is not as it
    was sealed."""
    if not isinstance(pending, tuple) or not pending:
        raise ApprovalError({"*": "no call is waiting for a decision in this result"})
    items = cast("tuple[object, ...]", pending)
    nonces: set[str] = set()
    held: dict[str, ApprovalRequest] = {}
    refused: dict[str, str] = {}
    for request in items:
        if not isinstance(request, ApprovalRequest):
            refused["*"] = f"the held calls are not ApprovalRequests ({type(request).__name__})"
            continue
        nonce = seal.nonce_of(request)
        if nonce is None or args_digest(_plain(request.args)) != request.digest:
            refused[request.call_id[:80]] = (
                "the held call was edited or forged: its seal does not match what was held"
            )
            continue
        if request.call_id in held:
            refused[request.call_id[:80]] = "two held calls have this id"
            continue
        nonces.add(nonce)
        held[request.call_id] = request
    if refused:
        raise ApprovalError(refused)
    return nonces, held


def _plain(args: Mapping[str, object]) -> object:
    try:
        return to_builtins(dict(args))
    except Exception:  # not plain data: it cannot be what was sealed
        return None
