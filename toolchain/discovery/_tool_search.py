"""``ToolSearch``: the model starts with ``tool_search`` and finds the tools it needs.

The design is the seed's "dynamic tool injection V2": instead of every tool's
definition in every request, the model gets one discovery tool (and any tools kept
always active). A search takes a query or a list of them (everything a task needs, in
one request); the best match of each is described (usage hint, the workflow guidance
of its category) and can be called from then on, for the rest of the run and of the
conversation; the other matches are named, and callable as they are (a call with
arguments that do not validate is answered with the tool's parameters), and a search
for a name finds that tool.
What a search says stays in every later request, so it says each thing once: a tool
described earlier in the run is named only, a category's guidance comes once.

Activation keeps the provider's prompt cache: in text mode the system prompt's tool
listing never changes (a found tool's parameter schema arrives in the search result);
in native mode a found tool's spec is appended after those already sent. A call to a
tool no search found or named is answered "not active — search for it", with a query
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
>>> from toolchain.discovery import KeywordSearch, ToolIndex, ToolInfo, ToolSearch
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
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

import msgspec

from toolchain._context import ExecutionContext
from toolchain._extension import Extension, StepView, keep_with_conversation
from toolchain._tool import Tool
from toolchain.discovery import _saved
from toolchain.discovery._activation import discovery
from toolchain.discovery._approval import Approval, ApprovalRequest, Approver
from toolchain.discovery._documents import SearchBackend
from toolchain.discovery._events import SchemasDeferred
from toolchain.discovery._found import Schemas
from toolchain.discovery._gate import Gate
from toolchain.discovery._held import PROCESS_KEY, Seal, decisions_listing
from toolchain.discovery._index import ToolIndex
from toolchain.discovery._keyword import KeywordSearch
from toolchain.discovery._search_tool import SearchTool, find, suggest

__all__ = ["ToolSearch"]

AnyTool = Tool[Any, Any]

GUIDE = """\
Only some tools are listed: tool_search finds the others. If you can answer without
tools, answer directly."""


class ToolSearch(Extension):
    """Tool discovery (see the module text).

    - ``index``: the tools to discover (a ``ToolIndex``, or tools to index as they are).
    - ``backend``: how queries find tools (default: ``BM25Search``; pass a
      ``HybridSearch`` to add embeddings, which load a model at startup).
    - ``always_active``: index tools the model can call from the start.
    - ``limit``: tools a search returns per query (one described, the others named)
      unless the model asks for fewer or more.
    - ``defer``: ``True`` hides the index's tools until found; ``False`` shows them all
      (``tool_search`` is then not offered); ``"auto"`` defers only when their
      definitions exceed ``budget_tokens`` o200k tokens.
    - ``approve``: decides calls to tools that require confirmation (None: every such
      call pauses the run for a decision).
    - ``approval_key``: the secret that seals held calls and decisions in
      ``extension_state`` (default: a random key of this process). Give every process
      that continues a conversation the same key; a held call or decision whose seal
      does not match is ignored (and logged), so an edited ``extension_state``
      approves nothing. A saved state is read up to 1,000 held calls and 1,000
      decisions (the newest; the rest are left out, with a warning), so restoring one
      costs the same however large it was made.
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
        self._seal = Seal(approval_key or PROCESS_KEY)
        self.backend: SearchBackend = backend if backend is not None else _default_backend()
        self.backend.index(self.index.documents())
        self.deferred = frozenset(self.index.tools) - frozenset(self.always_active)
        self.schemas = Schemas()
        """Each index tool's schema as searches show it, compacted once per tool."""
        self.definition_tokens = _definition_tokens(
            (self.index.tools[name] for name in sorted(self.deferred)), self.schemas
        )
        self.defers = defer is True or (defer == "auto" and self.definition_tokens > budget_tokens)
        self._tokens_per_tool: dict[str, int] = {}  # counted when first asked
        # The last step's tools and what follows from them: a run's steps (and most
        # runs of an agent) offer the same tools, so each step reuses them.
        self._shown: tuple[tuple[str, ...], tuple[str, ...], frozenset[str]] | None = None
        self._hidden_of: _Hidden | None = None
        self._tool = SearchTool(self)

    # -- Extension -------------------------------------------------------------------

    def tools(self) -> Sequence[AnyTool]:
        found = (self._tool,) if self.defers else ()
        return (*found, *self.index.tools.values())

    def install(self, ctx: ExecutionContext) -> None:
        discovery(ctx)
        ctx.hooks.add(Gate(self, ctx, self._seal))
        # Installed in a sub-agent's run: held calls are the conversation's, and the
        # outermost run must save them even when it has no ToolSearch of its own.
        keep_with_conversation(ctx, self)

    def instructions(self) -> str:
        return GUIDE if self.defers else ""

    def prompt_section(self, ctx: ExecutionContext) -> str:
        """Decisions a person made on held calls since the run that held them."""
        return decisions_listing(ctx)

    def before_step(self, ctx: ExecutionContext, request: StepView) -> StepView | None:
        """The step shows ``tool_search``, the always-active tools, the chain's other
        tools and, in native mode, the tools found so far, appended in the order found."""
        state = discovery(ctx)
        state.protocol = request.protocol
        if not self.defers:
            return None
        tools = request.tools
        shown, offered = self._visible(tools)
        if state.protocol == "native" and state.active:
            shown += tuple(name for name in state.active if name in offered)
        if ctx.events.has_subscribers(SchemasDeferred):
            # Found tools' definitions are in the conversation (text) or the specs (native).
            hidden = self._hidden(tools)
            tokens = hidden.tokens
            names = hidden.names
            if state.active:
                names = tuple(n for n in names if n not in state.active)
                tokens = self._tokens_of(names)
            ctx.events.emit(SchemasDeferred(ctx, names, tokens))
        return request.replace(described=shown)

    def save_state(self, ctx: ExecutionContext) -> object | None:
        return _saved.save(ctx)

    def load_state(self, ctx: ExecutionContext, state: object) -> None:
        """Take up a saved state; held calls and decisions whose seal does not match
        (written by hand, or sealed with another ``approval_key``) are left out."""
        _saved.load(ctx, state, self.index.tools, self._seal)

    def needs_approval(self, name: str) -> bool:
        """Whether calls of the index tool ``name`` wait for approval."""
        return name in self.index.tools and self.index.info_of(name).requires_confirmation

    # -- the conversation's side -----------------------------------------------------

    def active(self, ctx: ExecutionContext) -> tuple[str, ...]:
        """The tools searches have activated in this run (and its conversation)."""
        return tuple(discovery(ctx).active)

    def used(self, ctx: ExecutionContext) -> tuple[str, ...]:
        """The index tools called successfully in this run (and its conversation)."""
        return tuple(discovery(ctx).used)

    def pending(self, extension_state: Mapping[str, object]) -> tuple[ApprovalRequest, ...]:
        """The calls a paused run holds for a decision (from ``result.extension_state``),
        however deep they were made: a sub-agent's held call is listed in the outermost
        run's state. Entries whose seal does not match are left out (and logged)."""
        return _saved.pending(extension_state.get(self.name, {}), self._seal)

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
        saved = extension_state.get(self.name, {})
        return {**extension_state, self.name: _saved.decide(saved, call_id, decision, self._seal)}

    def _visible(self, tools: tuple[str, ...]) -> tuple[tuple[str, ...], frozenset[str]]:
        """The step's tools but the deferred ones, and all of them as a set: the same
        tools every step of a run, so worked out once for them (not per step)."""
        known = self._shown
        if known is not None and (known[0] is tools or known[0] == tools):
            return known[1], known[2]
        shown = tuple(name for name in tools if name not in self.deferred)
        self._shown = (tools, shown, frozenset(tools))
        return shown, self._shown[2]

    def _hidden(self, tools: tuple[str, ...]) -> _Hidden:
        """The deferred tools among ``tools`` and their tokens, worked out once for them."""
        known = self._hidden_of
        if known is not None and (known.tools is tools or known.tools == tools):
            return known
        names = tuple(name for name in tools if name in self.deferred)
        self._hidden_of = _Hidden(tools, names, self._tokens_of(names))
        return self._hidden_of

    def _tokens_of(self, names: tuple[str, ...]) -> int:
        """The o200k tokens of these index tools' definitions, each counted once."""
        counted = self._tokens_per_tool
        for name in names:
            if name not in counted:
                counted[name] = _definition_tokens([self.index.tools[name]], self.schemas)
        return sum(counted[name] for name in names)

    # -- searching -------------------------------------------------------------------

    async def search(
        self, ctx: ExecutionContext, query: str | Sequence[str], limit: int
    ) -> dict[str, object]:
        """Run one search for the model (a query, or a list of them, each giving at most
        ``limit`` tools), activate what it found, and say what it was."""
        return await find(self, ctx, query, limit)

    async def suggestion(self, name: str) -> str:
        """A query that finds ``name`` as its best match (its phrases or description,
        checked against the backend), or the name itself when none does."""
        return await suggest(self, name)


@dataclasses.dataclass(frozen=True, slots=True)
class _Hidden:
    """The deferred tools among a step's ``tools``, and their definitions' tokens."""

    tools: tuple[str, ...]
    names: tuple[str, ...]
    tokens: int


def _definition_tokens(tools: Iterable[AnyTool], schemas: Schemas) -> int:
    from toolchain._tokens import count_tokens

    text = "\n".join(
        f"{tool.name}: {tool.description}\n{msgspec.json.encode(schemas.of(tool)).decode()}"
        for tool in tools
    )
    return count_tokens(text) if text else 0


def _default_backend() -> SearchBackend:
    try:
        from toolchain.discovery._bm25 import BM25Search
    except ImportError:  # the BM25 module is not there: plain keyword matching
        return KeywordSearch()
    return BM25Search()
