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
import inspect
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

import msgspec
from pydantic import BaseModel, Field

from toolchain._context import ExecutionContext, StateKey
from toolchain._extension import Extension
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
    pending: dict[str, ApprovalRequest] = field(default_factory=lambda: {})
    """call id → a call held until a person decides."""
    decisions: list[tuple[ApprovalRequest, Approval]] = field(default_factory=lambda: [])
    """Decisions made between runs, applied to the next call with the same arguments."""
    protocol: Protocol = "text"


_STATE = StateKey[_Discovery]("toolchain.discovery")


def _state(ctx: ExecutionContext) -> _Discovery:
    return ctx.state.setdefault(_STATE, _Discovery)


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
        ctx.hooks.add(_Gate(self))

    def instructions(self) -> str:
        return GUIDE if self.defers else ""

    def prompt_section(self, ctx: ExecutionContext) -> str:
        """Decisions a person made on held calls since the run that held them."""
        lines = [
            f"- {request.tool} {_args_text(request.args)}: "
            + ("approved; call it again to run it" if decision.approved else "denied")
            + (f" ({decision.reason})" if decision.reason else "")
            for request, decision in _state(ctx).decisions
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
        state = _state(ctx)
        return {
            "active": list(state.active),
            "used": list(state.used),
            "pending": [_request_data(request) for request in state.pending.values()],
            # A denial has been told during this run; an approval waits for its call.
            "decisions": [
                {**_request_data(request), "approved": d.approved, "reason": d.reason}
                for request, d in state.decisions
                if d.approved
            ],
        }

    def load_state(self, ctx: ExecutionContext, state: object) -> None:
        saved = msgspec.convert(state, _Saved)
        current = _state(ctx)
        current.active.update(dict.fromkeys(n for n in saved.active if n in self.index.tools))
        current.used.update(dict.fromkeys(saved.used))
        for data in saved.pending:
            request = _request_of(data)
            current.pending[request.call_id] = request
        current.decisions += [
            (_request_of(d), Approval(d.approved, d.reason)) for d in saved.decisions
        ]

    # -- the conversation's side -----------------------------------------------------

    def active(self, ctx: ExecutionContext) -> tuple[str, ...]:
        """The tools searches have activated in this run (and its conversation)."""
        return tuple(_state(ctx).active)

    def used(self, ctx: ExecutionContext) -> tuple[str, ...]:
        """The index tools called successfully in this run (and its conversation)."""
        return tuple(_state(ctx).used)

    def pending(self, extension_state: Mapping[str, object]) -> tuple[ApprovalRequest, ...]:
        """The calls a paused run holds for a decision (from ``result.extension_state``)."""
        saved = msgspec.convert(extension_state.get(self.name, {}), _Saved)
        return tuple(_request_of(data) for data in saved.pending)

    def decide(
        self, extension_state: Mapping[str, object], call_id: str, decision: Approval
    ) -> dict[str, object]:
        """``extension_state`` with a held call decided: pass it to the next run.

        The model is told the decision; an approved call runs when the model makes it
        again (same tool, same arguments), a denied one is answered with the reason.
        """
        saved = msgspec.convert(extension_state.get(self.name, {}), _Saved)
        held = [data for data in saved.pending if data.call_id == call_id]
        if not held:
            raise KeyError(f"no call {call_id!r} is waiting for approval")
        pending = [data for data in saved.pending if data.call_id != call_id]
        decided = _SavedDecision(**msgspec.structs.asdict(held[0]), approved=decision.approved)
        decided = msgspec.structs.replace(decided, reason=decision.reason)
        updated = msgspec.structs.replace(
            saved, pending=pending, decisions=[*saved.decisions, decided]
        )
        return {**extension_state, self.name: msgspec.to_builtins(updated)}

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


class _SavedDecision(_SavedRequest, kw_only=True):
    approved: bool
    reason: str = ""


class _Saved(msgspec.Struct, kw_only=True):
    active: list[str] = msgspec.field(default_factory=list[str])
    used: list[str] = msgspec.field(default_factory=list[str])
    pending: list[_SavedRequest] = msgspec.field(default_factory=list[_SavedRequest])
    decisions: list[_SavedDecision] = msgspec.field(default_factory=list[_SavedDecision])


def _request_data(request: ApprovalRequest) -> dict[str, object]:
    return {
        "call_id": request.call_id,
        "tool": request.tool,
        "args": dict(request.args),
        "risk": request.risk,
    }


def _request_of(data: _SavedRequest) -> ApprovalRequest:
    return ApprovalRequest(data.call_id, data.tool, data.args, data.risk)


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
    the index tools that ran (``ToolSearch.used``)."""

    def __init__(self, owner: ToolSearch) -> None:
        self.owner = owner

    def before_tool_call(self, ctx: ExecutionContext, call: ToolCall) -> Any:
        owner = self.owner
        if call.name not in owner.index.tools:
            return None
        state = _state(ctx)
        inactive = owner.defers and call.name in owner.deferred and call.name not in state.active
        info = owner.index.info_of(call.name)
        if not inactive and not info.requires_confirmation:
            return None
        return self._check(ctx, call, state, inactive)

    def after_tool_call(
        self, ctx: ExecutionContext, call: ToolCall, result: ToolResult[Any]
    ) -> None:
        if call.name in self.owner.index.tools:
            _state(ctx).used[call.name] = None

    async def _check(
        self, ctx: ExecutionContext, call: ToolCall, state: _Discovery, inactive: bool
    ) -> None:
        owner = self.owner
        if inactive:
            query = await owner.suggestion(call.name)
            raise ToolCallRefused(
                f"{call.name} is not active: search for it first, e.g. "
                f"tool_search(query={_quoted(query)})",
                kind="unknown_tool",
            )
        info = owner.index.info_of(call.name)
        request = ApprovalRequest(_held_id(state, call.id), call.name, dict(call.args), info.risk)
        decision = _take_decision(state, request)
        if decision is None and owner.approve is not None:
            try:
                answer = owner.approve(ctx, request)
                decision = await answer if inspect.isawaitable(answer) else answer
            except Exception as error:
                _log.warning("the approval callback failed on %s", call.name, exc_info=True)
                raise ToolCallRefused(
                    f"{call.name} needs approval, and asking for it failed "
                    f"({type(error).__name__}); do not retry it now"
                ) from error
        if decision is None:
            state.pending[request.call_id] = request
            ctx.pause(f"{call.name} (call {request.call_id}) is waiting for approval")
            raise ToolCallRefused(
                f"{call.name} needs a person's approval; it is held and the run pauses "
                "until they decide. You will be told the decision."
            )
        if not decision.approved:
            why = f": {decision.reason}" if decision.reason else ""
            raise ToolCallRefused(f"{call.name} was not approved{why}. Do not call it again")


def _held_id(state: _Discovery, call_id: str) -> str:
    """``call_id``, or a variant no held call has: each run numbers its calls from
    ``call_1`` again, and a call an earlier run held may still wait under that id."""
    held, count = call_id, 1
    while held in state.pending:
        count += 1
        held = f"{call_id}~{count}"
    return held


def _take_decision(state: _Discovery, request: ApprovalRequest) -> Approval | None:
    """The decision made for a call like ``request`` between runs, used up once."""
    for position, (held, decision) in enumerate(state.decisions):
        if held.tool == request.tool and dict(held.args) == dict(request.args):
            del state.decisions[position]
            return decision
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
