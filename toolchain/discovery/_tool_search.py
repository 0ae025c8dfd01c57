"""``ToolSearch``: the model starts with ``tool_search`` and finds the tools it needs.

The design is the seed's "dynamic tool injection V2": instead of every tool's
definition in every request, the model gets one discovery tool (and any tools kept
always active). A search returns the tools that fit, a usage hint each, the workflow
guidance of their categories and a note to search again; the tools it returns can be
called from then on, for the rest of the run and of the conversation.

Activation keeps the provider's prompt cache: in text mode the system prompt's tool
listing never changes (a found tool's parameter schema arrives in the search result);
in native mode a found tool's spec is appended after those already sent. A call to a
tool that has not been found is answered "not active — search for it", with a query
that finds it. Tools marked ``requires_confirmation`` wait for the approval callback.

Both checks are a guard (``ToolHook.guard_tool_call``), so they hold however deep a
call is made: a composite's sub-call, a sub-agent's call (its context is a child of
this run's), a composite inside a sub-agent. A held call pauses every run from the
one that made it up to the outermost, and waits in the outermost run's
``extension_state``, whose ``ToolSearch.pending`` lists it. Held calls and decisions
are sealed with a secret key (``approval_key``), so an ``extension_state`` edited
outside ``ToolSearch.decide`` approves nothing.

>>> from formats import XMLFormat
>>> from toolchain import ExecutionContext, JSONToolChain, tool
>>> from toolchain.discovery import ToolIndex, ToolInfo, ToolSearch
>>> @tool
... def create_page(title: str) -> str:
...     '''Create a new page on the site.'''
...     return f"created {title}"
>>> info = ToolInfo("create_page", phrases=("add a page",))
>>> search = ToolSearch(ToolIndex([create_page], [info]), backend=KeywordSearch(), defer=True)
>>> chain = JSONToolChain(extensions=[search])
>>> ctx, fmt = ExecutionContext(), XMLFormat()
>>> early = chain.execute_sync(ctx, '{"tool": "create_page", "args": {"title": "About"}}', fmt)
>>> print(early.raw.errors[0].message)
create_page is not active: search for it first, e.g. tool_search(query="add a page")
>>> found = chain.execute_sync(ctx, '{"tool": "tool_search", "args": {"query": "add a page"}}', fmt)
>>> again = chain.execute_sync(ctx, '{"tool": "create_page", "args": {"title": "About"}}', fmt)
>>> again.raw.output(0, str)
'created About'
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import inspect
import logging
import secrets
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar, cast

import msgspec
from pydantic import BaseModel, Field

from toolchain._context import ExecutionContext, StateKey
from toolchain._extension import Extension, keep_with_conversation
from toolchain._hooks import ToolCallRefused, ToolHook
from toolchain._result import ToolCall, ToolResult
from toolchain._tool import Tool
from toolchain.discovery._approval import Approval, ApprovalRequest, Approver
from toolchain.discovery._documents import Hit, SearchBackend, SearchOutcome, ToolDocument
from toolchain.discovery._index import ToolIndex

__all__ = ["KeywordSearch", "ToolSearch"]

_log = logging.getLogger("toolchain")

AnyTool = Tool[Any, Any]
Protocol = Literal["text", "native"]

GUIDE = """\
Only some tools are listed. To find others, call tool_search with what you want to do
("find an image", "publish a post"): it returns the tools that fit, with guidance, and
they can be called from then on. Search again whenever you need another capability.
If you can answer without tools, answer directly."""

FOUND_NOTE = "These tools can be called now. Search again if you need others."

_PROCESS_KEY = secrets.token_bytes(32)
"""Seals held calls when no ``approval_key`` is given: valid in this process only."""


class SearchInput(BaseModel):
    """Arguments of ``tool_search``."""

    query: str = Field(description="What you want to do, in a few words.")
    limit: int | None = Field(
        default=None, ge=1, le=20, description="How many tools to return at most."
    )


@dataclass(slots=True)
class _Discovery:
    """What discovery knows in one run (``ctx.state``); saved for the conversation."""

    active: dict[str, None] = field(default_factory=lambda: {})
    """Tools the searches found, in the order they were first found."""
    used: dict[str, None] = field(default_factory=lambda: {})
    protocol: Protocol = "text"


@dataclass(slots=True)
class _Approvals:
    """Held calls and decisions, kept in the outermost run's state (``_approvals``):
    a sub-agent's held call belongs to the conversation a person continues."""

    pending: dict[str, _SavedRequest] = field(default_factory=lambda: {})
    """call id → a call held until a person decides (sealed)."""
    decisions: list[_SavedDecision] = field(default_factory=lambda: [])
    """Decisions made between runs (sealed), applied to the next call with the same
    arguments."""


_STATE = StateKey[_Discovery]("toolchain.discovery")
_APPROVALS = StateKey[_Approvals]("toolchain.discovery.approvals")


def _state(ctx: ExecutionContext) -> _Discovery:
    return ctx.state.setdefault(_STATE, _Discovery)


def _outermost(ctx: ExecutionContext) -> ExecutionContext:
    while ctx.parent is not None:
        ctx = ctx.parent
    return ctx


def _approvals(ctx: ExecutionContext) -> _Approvals:
    return _outermost(ctx).state.setdefault(_APPROVALS, _Approvals)


def found_tools(ctx: ExecutionContext) -> tuple[str, ...]:
    """The tools searches activated in this run (empty without discovery)."""
    state = ctx.state.get(_STATE)
    return () if state is None else tuple(state.active)


class ToolSearch(Extension):
    """Tool discovery (see the module text).

    - ``index``: the tools to discover (a ``ToolIndex``, or tools to index as they are).
    - ``backend``: how queries find tools (default: ``BM25Search``; pass a
      ``HybridSearch`` to add embeddings, which load a model at startup).
    - ``always_active``: index tools the model can call from the start.
    - ``limit``: tools a search returns unless the model asks for fewer or more.
    - ``defer``: ``True`` hides the index's tools until found; ``False`` shows them all
      (``tool_search`` is then not offered); ``"auto"`` defers only when their
      definitions exceed ``budget_tokens`` o200k tokens.
    - ``approve``: decides calls to tools that require confirmation (None: every such
      call pauses the run for a decision).
    - ``approval_key``: the secret that seals held calls and decisions in
      ``extension_state`` (default: a random key of this process). Give every process
      that continues a conversation the same key; a held call or decision whose seal
      does not match is ignored (and logged), so an edited ``extension_state``
      approves nothing.
    """

    name = "tool_search"

    def __init__(
        self,
        index: ToolIndex | Iterable[AnyTool],
        *,
        backend: SearchBackend | None = None,
        always_active: Iterable[str] = (),
        limit: int = 5,
        defer: bool | Literal["auto"] = "auto",
        budget_tokens: int = 2_000,
        approve: Approver | None = None,
        approval_key: bytes | str | None = None,
    ) -> None:
        self.index = index if isinstance(index, ToolIndex) else ToolIndex(index)
        self.always_active = tuple(always_active)
        problems = self.index.problems()
        problems += [
            f"always_active names {name!r}, which is not in the index"
            for name in self.always_active
            if name not in self.index.tools
        ]
        if limit < 1:
            problems.append(f"limit must be at least 1, not {limit}")
        if problems:
            from toolchain.discovery._index import ToolIndexError

            raise ToolIndexError(problems)
        self.limit = limit
        self.approve = approve
        if isinstance(approval_key, str):
            approval_key = approval_key.encode()
        self._key = approval_key or _PROCESS_KEY
        self.backend: SearchBackend = backend if backend is not None else _default_backend()
        self.backend.index(self.index.documents())
        self.deferred = frozenset(self.index.tools) - frozenset(self.always_active)
        self.definition_tokens = _definition_tokens(
            self.index.tools[name] for name in sorted(self.deferred)
        )
        self.defers = defer is True or (defer == "auto" and self.definition_tokens > budget_tokens)
        self._tool = _SearchTool(self)

    # -- Extension -------------------------------------------------------------------

    def tools(self) -> Sequence[AnyTool]:
        found = (self._tool,) if self.defers else ()
        return (*found, *self.index.tools.values())

    def install(self, ctx: ExecutionContext) -> None:
        _state(ctx)
        ctx.hooks.add(_Gate(self, ctx, self._key))
        # Installed in a sub-agent's run: held calls are the conversation's, and the
        # outermost run must save them even when it has no ToolSearch of its own.
        keep_with_conversation(ctx, self)

    def instructions(self) -> str:
        return GUIDE if self.defers else ""

    def prompt_section(self, ctx: ExecutionContext) -> str:
        """Decisions a person made on held calls since the run that held them."""
        lines = [
            f"- {d.tool} {_args_text(d.args)}"
            + (f" (through {' > '.join(d.via)})" if d.via else "")
            + (": approved; call it again to run it" if d.approved else ": denied")
            + (f" ({d.reason})" if d.reason else "")
            for d in _approvals(ctx).decisions
        ]
        return "Approval decisions:\n" + "\n".join(lines) if lines else ""

    def before_step(self, ctx: ExecutionContext, request: Any) -> Any:
        """The step shows ``tool_search``, the always-active tools, the chain's other
        tools and, in native mode, the tools found so far, appended in the order found.

        ``request`` is an ``agents.steps.StepRequest`` (typed loosely here: toolchain
        does not import agents)."""
        state = _state(ctx)
        state.protocol = cast(Protocol, getattr(request, "protocol", "text"))
        if not self.defers:
            return None
        tools: tuple[str, ...] = request.tools
        shown = [name for name in tools if name not in self.deferred]
        if state.protocol == "native":
            offered = set(tools)
            shown += [name for name in state.active if name in offered]
        return dataclasses.replace(request, described=tuple(shown))

    def save_state(self, ctx: ExecutionContext) -> object | None:
        state, approvals = _state(ctx), _approvals(ctx)
        return {
            "active": list(state.active),
            "used": list(state.used),
            "pending": [msgspec.to_builtins(held) for held in approvals.pending.values()],
            # A denial has been told during this run; an approval waits for its call.
            "decisions": [msgspec.to_builtins(d) for d in approvals.decisions if d.approved],
        }

    def load_state(self, ctx: ExecutionContext, state: object) -> None:
        """Take up a saved state; held calls and decisions whose seal does not match
        (written by hand, or sealed with another ``approval_key``) are left out."""
        saved = msgspec.convert(state, _Saved)
        current, approvals = _state(ctx), _approvals(ctx)
        current.active.update(dict.fromkeys(n for n in saved.active if n in self.index.tools))
        current.used.update(dict.fromkeys(saved.used))
        for held in self._verified(saved.pending, "held call"):
            approvals.pending[held.call_id] = held
        known = {d.seal for d in approvals.decisions}
        approvals.decisions += [
            d for d in self._verified(saved.decisions, "decision") if d.seal not in known
        ]

    def needs_approval(self, name: str) -> bool:
        """Whether calls of the index tool ``name`` wait for approval."""
        return name in self.index.tools and self.index.info_of(name).requires_confirmation

    # -- the conversation's side -----------------------------------------------------

    def active(self, ctx: ExecutionContext) -> tuple[str, ...]:
        """The tools searches have activated in this run (and its conversation)."""
        return tuple(_state(ctx).active)

    def used(self, ctx: ExecutionContext) -> tuple[str, ...]:
        """The index tools called successfully in this run (and its conversation)."""
        return tuple(_state(ctx).used)

    def pending(self, extension_state: Mapping[str, object]) -> tuple[ApprovalRequest, ...]:
        """The calls a paused run holds for a decision (from ``result.extension_state``),
        however deep they were made: a sub-agent's held call is listed in the outermost
        run's state. Entries whose seal does not match are left out (and logged)."""
        saved = msgspec.convert(extension_state.get(self.name, {}), _Saved)
        return tuple(_request_of(held) for held in self._verified(saved.pending, "held call"))

    def decide(
        self, extension_state: Mapping[str, object], call_id: str, decision: Approval
    ) -> dict[str, object]:
        """``extension_state`` with a held call decided: pass it to the next run.

        The model is told the decision; an approved call runs once, when the model
        makes it again (same tool, same arguments; through the same sub-agent or
        composite), a denied one is answered with the reason. Raises ``KeyError`` when
        no call ``call_id`` is held, and ``ValueError`` when the held call's seal does
        not match (the state was edited, or sealed with another ``approval_key``).
        """
        saved = msgspec.convert(extension_state.get(self.name, {}), _Saved)
        held = [data for data in saved.pending if data.call_id == call_id]
        if not held:
            raise KeyError(f"no call {call_id!r} is waiting for approval")
        if not self._sealed_by_us(held[0]):
            raise ValueError(
                f"the held call {call_id!r} does not carry this ToolSearch's seal: the "
                "state was edited, or held by a process with another approval_key "
                "(give every process the same ToolSearch(approval_key=...))"
            )
        pending = [data for data in saved.pending if data.call_id != call_id]
        request = held[0]
        decided = _SavedDecision(
            call_id=request.call_id,
            tool=request.tool,
            args=request.args,
            risk=request.risk,
            via=request.via,
            nonce=request.nonce,
            approved=decision.approved,
            reason=decision.reason,
        )
        updated = msgspec.structs.replace(
            saved, pending=pending, decisions=[*saved.decisions, _seal(self._key, decided)]
        )
        return {**extension_state, self.name: msgspec.to_builtins(updated)}

    # -- seals -------------------------------------------------------------------------

    def _sealed_by_us(self, entry: _SavedRequest) -> bool:
        return bool(entry.seal) and hmac.compare_digest(entry.seal, _mac(self._key, entry))

    def _verified(self, entries: Sequence[_Sealed], what: str) -> list[_Sealed]:
        """The entries whose seal matches; the others are logged and left out."""
        kept: list[_Sealed] = []
        for entry in entries:
            if self._sealed_by_us(entry):
                kept.append(entry)
            else:
                _log.warning(
                    "ignoring a %s for %s (call %r) that this ToolSearch did not seal: "
                    "the state was edited, or sealed with another approval_key",
                    what,
                    _shortened(entry.tool, 80),
                    _shortened(entry.call_id, 80),
                )
        return kept

    # -- searching -------------------------------------------------------------------

    async def search(self, ctx: ExecutionContext, query: str, limit: int) -> dict[str, object]:
        """Run one search for the model, activate what it found, and say what it was."""
        try:
            outcome = await self.backend.search(query, limit)
        except Exception as error:  # a broken backend: the model can still try again
            _log.warning("tool search failed for %r", _shortened(query), exc_info=True)
            return {"found": [], "note": f"the search failed ({type(error).__name__}); retry"}
        names = [name for name in outcome.names if name in self.index.tools][:limit]
        if outcome.note:
            _log.info("tool search %r: %s", _shortened(query), outcome.note)
        if not names:
            return {
                "found": [],
                "note": f"No tool matches {_shortened(query)!r}. Describe what you want to "
                "do in other words, or answer without tools.",
            }
        state = _state(ctx)
        state.active.update(dict.fromkeys(n for n in names if n in self.deferred))
        found = [self._describe(name, state.protocol) for name in names]
        result: dict[str, object] = {"found": found}
        categories = [self.index.info_of(name).category for name in names]
        workflow = self.index.workflow(categories)
        if workflow:
            result["workflow"] = workflow
        result["note"] = FOUND_NOTE
        return result

    def _describe(self, name: str, protocol: Protocol) -> dict[str, object]:
        tool, info = self.index.tools[name], self.index.info_of(name)
        entry: dict[str, object] = {
            "name": name,
            "description": info.description or tool.description,
        }
        if info.hint:
            entry["hint"] = info.hint
        if info.related:
            entry["related"] = list(info.related)
        if info.requires_confirmation:
            entry["needs_approval"] = True
        if protocol == "text":  # native calls get the schema as the tool's spec instead
            entry["parameters"] = tool.prompt_schema()
        return entry

    async def suggestion(self, name: str) -> str:
        """A query that finds ``name`` (its phrases or description, checked against the
        backend), or the name itself when none does."""
        info = self.index.info_of(name)
        description = info.description or self.index.tools[name].description
        candidates = [*info.phrases[:3], " ".join(description.split()[:8])]
        for query in candidates:
            try:
                outcome = await self.backend.search(query, self.limit)
            except Exception:
                break
            if name in outcome.names:
                return query
        return name


class _SavedRequest(msgspec.Struct, kw_only=True):
    call_id: str
    tool: str
    args: dict[str, Any]
    risk: Literal["safe", "moderate", "destructive"] = "safe"
    via: list[str] = msgspec.field(default_factory=list[str])
    nonce: str = ""
    """Minted when the call is held: two holds of the same call never share a seal."""
    seal: str = ""
    """HMAC (``approval_key``) of every other field."""


class _SavedDecision(_SavedRequest, kw_only=True):
    approved: bool
    reason: str = ""


_Sealed = TypeVar("_Sealed", bound=_SavedRequest)


class _Saved(msgspec.Struct, kw_only=True):
    active: list[str] = msgspec.field(default_factory=list[str])
    used: list[str] = msgspec.field(default_factory=list[str])
    pending: list[_SavedRequest] = msgspec.field(default_factory=list[_SavedRequest])
    decisions: list[_SavedDecision] = msgspec.field(default_factory=list[_SavedDecision])


def _seal(key: bytes, entry: _Sealed) -> _Sealed:
    """``entry`` with its seal: an HMAC of everything else in it."""
    return msgspec.structs.replace(entry, seal=_mac(key, entry))


def _mac(key: bytes, entry: _SavedRequest) -> str:
    body = msgspec.json.encode(msgspec.structs.replace(entry, seal=""), order="deterministic")
    return hmac.new(key, body, hashlib.sha256).hexdigest()


def _request_of(data: _SavedRequest) -> ApprovalRequest:
    return ApprovalRequest(data.call_id, data.tool, data.args, data.risk, tuple(data.via))


def _args_text(args: Mapping[str, object]) -> str:
    text = msgspec.json.encode(args).decode()
    return text if len(text) <= 200 else text[:199] + "…"


class _SearchTool(Tool[SearchInput, dict[str, object]]):
    name = "tool_search"
    description = (
        "Find the tools you need: describe what you want to do in a few words. Returns "
        "tools you can call from then on, with hints and workflow guidance. Search again "
        "when you need another capability."
    )

    def __init__(self, owner: ToolSearch) -> None:
        self.owner = owner
        if owner.backend.name == "regex":
            self.description = (
                "Find the tools you need with a regular expression over their names and "
                "descriptions (e.g. 'image|photo'). Returns tools you can call from then on."
            )

    async def call(
        self, ctx: ExecutionContext, input: SearchInput
    ) -> ToolResult[dict[str, object]]:
        limit = input.limit or self.owner.limit
        return ToolResult(await self.owner.search(ctx, input.query, limit))


class _Gate(ToolHook):
    """Holds back calls to tools not found yet, and calls that wait for approval; notes
    the index tools that ran (``ToolSearch.used``).

    A guard, so it sees every call: in its own run (``home``) it checks both; in a
    child run (a sub-agent's, whose tools are its own) only approvals. Of several
    gates that could approve one call (the same ToolSearch installed in a run and its
    sub-agent), the outermost decides.
    """

    def __init__(self, owner: ToolSearch, home: ExecutionContext, key: bytes) -> None:
        self.owner = owner
        self.home = home.run_id  # the id, not the context: no cycle through ctx.hooks
        self.key = key

    def guard_tool_call(self, ctx: ExecutionContext, call: ToolCall) -> Any:
        owner = self.owner
        if call.name not in owner.index.tools:
            return None
        inactive = (
            owner.defers
            and ctx.run_id == self.home
            and call.name in owner.deferred
            and call.name not in _state(ctx).active
        )
        approving = owner.needs_approval(call.name) and self._decides(ctx, call.name)
        if not inactive and not approving:
            return None
        return self._check(ctx, call, inactive)

    def after_tool_call(
        self, ctx: ExecutionContext, call: ToolCall, result: ToolResult[Any]
    ) -> None:
        if call.name in self.owner.index.tools:
            _state(ctx).used[call.name] = None

    def _decides(self, ctx: ExecutionContext, name: str) -> bool:
        """Whether this gate is the outermost one that approves calls of ``name``."""
        outermost: _Gate | None = None
        for guard in ctx.hooks.guard_chain():
            gate = getattr(guard, "__self__", None)
            if isinstance(gate, _Gate) and gate.owner.needs_approval(name):
                outermost = gate  # the chain runs from this run outwards
        return outermost is self

    async def _check(self, ctx: ExecutionContext, call: ToolCall, inactive: bool) -> None:
        owner = self.owner
        if inactive:
            query = await owner.suggestion(call.name)
            raise ToolCallRefused(
                f"{call.name} is not active: search for it first, e.g. "
                f"tool_search(query={_quoted(query)})",
                kind="unknown_tool",
            )
        info = owner.index.info_of(call.name)
        approvals = _approvals(ctx)
        via = _via(ctx)
        request = ApprovalRequest(
            _held_id(approvals, call.id), call.name, dict(call.args), info.risk, via
        )
        decision = _take_decision(approvals, request)
        if decision is None and owner.approve is not None:
            try:
                answer = owner.approve(ctx, request)
                decision = await answer if inspect.isawaitable(answer) else answer
            except Exception as error:
                _log.warning("the approval callback failed on %s", call.name, exc_info=error)
                raise ToolCallRefused(
                    f"{call.name} needs approval, and asking for it failed "
                    f"({type(error).__name__}); do not retry it now"
                ) from error
        if decision is None:
            held = _SavedRequest(
                call_id=request.call_id,
                tool=call.name,
                args=dict(call.args),
                risk=info.risk,
                via=list(via),
                nonce=secrets.token_hex(8),
            )
            approvals.pending[request.call_id] = _seal(self.key, held)
            where = f" in {' > '.join(via)}" if via else ""
            reason = f"{call.name} (call {request.call_id}{where}) is waiting for approval"
            _pause_outwards(ctx, reason)
            raise ToolCallRefused(
                f"{call.name} needs a person's approval; it is held and the run pauses "
                "until they decide. You will be told the decision."
            )
        if not decision.approved:
            why = f": {decision.reason}" if decision.reason else ""
            raise ToolCallRefused(f"{call.name} was not approved{why}. Do not call it again")


def _via(ctx: ExecutionContext) -> tuple[str, ...]:
    """The child runs (sub-agents) ``ctx`` is nested in, outermost first."""
    names: list[str] = []
    while ctx.parent is not None:
        names.append(ctx.name.removeprefix(ctx.parent.name + "/"))
        ctx = ctx.parent
    return tuple(reversed(names))


def _pause_outwards(ctx: ExecutionContext, reason: str) -> None:
    """Pause the run of ``ctx`` and every run it is nested in: a sub-agent's held call
    stops its parent too, for the person the outermost run answers to."""
    current: ExecutionContext | None = ctx
    while current is not None:
        current.pause(reason)
        current = current.parent


def _held_id(approvals: _Approvals, call_id: str) -> str:
    """``call_id``, or a variant no held call has: each run numbers its calls from
    ``call_1`` again, and a call an earlier run held may still wait under that id."""
    held, count = call_id, 1
    while held in approvals.pending:
        count += 1
        held = f"{call_id}~{count}"
    return held


def _take_decision(approvals: _Approvals, request: ApprovalRequest) -> Approval | None:
    """The decision made for a call like ``request`` between runs, used up once."""
    for position, held in enumerate(approvals.decisions):
        if held.tool == request.tool and held.args == dict(request.args):
            del approvals.decisions[position]
            return Approval(held.approved, held.reason)
    return None


def _shortened(query: str, limit: int = 200) -> str:
    """A query as it is quoted back (the model may send one of any length)."""
    return query if len(query) <= limit else query[: limit - 1] + "…"


def _quoted(text: str) -> str:
    return msgspec.json.encode(text).decode()


def _definition_tokens(tools: Iterable[AnyTool]) -> int:
    from toolchain._tokens import count_tokens

    text = "\n".join(
        f"{tool.name}: {tool.description}\n{msgspec.json.encode(tool.prompt_schema()).decode()}"
        for tool in tools
    )
    return count_tokens(text) if text else 0


def _default_backend() -> SearchBackend:
    try:
        from toolchain.discovery._bm25 import BM25Search
    except ImportError:  # the BM25 module is not there: plain keyword matching
        return KeywordSearch()
    return BM25Search()


class KeywordSearch:
    """The simplest backend: tools ranked by how many query words their text holds.

    For tests and tiny tool sets; ``BM25Search`` ranks far better.

    >>> import asyncio
    >>> backend = KeywordSearch()
    >>> backend.index([ToolDocument("create_page", "Create a new page"),
    ...                ToolDocument("find_image", "Search images by description")])
    >>> asyncio.run(backend.search("find an image", 5)).names
    ('find_image',)
    """

    name = "keyword"

    def __init__(self) -> None:
        self._words: list[tuple[str, frozenset[str]]] = []

    def index(self, documents: Sequence[ToolDocument]) -> None:
        self._words = [(doc.name, frozenset(_words(_text_of(doc)))) for doc in documents]

    async def search(self, query: str, limit: int) -> SearchOutcome:
        wanted = set(_words(query))
        scored = [
            Hit(name, float(len(wanted & words))) for name, words in self._words if wanted & words
        ]
        scored.sort(key=lambda hit: -hit.score)
        return SearchOutcome(tuple(scored[:limit]), self.name)


def _text_of(doc: ToolDocument) -> str:
    params = " ".join(f"{name} {text}" for name, text in doc.parameters)
    return " ".join((doc.name, doc.description, doc.category, *doc.phrases, params))


def _words(text: str) -> list[str]:
    import re

    return [w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 2]
