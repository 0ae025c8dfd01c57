"""``Extension``: one object that adds a capability to runs, on the one seam they share.

An extension may contribute, all optional: tools, tool hooks (installed on each run's
context, in order), fixed instructions, a prompt section refreshed every step, a filter
on the text the model writes (streamed and final), a change to each step's request
(``before_step``), a check that holds an answer back while work is left
(``check_answer``), and state kept with the conversation (``save_state`` /
``load_state``). Chains and agents take ``extensions=[...]``; each extension is
installed once per run context, and what it keeps lives in that context's ``state``
(scoped to the run, or to the conversation when passed on).

Every hook is declared on the base class with a no-op default, as pydantic-ai's
``AbstractCapability`` declares its hooks: subclass ``Extension`` and override what you
need. What an extension leaves at its default costs a run nothing: agents look once,
when they are built, at which hooks its class overrides, and call only those. An object
that does not inherit from ``Extension`` is refused there (``TypeError``), since it
would lack the defaults.

>>> from toolchain import ExecutionContext, JSONToolChain, ToolHook
>>> class Audit(Extension):
...     name = "audit"
...     def install(self, ctx: ExecutionContext) -> None:
...         ctx.hooks.add(ToolHook())
...     def prompt_section(self, ctx: ExecutionContext) -> str:
...         return "Every call is audited."
>>> chain = JSONToolChain(extensions=[Audit()])
>>> ctx = ExecutionContext()
>>> install_extensions(ctx, chain.extensions)
>>> install_extensions(ctx, chain.extensions)  # once per context, however often asked
>>> [e.name for e in installed_extensions(ctx)]
['audit']
>>> JSONToolChain(extensions=[object()])  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
toolchain._errors.ToolchainTypeError: JSONToolChain(): extensions= takes toolchain.Extension ...
"""

from __future__ import annotations

import operator
from collections.abc import Awaitable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol, Self, runtime_checkable

from toolchain._context import ExecutionContext, StateKey
from toolchain._errors import ToolchainTypeError
from toolchain._redact import logger

_log = logger("toolchain")

if TYPE_CHECKING:
    from toolchain._tool import Tool

__all__ = [
    "Extension",
    "StepView",
    "TextFilter",
    "checked_extensions",
    "install_extensions",
    "installed_extensions",
]


@runtime_checkable
class TextFilter(Protocol):
    """Rewrites the text the model writes, as it streams: ``feed`` each piece, then
    ``flush`` once at the end. What they return, joined, is the text shown."""

    def feed(self, chunk: str) -> str: ...

    def flush(self) -> str: ...


class StepView(Protocol):
    """The model call a step is about to make, as an extension's ``before_step`` sees it.

    The toolchain knows no agent, so it names only what an extension reads and changes
    of an agent's step request (``agents.StepRequest`` is one): the step's number
    (``index``, from 1), the tools the model may call (``tools``), the ones it is told
    about when they differ (``described``; None: the same), and how the agent calls
    tools (``protocol``: ``"text"`` or ``"native"``). ``replace`` returns a copy with
    some of them changed; the step itself is never changed.

    >>> class FirstToolOnly(Extension):
    ...     name = "first_tool_only"
    ...     def before_step(self, ctx: ExecutionContext, request: StepView) -> StepView:
    ...         return request.replace(tools=request.tools[:1])
    """

    @property
    def index(self) -> int: ...

    @property
    def tools(self) -> tuple[str, ...]: ...

    @property
    def described(self) -> tuple[str, ...] | None: ...

    @property
    def protocol(self) -> Literal["text", "native"]: ...

    def replace(
        self, *, tools: tuple[str, ...] = ..., described: tuple[str, ...] | None = ...
    ) -> Self:
        """A copy of this step with the tools given changed (the others as they are)."""
        ...


class Extension:
    """What an extension may contribute; every hook has a no-op default (module text).

    ``name`` labels it in logs and prompts, and keys its ``extension_state``: set it in
    the class or in ``__init__``. Override any of the hooks below; the ones left as
    they are cost nothing.
    """

    name: str

    def tools(self) -> Sequence[Tool[Any, Any]]:
        """Tools this extension adds to the chain (offered beside the chain's own)."""
        return ()

    def install(self, ctx: ExecutionContext) -> None:
        """Set up this run: hooks on ``ctx.hooks``, state in ``ctx.state``. Runs once
        per run context."""
        return

    def instructions(self) -> str:
        """Fixed guidance for the system prompt (``""``: none); agents add it once."""
        return ""

    def prompt_section(self, ctx: ExecutionContext) -> str:
        """Text for the model at this step (``""``: nothing). Asked before every model
        call; shown with the latest message of that call and never stored in the
        conversation, so the prompt's earlier messages stay byte-identical (cacheable)."""
        return ""

    def text_filter(self, ctx: ExecutionContext) -> TextFilter | None:
        """A fresh filter for the model's text of one reply, or None."""
        return None

    def before_step(
        self, ctx: ExecutionContext, request: StepView
    ) -> StepView | Awaitable[StepView | None] | None:
        """Change the step about to be made: return ``request.replace(...)``, or None
        to leave it as it is (plain or ``async``). Agents run it before their
        ``step_hooks``, in the order of their extensions."""
        return None

    def check_answer(self, ctx: ExecutionContext) -> str | None:
        """Hold back an answer while work is left: the feedback that says what is left,
        or None to let the answer end the run."""
        return None

    def save_state(self, ctx: ExecutionContext) -> object | None:
        """What this run leaves for the rest of its conversation, as plain JSON data
        (None: nothing). Agents put it in ``AgentResult.extension_state``."""
        return None

    def load_state(self, ctx: ExecutionContext, state: object) -> None:
        """Take up what an earlier run of the conversation saved (after ``install``)."""
        return


def checked_extensions(given: Iterable[object], callee: str) -> tuple[Extension, ...]:
    """``given`` as extensions, or a ``TypeError`` naming the first that is not one.

    An object that only looks like an extension would lack the hooks it does not define
    (``Extension`` declares each with its default), so it is refused where it is given,
    not at some later step.

    >>> checked_extensions([Extension()], "Agent()")  # doctest: +ELLIPSIS
    (<toolchain._extension.Extension object at ...>,)
    """
    extensions: list[Extension] = []
    for extension in given:
        if not isinstance(extension, Extension):
            kind = type(extension).__name__
            raise ToolchainTypeError(
                f"{callee}: extensions= takes toolchain.Extension objects, and {kind} is "
                f"not one: declare it as `class {kind}(Extension):` (from toolchain import "
                "Extension), which gives it a no-op default for every hook it leaves out"
            )
        extensions.append(extension)
    return tuple(extensions)


_INSTALLED = StateKey[tuple[Extension, ...]]("toolchain.extensions")
_UNCLAIMED = StateKey[dict[str, object]]("toolchain.extensions.unclaimed")
"""name → a restored state no extension of the run took up: passed on as it is."""


def install_extensions(ctx: ExecutionContext, extensions: Sequence[Extension]) -> None:
    """Install each of ``extensions`` on ``ctx`` unless it already is (by identity)."""
    if not extensions:
        return
    installed = ctx.state.get(_INSTALLED, ())
    if len(installed) == len(extensions) and all(map(operator.is_, installed, extensions)):
        return  # every call of a run after its first: nothing to do
    for extension in extensions:
        if any(extension is done for done in installed):
            continue
        extension.install(ctx)
        installed = (*installed, extension)
        ctx.state.set(_INSTALLED, installed)


def installed_extensions(ctx: ExecutionContext) -> tuple[Extension, ...]:
    """The extensions installed on ``ctx``, in the order they were installed."""
    return ctx.state.get(_INSTALLED, ())


def saved_state(ctx: ExecutionContext, extensions: Sequence[Extension]) -> dict[str, object]:
    """extension name → what it saved for the conversation (those that saved anything).

    An extension that keeps ``save_state``'s default saves nothing. A failing one is
    logged and skipped: the run's result matters more than its carry-over. The
    restored states no extension of the run took up are passed on unchanged.
    """
    saved: dict[str, object] = {}
    for extension in extensions:
        if extension.name in saved:
            continue
        try:
            state = extension.save_state(ctx)
        except Exception:
            _log.exception("extension %s failed to save its state", extension.name)
            continue
        if state is not None:
            saved[extension.name] = state
    unclaimed = ctx.state.get(_UNCLAIMED)
    for name, state in (unclaimed or {}).items():
        saved.setdefault(name, state)
    return saved


def restore_state(
    ctx: ExecutionContext, extensions: Sequence[Extension], state: Mapping[str, object]
) -> None:
    """Hand each extension what it saved in an earlier run (``saved_state``).

    A state an extension cannot take up (edited, or saved by another version) is logged
    and skipped, as a failing save is: the run starts without it rather than not at all.
    A state no extension of ``extensions`` has a name for is passed on by ``saved_state``
    as it is (the next run may have that extension again).
    """
    names = {extension.name for extension in extensions}
    ctx.state.set(_UNCLAIMED, {name: s for name, s in state.items() if name not in names})
    for extension in extensions:
        if extension.name in state:
            _load(ctx, extension, state[extension.name])


def _load(ctx: ExecutionContext, extension: Extension, state: object) -> None:
    try:
        extension.load_state(ctx, state)
    except Exception:
        _log.exception("extension %s failed to load its state", extension.name)
