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
that finds it (a guard, ``ToolHook.guard_tool_call``: a composite's sub-calls too).

Tools marked ``requires_confirmation`` need approval as a tool that ``requires_approval``
does, by the core's mechanism (the user's tool objects are not changed): decided by
``approve`` here, else the run's ``approve=``, else held, however deep the call is made
(a composite's sub-call, a sub-agent's call, a program's). A held call pauses every run
from the one that made it up to the outermost, whose ``result.pending`` lists it;
``agent.resume(result, {call_id: Approval.granted()})`` runs it, with the arguments
that were reviewed, and the run goes on.

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
import functools
import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, NoReturn

from typing_extensions import deprecated

from toolchain import _approvals as approvals
from toolchain._context import ExecutionContext
from toolchain._errors import ToolchainTypeError
from toolchain._extension import Extension, StepView
from toolchain._kept import Kept
from toolchain._tool import Tool
from toolchain.discovery import _saved
from toolchain.discovery._activation import discovery
from toolchain.discovery._approval import Approval, Approver
from toolchain.discovery._documents import SearchBackend
from toolchain.discovery._events import SchemasDeferred
from toolchain.discovery._gate import Gate
from toolchain.discovery._index import ToolIndex
from toolchain.discovery._keyword import KeywordSearch
from toolchain.discovery._metadata import Risk
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
    - ``approve``: decides calls to the index tools that require confirmation, before
      the run's own ``approve=`` (None: the run's approver decides them, and with none
      either, each such call is held and the run pauses: resume it with
      ``agent.resume``).
    - ``approval_key``: no longer used (held calls are the core's, sealed by it);
      accepted with a ``DeprecationWarning`` for one release.
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
        if approval_key is not None:
            warnings.warn(
                "ToolSearch(approval_key=...) has no effect: held calls are in the paused "
                "result's `pending`, sealed by the core, and resumed with agent.resume; "
                "the argument goes in the next release",
                DeprecationWarning,
                stacklevel=2,
            )
        self.backend: SearchBackend = backend if backend is not None else _default_backend()
        self.backend.index(self.index.documents())
        self.deferred = frozenset(self.index.tools) - frozenset(self.always_active)
        self.defers = defer is True or (defer == "auto" and self.definition_tokens > budget_tokens)
        self._tokens_per_tool: dict[str, int] = {}  # counted when first asked
        # The last step's tools and what follows from them: a run's steps (and most
        # runs of an agent) offer the same tools, so each step reuses them.
        self._shown: tuple[tuple[str, ...], tuple[str, ...], frozenset[str]] | None = None
        self._hidden_of: _Hidden | None = None
        self._tool = SearchTool(self)

    @functools.cached_property
    def definition_tokens(self) -> int:
        """The o200k tokens of the deferred tools' definitions (name, description and
        parameter schema each), as a model would read them were they all described:
        counted when first read (``defer="auto"`` reads it as the search is made)."""
        tools = self.index.tools
        return _counted(tuple(self.index.definition(tools[name]) for name in sorted(self.deferred)))

    # -- Extension -------------------------------------------------------------------

    def tools(self) -> Sequence[AnyTool]:
        found = (self._tool,) if self.defers else ()
        return (*found, *self.index.tools.values())

    def install(self, ctx: ExecutionContext) -> None:
        discovery(ctx)
        ctx.hooks.add(Gate(self, ctx))
        # The tools that require confirmation need approval in this run and the runs
        # nested in it, by the core's mechanism: the user's tools stay as they are.
        approvals.gate_by_name(ctx, approvals.Gated(self._risk_of, self.approve))

    def instructions(self) -> str:
        return GUIDE if self.defers else ""

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
        """Take up a saved state: the tools found, named and used."""
        _saved.load(ctx, state, self.index.tools)

    def needs_approval(self, name: str) -> bool:
        """Whether calls of the index tool ``name`` wait for approval."""
        return self._risk_of(name) is not None

    def _risk_of(self, name: str) -> Risk | None:
        """The risk of ``name``'s calls when it requires confirmation, else None: read
        at each call, so the index's ``ToolInfo`` is what it says now."""
        if name not in self.index.tools:
            return None
        info = self.index.info_of(name)
        return info.risk if info.requires_confirmation else None

    # -- the conversation's side -----------------------------------------------------

    def active(self, ctx: ExecutionContext) -> tuple[str, ...]:
        """The tools searches have activated in this run (and its conversation)."""
        return tuple(discovery(ctx).active)

    def used(self, ctx: ExecutionContext) -> tuple[str, ...]:
        """The index tools called successfully in this run (and its conversation)."""
        return tuple(discovery(ctx).used)

    @deprecated("held calls are in the paused result's `pending`; resume with agent.resume")
    def pending(self, extension_state: Mapping[str, object]) -> NoReturn:
        """Gone: a held call is listed in the paused result's ``pending``."""
        raise _moved("pending")

    @deprecated("decide held calls with agent.resume(result, {call_id: Approval.granted()})")
    def decide(
        self, extension_state: Mapping[str, object], call_id: str, decision: Approval
    ) -> NoReturn:
        """Gone: ``agent.resume(result, {call_id: decision})`` runs an approved call."""
        raise _moved("decide")

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
                counted[name] = _tokens(self.index.definition(self.index.tools[name]))
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


def _moved(name: str) -> ToolchainTypeError:
    return ToolchainTypeError(
        f"ToolSearch.{name} is gone: approvals are the core's now. A held call is listed "
        "in the paused result's `pending` (result.pending); decide it with "
        "agent.resume(result, {call_id: Approval.granted()}) (or Approval.denied(reason)), "
        "which runs it with the arguments that were reviewed and goes on with the run"
    )


@dataclasses.dataclass(frozen=True, slots=True)
class _Hidden:
    """The deferred tools among a step's ``tools``, and their definitions' tokens."""

    tools: tuple[str, ...]
    names: tuple[str, ...]
    tokens: int


def _tokens(text: str) -> int:
    from toolchain._tokens import count_tokens

    return count_tokens(text) if text else 0


def _counted(definitions: tuple[str, ...]) -> int:
    """The o200k tokens of ``definitions`` (all of an index's deferred ones), one per
    line: counted once for every ToolSearch over the same definitions (one made per
    request, say). Keyed by the lines, whose hashes are kept, not by their text joined
    (a new string of some 70 KB for 200 tools, hashed again each time)."""
    from toolchain._tokens import count_tokens

    if not definitions:
        return 0
    key = (count_tokens, definitions)  # the counter too: a test may count with its own
    tokens = _COUNTED.get(key)
    return _COUNTED.put(key, count_tokens("\n".join(definitions))) if tokens is None else tokens


_COUNTED = Kept[tuple[object, tuple[str, ...]], int](8)
"""(the counter, definitions) → their tokens (`_counted`): the last eight counted."""


def _default_backend() -> SearchBackend:
    try:
        from toolchain.discovery._bm25 import BM25Search
    except ImportError:  # the BM25 module is not there: plain keyword matching
        return KeywordSearch()
    return BM25Search()
