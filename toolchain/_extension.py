"""``Extension``: one object that adds a capability to runs, on the one seam they share.

An extension may contribute, all optional: tools, tool hooks (installed on each run's
context, in order), a prompt section refreshed every step, and a filter on the text
the model writes (streamed and final). Chains and agents take ``extensions=[...]``;
each extension is installed once per run context, and what it keeps lives in that
context's ``state`` (scoped to the run, or to the conversation when passed on).

Subclass ``Extension`` and override what you need:

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
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from toolchain._context import ExecutionContext, StateKey
from toolchain._redact import logger

_log = logger("toolchain")

if TYPE_CHECKING:
    from toolchain._tool import Tool

__all__ = ["Extension", "TextFilter", "install_extensions", "installed_extensions"]


@runtime_checkable
class TextFilter(Protocol):
    """Rewrites the text the model writes, as it streams: ``feed`` each piece, then
    ``flush`` once at the end. What they return, joined, is the text shown."""

    def feed(self, chunk: str) -> str: ...

    def flush(self) -> str: ...


class Extension(Protocol):
    """What an extension may contribute; every part is optional (see the module text).

    ``name`` labels it in logs and prompts. ``install`` runs once per run context:
    add tool hooks (``ctx.hooks.add``) and run-scoped state there. ``instructions``
    is fixed guidance an agent adds to its system prompt. ``prompt_section``
    is asked before every model call; a non-empty text is shown to the model with the
    latest message of that call (never stored in the conversation, so the prompt's
    earlier messages stay byte-identical and cacheable). ``text_filter`` gives a
    fresh filter for the model's text of one reply.
    """

    name: str

    def tools(self) -> Sequence[Tool[Any, Any]]:
        """Tools this extension adds to the chain."""
        return ()

    def install(self, ctx: ExecutionContext) -> None:
        """Set up this run: hooks on ``ctx.hooks``, state in ``ctx.state``."""
        return

    def instructions(self) -> str:
        """Fixed guidance for the system prompt (``""``: none); agents add it once."""
        return ""

    def prompt_section(self, ctx: ExecutionContext) -> str:
        """Text for the model at this step (``""``: nothing)."""
        return ""

    def text_filter(self, ctx: ExecutionContext) -> TextFilter | None:
        """A filter for the model's text in this run, or None."""
        return None

    def save_state(self, ctx: ExecutionContext) -> object | None:
        """What this run leaves for the rest of its conversation, as plain JSON data
        (None: nothing). Agents put it in ``AgentResult.extension_state``."""
        return None

    def load_state(self, ctx: ExecutionContext, state: object) -> None:
        """Take up what an earlier run of the conversation saved (after ``install``)."""
        return


_INSTALLED = StateKey[tuple[Extension, ...]]("toolchain.extensions")
_CARRIED = StateKey[dict[str, Extension]]("toolchain.extensions.carried")
"""name → an extension a child run installed, whose state the outermost run keeps."""
_UNCLAIMED = StateKey[dict[str, object]]("toolchain.extensions.unclaimed")
"""name → a restored state no extension of the run took up (yet): passed on as it is."""


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


def keep_with_conversation(ctx: ExecutionContext, extension: Extension) -> None:
    """Keep ``extension``'s conversation state with the outermost run of ``ctx``.

    For an extension whose state must outlive a child run (a sub-agent's): held
    approvals. Installed on a child context, it is saved (``save_state``) in the
    outermost run's ``extension_state`` and restored (``load_state``) from it, both
    with the outermost run's context, unless that run has an extension of the same
    name, which then keeps the state itself. A no-op on a context without a parent.
    """
    root = ctx
    while root.parent is not None:
        root = root.parent
    if root is ctx or any(e.name == extension.name for e in installed_extensions(root)):
        return
    carried = root.state.setdefault(_CARRIED, dict)
    if extension.name in carried:
        return
    carried[extension.name] = extension
    unclaimed = root.state.get(_UNCLAIMED)
    if unclaimed is not None and extension.name in unclaimed:
        _load(root, extension, unclaimed.pop(extension.name))


def saved_state(ctx: ExecutionContext, extensions: Sequence[Extension]) -> dict[str, object]:
    """extension name → what it saved for the conversation (those that saved anything).

    An extension written without ``save_state`` (the protocol's methods are optional
    for classes that do not inherit from ``Extension``) saves nothing. A failing one is
    logged and skipped: the run's result matters more than its carry-over. Besides
    ``extensions``, it holds the states of extensions a child run kept with this one
    (``keep_with_conversation``), and passes on unchanged the restored states no
    extension of the run took up.
    """
    saved: dict[str, object] = {}
    carried = ctx.state.get(_CARRIED)
    for extension in (*extensions, *(carried.values() if carried else ())):
        save = getattr(extension, "save_state", None)
        if save is None or extension.name in saved:
            continue
        try:
            state = save(ctx)
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
    A state no extension of ``extensions`` has a name for waits for one a child run
    installs (``keep_with_conversation``), and is passed on by ``saved_state`` if none
    does.
    """
    names = {extension.name for extension in extensions}
    ctx.state.set(_UNCLAIMED, {name: s for name, s in state.items() if name not in names})
    for extension in extensions:
        if extension.name in state:
            _load(ctx, extension, state[extension.name])


def _load(ctx: ExecutionContext, extension: Extension, state: object) -> None:
    load = getattr(extension, "load_state", None)
    if load is None:
        return
    try:
        load(ctx, state)
    except Exception:
        _log.exception("extension %s failed to load its state", extension.name)
