"""Tool chains: what a chain promises (`ToolChain`), how calls are written (`CallSyntax`),
and the base every chain shares (`ToolChainBase`), which runs the stages of a call.

A chain's work, in order (each stage a module, see ``toolchain.chain._stages``): read the
action into calls (the syntax), plan and check them (``_check``), run them (``_run``,
``_schedule``), build the observation (``_observe``). ``JSONToolChain``,
``YAMLToolChain`` and ``DialectToolChain`` are this base with a syntax each.
"""

from __future__ import annotations

import asyncio
import copy
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Generic, Protocol, Self, TypedDict, TypeVar, cast, overload, runtime_checkable

from formats import TextFormat, XMLFormat
from toolchain._approvals import Approval, Approver
from toolchain._concurrency import run_sync
from toolchain._context import ExecutionContext
from toolchain._errors import (
    ToolCallParseError,
    ToolchainStateError,
    ToolchainValueError,
    duplicate_tool,
)
from toolchain._events import ToolCallParseFailed
from toolchain._extension import Extension, checked_extensions, install_extensions
from toolchain._observations import ObservationEncoding, encoder_for
from toolchain._redact import logger
from toolchain._result import ToolCall, ToolChainResult
from toolchain._tool import check_tool
from toolchain.chain._check import plan
from toolchain.chain._config import ChainConfig
from toolchain.chain._observe import AGENT_SECTIONS, assemble
from toolchain.chain._resume import hold, resume
from toolchain.chain._schedule import begin_alone, run_action
from toolchain.chain._stages import AnyTool, Outcome
from toolchain.chain._view import Narrowed, Registry, added_tools

__all__ = ["CallSyntax", "ChainOptions", "ToolChain", "ToolChainBase", "narrow_chain"]

_log = logger("toolchain")


@runtime_checkable
class ToolChain(Protocol):
    """Parses tool calls from its section, runs them and formats the observation.

    A chain *is* a ``TextSection`` (default name ``action``): register it on the
    agent's ``TextFormat`` like any other section.

    An implementation must keep these promises, which agents and users rely on:

    - ``execute`` raises only ``ToolCallParseError`` (content that is not calls at
      all, after emitting ``ToolCallParseFailed``) and ``KeyboardInterrupt``; every
      other failure (unknown tool, invalid arguments, a tool that raises, hangs or
      returns junk, a hook, a limit, the run's cancellation) is that call's error;
    - every call it starts ends in exactly one ``ToolCallFinished`` event, failed or not,
      so stats and traces add up; a call held for approval (a ``held`` error, listed in
      ``pending``) ends when it is decided (``ToolChainBase.resume``);
    - ``raw.calls``, ``raw.results``, ``raw.errors`` and ``observations`` line up with
      the calls, in order; ``text`` is the observation already wrapped by
      ``text_format.wrap_observation``, in whose sections no output can open another.

    ``ToolChainBase`` keeps them all; a new syntax needs only a ``CallSyntax``.

    >>> from toolchain import JSONToolChain, YAMLToolChain
    >>> isinstance(JSONToolChain(), ToolChain), isinstance(YAMLToolChain(), ToolChain)
    (True, True)
    """

    @property
    def name(self) -> str: ...

    @property
    def guidance(self) -> str: ...

    @property
    def tools(self) -> Mapping[str, AnyTool]: ...

    def parse_section(self, content: str) -> object: ...

    def register_tool(self, tool: AnyTool) -> Self: ...

    def available_tools_prompt(self, names: Iterable[str] | None = None) -> str: ...

    def parse_calls(
        self, content: str, text_format: TextFormat | None = None
    ) -> list[ToolCall | str]: ...

    async def execute(
        self, ctx: ExecutionContext, content: str, text_format: TextFormat
    ) -> ToolChainResult: ...

    async def execute_calls(
        self, ctx: ExecutionContext, calls: Sequence[ToolCall], text_format: TextFormat
    ) -> ToolChainResult: ...

    def execute_sync(
        self, ctx: ExecutionContext, content: str, text_format: TextFormat
    ) -> ToolChainResult: ...


class CallSyntax(Protocol):
    """How a chain's calls are written, and its outputs shown: what tells one chain from
    another (JSON, YAML, a model's native dialect)."""

    label: str
    """How messages name the syntax: ``"JSON"``, ``"YAML"``."""

    def read(self, content: str, tools: Mapping[str, AnyTool], limit: int) -> list[ToolCall | str]:
        """The calls in ``content`` (a string per item that is not a call), at most
        ``limit`` of them (then ``toolchain.chain._check.too_many`` for the rest). Raises
        ``ToolCallParseError`` when the content is not calls at all."""
        ...

    def write(self, output: object) -> str:
        """A tool's output as the model reads it."""
        ...

    def schema_text(self, schema: Mapping[str, object]) -> str:
        """A parameter schema as the prompt shows it."""
        ...

    def guidance(self) -> str:
        """How to write calls, for the prompt."""
        ...


class ChainOptions(TypedDict, total=False):
    """The options every tool chain takes, whatever its syntax (see `ToolChainBase`)."""

    name: str
    subsection: str | None
    timeout: float | None
    max_calls: int
    max_output_chars: int
    max_observation_chars: int
    cancel_grace: float
    extensions: Sequence[Extension]
    observations: ObservationEncoding | None
    approve: Approver | None
    max_concurrency: int | None


T = TypeVar("T")

_FEW = 8
"""Up to this many tools, a narrowed listing picks them by name (a sort of at most this
many lookups in ``ChainConfig.names``); more, it filters every tool once."""


class _Option(Generic[T]):
    """A chain option: read as an attribute; setting it (checked by ``check``, when
    given) makes the chain's next config anew, so the action after it runs with it."""

    __slots__ = ("check", "slot")

    def __init__(self, check: Callable[[ToolChainBase, T], None] | None = None) -> None:
        self.check = check
        self.slot = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.slot = f"_{name}"

    @overload
    def __get__(self, chain: None, owner: type) -> Self: ...
    @overload
    def __get__(self, chain: ToolChainBase, owner: type) -> T: ...
    def __get__(self, chain: ToolChainBase | None, owner: type) -> T | Self:
        if chain is None:
            return self
        return cast("T", getattr(chain, self.slot))

    def __set__(self, chain: ToolChainBase, value: T) -> None:
        if self.check is not None:
            self.check(chain, value)
        # By name, as the value itself: the option and the config are the chain's own.
        setattr(chain, self.slot, value)
        setattr(chain, "_config", None)  # noqa: B010


def _at_least_one(chain: ToolChainBase, value: int) -> None:
    if value < 1:
        raise ToolchainValueError(
            "max_calls, max_output_chars and max_observation_chars must be >= 1"
        )


def _turns(chain: ToolChainBase, value: int | None) -> None:
    turns = cast(object, value)  # checked whatever its annotation says
    if turns is not None and (isinstance(turns, bool) or not isinstance(turns, int) or turns < 1):
        raise ToolchainValueError(f"max_concurrency must be a positive int or None, not {value!r}")


def _encoder_of(chain: ToolChainBase, value: ObservationEncoding | None) -> None:
    """Make the writer of outputs now: a bad encoding fails where it is set."""
    encode = chain.call_syntax.write if value is None else encoder_for(value)
    setattr(chain, "_encode", encode)  # noqa: B010  (by name, as _Option sets the chain's)


class ToolChainBase:
    """A tool chain with a ``CallSyntax``: registration, the prompt listing, and the
    stages every call goes through, whatever its syntax (see the module text).

    The options, all keyword-only:

    - ``name``: the section the calls are read from (``action``).
    - ``subsection``: read calls from sub-sections of that name inside the action
      (gent's ``<action><direct_call>…</direct_call></action>``); content without
      one is read whole.
    - ``timeout``: seconds per call unless the tool sets its own; ``None``: none.
    - ``max_calls``: calls run per action; the rest are reported as one error.
    - ``max_output_chars`` / ``max_observation_chars``: a call's serialised output
      is cut to the smaller of ``max_output_chars`` and its share of
      ``max_observation_chars``, with a note saying so (``raw`` keeps it whole).
    - ``cancel_grace``: seconds a cancelled or timed-out call gets to stop before
      it is abandoned (a tool that swallows ``CancelledError`` cannot hang a run).
    - ``extensions``: their tools are registered now, and each is installed on a
      run's context when the chain first executes in it (see ``Extension``).
    - ``observations``: how tool outputs are written for the model: ``"json"``,
      ``"yaml"``, ``"toon"`` or ``"auto"`` (the fewest tokens per output; see
      ``toolchain._observations``). ``None``, the default, writes them in the chain's own
      syntax. Only the outputs change: calls are read as before.
    - ``approve``: decides the calls of tools that need approval
      (``Tool.requires_approval``) in runs that have no approver of their own (an
      agent's ``approve=``); see ``toolchain.Approval``. With none, or when it returns
      ``None``, a call is held: the action's other calls finish, the result lists it in
      ``pending``, and `resume` decides it.
    - ``max_concurrency``: at most this many calls of one action run at once (``1``:
      one after another, in order); ``None``, the default: all of them.
    """

    def __init__(
        self,
        syntax: CallSyntax,
        *,
        name: str = "action",
        subsection: str | None = None,
        timeout: float | None = 60.0,
        max_calls: int = 64,
        max_output_chars: int = 100_000,
        max_observation_chars: int = 400_000,
        cancel_grace: float = 1.0,
        extensions: Sequence[Extension] = (),
        observations: ObservationEncoding | None = None,
        approve: Approver | None = None,
        max_concurrency: int | None = None,
    ) -> None:
        self.call_syntax = syntax
        self._name = name
        self._subsection = subsection
        self._config = None
        self.timeout = timeout
        self.max_calls = max_calls
        self.max_output_chars = max_output_chars
        self.max_observation_chars = max_observation_chars
        self.cancel_grace = cancel_grace
        self.observations = observations  # its writer made now: a bad one fails here
        self.approve = approve
        self.max_concurrency = max_concurrency
        self.extensions = checked_extensions(extensions, f"{type(self).__name__}()")
        self._registry = Registry()
        """The tools registered on this chain, shared with its views (``with_tools``,
        ``narrowed``): only ``register_tool`` writes it."""
        self._added: tuple[AnyTool, ...] = ()
        """In a view made by ``with_tools``: the tools it offers beside the registry's."""
        self._active: frozenset[str] | None = None
        """In a view made by ``narrowed``: the only tools its calls may run."""
        # name -> (tool, schema, description, policy, its listing entry): see
        # available_tools_prompt
        self._listing: dict[str, tuple[AnyTool, object, str, str, str]] = {}
        self._reserved: tuple[weakref.ref[TextFormat], int, frozenset[str]] | None = None
        for extension in self.extensions:
            for tool in extension.tools():
                self.register_tool(tool)

    # -- options: setting one makes the next action's config anew ---------------------

    timeout = _Option[float | None]()
    """Seconds per call unless the tool sets its own; ``None``: none."""
    max_calls = _Option[int](_at_least_one)
    """Calls run per action; the rest are reported as one error."""
    max_output_chars = _Option[int](_at_least_one)
    """The most of one call's serialised output the model reads."""
    max_observation_chars = _Option[int](_at_least_one)
    """The most of an action's outputs the model reads, shared among its calls."""
    cancel_grace = _Option[float]()
    """Seconds a cancelled or timed-out call gets to stop before it is abandoned."""
    observations = _Option[ObservationEncoding | None](_encoder_of)
    """How outputs are written (``None``: in the chain's own syntax)."""
    approve = _Option[Approver | None]()
    """Decides calls that need approval in runs without an approver of their own."""
    max_concurrency = _Option[int | None](_turns)
    """At most this many calls of an action run at once (``None``: all of them)."""
    extensions = _Option[tuple[Extension, ...]]()
    """The extensions installed on each run's context the chain executes in (an MCP
    server attached to the chain adds itself; its tools it registers itself)."""
    _encode: Callable[[object], str]
    """The writer ``observations`` names (made as it is set)."""
    _config: ChainConfig | None

    @property
    def encode_output(self) -> Callable[[object], str]:
        """A successful call's output as the model reads it."""
        return self.config.encode_output

    @property
    def config(self) -> ChainConfig:
        """The chain's tools and settings, frozen: what every stage of an action reads.

        Made again only after a change (a tool registered on this chain or on the chain
        a view views, an option set); an action in flight keeps the one it started with.
        """
        config = self._config
        if config is None or config.version != self._registry.version:
            config = self._config = self._make_config()
        return config

    def _make_config(self) -> ChainConfig:
        registry = self._registry
        tools = dict(registry.tools)  # a copy: a tool registered later is not this config's
        for tool in self._added:  # a view's own tool wins over one registered after it
            tools.pop(tool.name, None)
            tools[tool.name] = tool
        active = self._active
        offered = tools if active is None else {n: t for n, t in tools.items() if n in active}
        return ChainConfig(
            tools=tools,
            offered=offered,
            names=tuple(offered),
            timeout=self.timeout,
            cancel_grace=self.cancel_grace,
            max_calls=self.max_calls,
            max_output_chars=self.max_output_chars,
            max_observation_chars=self.max_observation_chars,
            encode_output=self._encode,
            extensions=self.extensions,
            approve=self.approve,
            max_concurrency=self.max_concurrency,
            section=self._name.lower(),
            version=registry.version,
        )

    @property
    def syntax(self) -> str:
        """How messages name the chain's syntax (``"JSON"``, ``"YAML"``)."""
        return self.call_syntax.label

    # -- TextSection -----------------------------------------------------------------

    @property
    def name(self) -> str:
        return self._name

    @property
    def guidance(self) -> str:
        text = self.call_syntax.guidance()
        if self._subsection:
            text = f"Write the calls inside a `{self._subsection}` sub-section.\n{text}"
        return text

    def parse_section(self, content: str) -> list[ToolCall | str]:
        """The calls in ``content`` (a string per item that is not a call)."""
        return self.parse_calls(content)

    # -- registry and views ----------------------------------------------------------

    @property
    def tools(self) -> Mapping[str, AnyTool]:
        """The tools a call may run, by name (a copy): in a narrowed view, its active ones."""
        return dict(self.config.offered)

    @property
    def registry(self) -> Mapping[str, AnyTool]:
        """Every tool the chain has, by name, as of now (not to be written): what calls
        are read with, a narrowed view's inactive tools included."""
        return self.config.tools

    def register_tool(self, tool: AnyTool) -> Self:
        """Add a tool; returns the chain, so registrations chain.

        Raises ``ToolDefinitionError`` for a tool without a valid name or description,
        ``ToolInputTypeError`` for an input type that is not a model, dataclass,
        TypedDict or Struct, and ``DuplicateToolError`` when the name is taken. On a
        view (``with_tools``, ``narrowed``) the tool is registered on the chain it views.
        An action already running goes on with the tools it started with.

        >>> from toolchain import tool
        >>> @tool
        ... def ping() -> str:
        ...     '''Check the service is up.'''
        ...     return "pong"
        >>> from toolchain import JSONToolChain
        >>> list(JSONToolChain().register_tool(ping).tools)
        ['ping']
        """
        check_tool(tool)
        name = tool.name
        existing = self.registry.get(name)
        if existing is not None:
            raise duplicate_tool(name, existing)
        tool.input_schema()  # fail now, not at the first call, on a bad input type
        self._registry.add(tool)
        return self

    def with_tools(self, tools: Sequence[AnyTool]) -> Self:
        """This chain offering ``tools`` too, without changing it: the chain itself when
        it offers each of them already, else a view of it (pydantic-ai's ``for_run``).

        The view shares everything with this chain, its options and its tools (those
        registered later too); only the added tools are its own. An agent whose
        extensions bring tools runs on such a view, so two agents on one chain never
        see each other's extension tools. Raises ``DuplicateToolError`` when a tool's
        name is another of this chain's tools.

        >>> from toolchain import JSONToolChain, tool
        >>> @tool
        ... def ping() -> str:
        ...     '''Check the service is up.'''
        ...     return "pong"
        >>> @tool
        ... def reboot() -> str:
        ...     '''Restart the service.'''
        ...     return "restarted"
        >>> chain = JSONToolChain().register_tool(ping)
        >>> admin = chain.with_tools([reboot])
        >>> list(admin.tools), list(chain.tools)
        (['ping', 'reboot'], ['ping'])
        >>> chain.with_tools([ping]) is chain
        True
        """
        added = added_tools(self.registry, self._added, tools)
        if len(added) == len(self._added):
            return self
        return self._view(added=added)

    def narrowed(self, active: Iterable[str]) -> Self:
        """This chain with only the ``active`` tools callable, without changing it: the
        chain itself when every tool is active, else a view of it (pydantic-ai's
        ``FilteredToolset``).

        The view's calls to any other tool are answered, never run: a tool the chain has
        is not available now (the active ones are listed), a name it does not have is an
        unknown tool. Agents run a step's calls on such a view when a step hook narrowed
        the step's tools.

        >>> from formats import XMLFormat
        >>> from toolchain import ExecutionContext, JSONToolChain, tool
        >>> @tool
        ... def ping() -> str:
        ...     '''Check the service is up.'''
        ...     return "pong"
        >>> @tool
        ... def reboot() -> str:
        ...     '''Restart the service.'''
        ...     return "restarted"
        >>> chain = JSONToolChain().register_tool(ping).register_tool(reboot)
        >>> step = chain.narrowed(["ping"])
        >>> result = step.execute_sync(ExecutionContext(), '{"tool": "reboot"}', XMLFormat())
        >>> print(result.raw.errors[0].message)
        the tool 'reboot' is not available now. Available tools: ping
        >>> chain.narrowed(["ping", "reboot"]) is chain, list(chain.tools)
        (True, ['ping', 'reboot'])
        """
        names = self.config.names
        wanted = active if isinstance(active, tuple) else tuple(active)
        if wanted == names:  # the common case: every tool active, in the chain's order
            return self
        keep = frozenset(wanted)
        if keep.issuperset(names):
            return self
        if self._active is not None:
            keep &= self._active
        return self._view(active=keep)

    def _view(
        self, *, added: tuple[AnyTool, ...] | None = None, active: frozenset[str] | None = None
    ) -> Self:
        """A copy of this chain sharing its registry, with tools added or only some active."""
        view = copy.copy(self)
        if added is not None:
            view._added = added
        if active is not None:
            view._active = active
        view._config = None
        view._listing = {}  # its own entries: this chain's cache stays as it was
        return view

    def available_tools_prompt(self, names: Iterable[str] | None = None) -> str:
        """Each tool's name, description, policy and parameter schema, for the prompt.

        ``names`` lists only those tools (the ones active in a step), in chain order.
        """
        config = self.config
        offered = config.offered
        tools: Iterable[AnyTool] = offered.values()
        if names is not None:
            wanted = set(names)
            if len(wanted) <= _FEW:
                # A step showing a few tools of many (ToolSearch's two of 200) picks them
                # by name instead of filtering every tool; ``names`` gives chain order.
                order = config.names
                tools = [offered[name] for name in sorted(wanted & offered.keys(), key=order.index)]
            else:
                tools = [tool for tool in tools if tool.name in wanted]
        # Each tool's entry is made once: compacting and writing a schema costs far more
        # than checking that the entry is still the tool's (the same tool object,
        # description, policy and input schema object: a codec keeps its schema, an MCP
        # tool listed anew gets a new one). A prompt_schema override that changes while
        # the input schema object stays the same is not followed.
        listing = self._listing
        entries: list[str] = []
        for tool in tools:
            known = listing.get(tool.name)
            if (
                known is None
                or known[0] is not tool
                or known[1] is not tool.input_schema()
                or known[2] != tool.description
                or known[3] != tool.policy
            ):
                known = self._list(tool)
            entries.append(known[4])
        return "\n\n".join(entries)

    def _list(self, tool: AnyTool) -> tuple[AnyTool, object, str, str, str]:
        """``tool``'s entry of the listing, made and kept (see ``available_tools_prompt``)."""
        lines = [f"- {tool.name}: {tool.description.strip()}"]
        if tool.policy.strip():
            lines.append(_indent("Policy: " + tool.policy.strip(), 2))
        lines.append("  Parameters:")
        lines.append(_indent(self.call_syntax.schema_text(tool.prompt_schema()), 4))
        made = (tool, tool.input_schema(), tool.description, tool.policy, "\n".join(lines))
        self._listing[tool.name] = made
        return made

    # -- stage 1: reading -------------------------------------------------------------

    def parse_calls(
        self, content: str, text_format: TextFormat | None = None
    ) -> list[ToolCall | str]:
        """The calls in ``content``; a string per item that is not a call.

        Raises ``ToolCallParseError`` when the content is not calls at all.
        """
        return self._read(self.config, content, text_format)

    def _read(
        self, config: ChainConfig, content: str, text_format: TextFormat | None
    ) -> list[ToolCall | str]:
        syntax, tools, limit = self.call_syntax, config.tools, config.max_calls
        try:
            if self._subsection:
                fmt = text_format if text_format is not None else XMLFormat()
                nested = fmt.parse_nested(content, [self._subsection])
                blocks = next(iter(nested.values()), None)
                if blocks:
                    return [i for block in blocks for i in syntax.read(block, tools, limit)]
            return syntax.read(content, tools, limit)
        except ToolCallParseError:
            raise
        except Exception as error:  # the parsers' own guards should make this unreachable
            _log.exception("reading tool calls failed unexpectedly")
            raise ToolCallParseError(
                f"tool calls could not be read ({type(error).__name__}); write them as "
                f"{syntax.label} in the documented shape"
            ) from error

    # -- execution -------------------------------------------------------------------

    async def execute(
        self, ctx: ExecutionContext, content: str, text_format: TextFormat
    ) -> ToolChainResult:
        """Parse, run (concurrently) and format the calls in ``content``.

        ``text`` of the result is the observation, already wrapped by
        ``text_format.wrap_observation``; ``raw`` holds each call's typed output or
        error, in call order. Raises ``ToolCallParseError`` when the content is not
        tool calls at all; every other failure (unknown tool, invalid arguments, a
        tool that raises, hangs or returns junk, a hook that fails, a limit) is
        reported per call, in ``text`` and in ``raw.errors``, and logged on the
        ``toolchain`` logger. Only ``KeyboardInterrupt`` from a tool propagates (it
        stops the program, as Python intends). A call that waits for a person's
        decision (``Tool.requires_approval``) is listed in ``pending``: see `resume`.
        """
        config = self.config  # the action's own, whatever is registered while it runs
        try:
            items = self._read(config, content, text_format)
        except ToolCallParseError as error:
            if ctx.events.has_subscribers(ToolCallParseFailed):
                ctx.events.emit(ToolCallParseFailed(ctx, content, str(error)))
            raise
        return await self._run(config, ctx, items, text_format)

    async def execute_calls(
        self, ctx: ExecutionContext, calls: Sequence[ToolCall], text_format: TextFormat
    ) -> ToolChainResult:
        """Run calls that arrived already structured (native API tool calling)."""
        return await self._run(self.config, ctx, list(calls), text_format)

    def execute_sync(
        self, ctx: ExecutionContext, content: str, text_format: TextFormat
    ) -> ToolChainResult:
        """``execute`` for synchronous code; not callable from a running event loop.

        >>> from formats import MarkdownFormat
        >>> from toolchain import JSONToolChain, tool
        >>> @tool
        ... def ping() -> str:
        ...     '''Check the service is up.'''
        ...     return "pong"
        >>> chain = JSONToolChain().register_tool(ping)
        >>> print(chain.execute_sync(ExecutionContext(), '{"tool": "ping"}', MarkdownFormat()).text)
        # observation
        <BLANKLINE>
        ## ping
        pong
        """
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return run_sync(self.execute(ctx, content, text_format), grace=self.cancel_grace)
        raise ToolchainStateError("execute_sync() was called inside an event loop; await execute()")

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
        planned = plan(ctx, items, config.max_calls)
        if len(planned) == 1:  # the common case: driven in this task, no task of its own
            begun = begin_alone(config, ctx, planned[0])
            outcomes = [begun if isinstance(begun, Outcome) else await begun]
        else:
            outcomes = await run_action(config, ctx, planned)
        reserved = self._reserved_names(config, text_format)
        result = assemble(config, outcomes, text_format, reserved)
        for error in result.raw.errors:
            if error is not None and error.kind == "held":  # calls wait for a person
                return hold(config, ctx, outcomes, result, reserved)
        return result

    async def resume(
        self,
        ctx: ExecutionContext,
        result: ToolChainResult,
        decisions: Mapping[str, Approval],
        text_format: TextFormat,
    ) -> ToolChainResult:
        """The action of ``result`` with its held calls decided: ``decisions`` maps the
        call ids of ``result.pending`` to ``Approval.granted()`` or
        ``Approval.denied(reason)``.

        Each approved call runs with the arguments that were reviewed (its input as
        validated then: nothing is read again from the call); each denied one fails with
        the reason (``refused``), which the model reads. The result is the whole
        action's, each call in its place; calls left undecided stay in its ``pending``.
        Raises ``ApprovalError``, approving nothing, when any decision is refused: an
        unknown call id, a value that is not an ``Approval``, a decision bound to another
        call, run or arguments (``ApprovalRequest.approve``), held calls edited since,
        or an action resumed already (each resumes once, in the run ``ctx`` that held
        it, in this process).

        >>> from formats import XMLFormat
        >>> from toolchain import Approval, ExecutionContext, JSONToolChain, tool
        >>> @tool(requires_approval=True)
        ... def wipe(disk: str) -> str:
        ...     '''Erase a disk.'''
        ...     return f"{disk} erased"
        >>> chain, ctx, fmt = JSONToolChain().register_tool(wipe), ExecutionContext(), XMLFormat()
        >>> held = chain.execute_sync(ctx, '{"tool": "wipe", "args": {"disk": "sdb"}}', fmt)
        >>> held.raw.errors[0].kind, [request.call_id for request in held.pending]
        ('held', ['call_1'])
        >>> no = chain.resume_sync(ctx, held, {"call_1": Approval.denied("backups first")}, fmt)
        >>> no.raw.errors[0].message, no.pending
        ('wipe was not approved: backups first', ())
        """
        return await resume(ctx, result, decisions, text_format)

    def resume_sync(
        self,
        ctx: ExecutionContext,
        result: ToolChainResult,
        decisions: Mapping[str, Approval],
        text_format: TextFormat,
    ) -> ToolChainResult:
        """``resume`` for synchronous code; not callable from a running event loop."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            work = self.resume(ctx, result, decisions, text_format)
            return run_sync(work, grace=self.cancel_grace)
        raise ToolchainStateError("resume_sync() was called inside an event loop; await resume()")

    def _reserved_names(self, config: ChainConfig, text_format: TextFormat) -> frozenset[str]:
        """Section names an observation must not use, lower-cased: the format's own, the
        chain's, and those agents read whatever the format registered."""
        sections = text_format.sections
        cached = self._reserved
        if cached is not None and cached[0]() is text_format and cached[1] == len(sections):
            return cached[2]
        names = frozenset(
            {section.name.lower() for section in sections} | AGENT_SECTIONS | {config.section}
        )
        try:
            # The format weakly: an agent registers this chain as the format's action
            # section, and the two would be a cycle (an agent built per request, with all
            # it holds, left for the garbage collector).
            self._reserved = (weakref.ref(text_format), len(sections), names)
        except TypeError:  # a format of one's own with __slots__ and no __weakref__
            self._reserved = None
        return names


def narrow_chain(chain: ToolChain, active: Sequence[str]) -> ToolChain:
    """``chain`` with only the ``active`` tools callable, unchanged itself: ``chain``
    when every tool is active, ``chain.narrowed(active)`` for a library chain, else a
    wrapper doing the same for a chain of one's own. A loop runs a step's calls on it
    when the step narrowed its tools (both agents do).

    >>> from toolchain import JSONToolChain
    >>> chain = JSONToolChain()
    >>> narrow_chain(chain, []) is chain  # no tools at all: nothing to narrow
    True
    """
    if isinstance(chain, ToolChainBase):
        return chain.narrowed(active)
    tools = chain.tools
    if all(name in active for name in tools):
        return chain
    return Narrowed(chain, tuple(active))


def _indent(text: str, spaces: int) -> str:
    pad = " " * spaces
    return "\n".join(pad + line if line else line for line in text.splitlines())
