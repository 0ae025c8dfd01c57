"""Snapshot-test your tools: a pytest plugin, shipped with the library.

Install the extra (``[testing]``, which pulls in pytest and syrupy)
and pytest loads this module through its ``gent_testing`` entry point, next to syrupy's;
with ``PYTEST_DISABLE_PLUGIN_AUTOLOAD=1``, run ``pytest -p syrupy -p gent_testing``. Do
not also name it in ``pytest_plugins``: pytest refuses a plugin registered twice under
two names (where the entry point is missing, ``pytest_plugins = ["toolchain.testing"]``
in the root conftest loads it). It provides:

- the fixtures ``snapshot_md`` and ``snapshot_xml``: syrupy's ``snapshot`` storing each
  snapshot as one readable file, ``__snapshots__/<test_file>/<test_name>.md`` / ``.xml``;
- the fixture ``snapshot_observation``: the one of those two that suits a ``TextFormat``;
- ``run_tool(tool, args)``: one call of one tool on a fresh chain, synchronously;
- ``FIXED_DATE``, ``fixed_clock()`` and the fixture ``fixed_clock`` for deterministic
  agent runs. An agent puts today's date in its system prompt, so **an agent transcript
  snapshot must pass** ``clock=fixed_clock`` (``ReActAgent(..., clock=fixed_clock)``)
  or it changes every day.

``import toolchain`` never imports this module, pytest or syrupy. Where syrupy is not
installed the plugin still loads (pytest loads it wherever gent-py is installed), and
only the snapshot extensions and fixtures are unavailable.

>>> from toolchain import tool
>>> @tool
... def add(a: int, b: int) -> int:
...     '''Add two integers.'''
...     return a + b
>>> print(run_tool(add, {"a": 2, "b": 3}).text)
<observation>
<add>
5
</add>
</observation>

In a test file ``test_add.py`` (``pytest --snapshot-update`` writes the observation texts
to ``__snapshots__/test_add/test_add.md`` and ``.xml`` beside it; later runs compare)::

    def test_add(snapshot_md, snapshot_xml):
        assert run_tool(add, {"a": 2, "b": 3}, text_format=MarkdownFormat()).text == snapshot_md
        assert run_tool(add, {"a": 2, "b": 3}).text == snapshot_xml
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal, NoReturn

import msgspec
import yaml

from toolchain._errors import ToolchainTypeError, ToolchainValueError
from toolchain._extras import missing_extra, requires_extra

with requires_extra("testing", "toolchain.testing", "pytest"):
    import pytest

# The entry point is installed with every copy of the library, not only with the extra,
# so pytest loads this module wherever gent-py is installed. Without syrupy it must still
# import (or every pytest run would fail): then only the snapshot names are missing.
if TYPE_CHECKING:
    from syrupy.assertion import SnapshotAssertion
    from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode
    from syrupy.types import PropertyFilter, PropertyMatcher, SerializableData, SerializedData

    _HAS_SYRUPY = True
else:
    try:
        from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode
    except ModuleNotFoundError as error:
        if error.name is None or error.name.split(".")[0] != "syrupy":
            raise
        _HAS_SYRUPY = False
    else:
        _HAS_SYRUPY = True

from formats import MarkdownFormat, TextFormat, XMLFormat
from toolchain._context import ExecutionContext
from toolchain._observations import to_builtins
from toolchain._result import ToolChainResult
from toolchain._syntax._json import JSONToolChain
from toolchain._syntax._yaml import YAMLToolChain
from toolchain._tool import Tool
from toolchain.chain._base import ToolChain

__all__ = [
    "FIXED_DATE",
    "MarkdownSnapshotExtension",
    "XMLSnapshotExtension",
    "fixed_clock",
    "run_tool",
    "snapshot_extension_for",
    "snapshot_md",
    "snapshot_observation",
    "snapshot_xml",
]

# -- snapshot extensions ---------------------------------------------------------------


if TYPE_CHECKING or _HAS_SYRUPY:

    class _TextSnapshotExtension(SingleFileSnapshotExtension):
        """One snapshot per file, stored as the text itself (no syrupy markup)."""

        _write_mode = WriteMode.TEXT

        def serialize(
            self,
            data: SerializableData,
            *,
            exclude: PropertyFilter | None = None,
            include: PropertyFilter | None = None,
            matcher: PropertyMatcher | None = None,
        ) -> SerializedData:
            # A result object would be stored as its repr: ask for the text instead.
            if not isinstance(data, str):
                raise ToolchainTypeError(
                    f"a .{self.file_extension} snapshot holds text, not {type(data).__name__}; "
                    "compare the text itself, e.g. `result.text == snapshot_md`"
                )
            return data

    class MarkdownSnapshotExtension(_TextSnapshotExtension):
        """A syrupy extension storing each snapshot as one readable ``.md`` file.

        The file is ``__snapshots__/<test_file>/<test_name>.md`` next to the test file, and
        holds exactly the compared text. The ``snapshot_md`` fixture uses it; with syrupy's
        own ``snapshot`` fixture write ``snapshot.use_extension(MarkdownSnapshotExtension)``.

        >>> MarkdownSnapshotExtension.file_extension
        'md'
        """

        file_extension = "md"

    class XMLSnapshotExtension(_TextSnapshotExtension):
        """A syrupy extension storing each snapshot as one readable ``.xml`` file.

        The file is ``__snapshots__/<test_file>/<test_name>.xml`` next to the test file, and
        holds exactly the compared text. The ``snapshot_xml`` fixture uses it.

        >>> XMLSnapshotExtension.file_extension
        'xml'
        """

        file_extension = "xml"

else:

    def __getattr__(name: str) -> NoReturn:
        if name in ("MarkdownSnapshotExtension", "XMLSnapshotExtension"):
            raise missing_extra("syrupy", "testing", f"toolchain.testing.{name}")
        raise AttributeError(f"module 'toolchain.testing' has no attribute {name!r}")


def snapshot_extension_for(text_format: TextFormat) -> type[SingleFileSnapshotExtension]:
    """The snapshot extension whose files suit ``text_format``: ``.md`` or ``.xml``.

    Raises ``TypeError`` for a format that is neither ``MarkdownFormat`` nor ``XMLFormat``
    (subclasses included); pass one of the extensions to ``use_extension`` yourself then.

    >>> from formats import MarkdownFormat, XMLFormat
    >>> snapshot_extension_for(MarkdownFormat()).file_extension
    'md'
    >>> snapshot_extension_for(XMLFormat()) is XMLSnapshotExtension
    True
    """
    if not _HAS_SYRUPY:
        raise missing_extra("syrupy", "testing", "snapshot_extension_for")
    if isinstance(text_format, MarkdownFormat):
        return MarkdownSnapshotExtension
    if isinstance(text_format, XMLFormat):
        return XMLSnapshotExtension
    raise ToolchainTypeError(
        f"no snapshot extension for {type(text_format).__name__}; use "
        "snapshot.use_extension(MarkdownSnapshotExtension or XMLSnapshotExtension)"
    )


@pytest.fixture
def snapshot_md(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    """syrupy's ``snapshot``, storing each snapshot as one readable ``.md`` file.

    Example (a test)::

        def test_forecast(snapshot_md):
            result = run_tool(Forecast(), {"city": "Paris"}, text_format=MarkdownFormat())
            assert result.text == snapshot_md
    """
    return snapshot.use_extension(MarkdownSnapshotExtension)


@pytest.fixture
def snapshot_xml(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    """syrupy's ``snapshot``, storing each snapshot as one readable ``.xml`` file.

    Example (a test)::

        def test_forecast(snapshot_xml):
            assert run_tool(Forecast(), {"city": "Paris"}).text == snapshot_xml
    """
    return snapshot.use_extension(XMLSnapshotExtension)


@pytest.fixture
def snapshot_observation(
    snapshot: SnapshotAssertion,
) -> Callable[[TextFormat], SnapshotAssertion]:
    """A function giving the snapshot (``.md`` or ``.xml``) that suits a ``TextFormat``.

    For tests parametrised over formats. Example (a test)::

        @pytest.mark.parametrize("fmt", [MarkdownFormat(), XMLFormat()], ids=["md", "xml"])
        def test_forecast(fmt, snapshot_observation):
            result = run_tool(Forecast(), {"city": "Paris"}, text_format=fmt)
            assert result.text == snapshot_observation(fmt)
    """

    def for_format(text_format: TextFormat) -> SnapshotAssertion:
        return snapshot.use_extension(snapshot_extension_for(text_format))

    return for_format


# -- deterministic runs ----------------------------------------------------------------

FIXED_DATE = dt.date(2026, 1, 1)
"""The date ``fixed_clock`` returns: Thursday, 1 January 2026."""


def fixed_clock() -> dt.date:
    """Always ``FIXED_DATE``: pass ``clock=fixed_clock`` to an agent you snapshot.

    An agent's system prompt says "Today is <date> (<weekday>)." from its ``clock``,
    which defaults to ``date.today``; a transcript or prompt snapshot taken without
    ``clock=fixed_clock`` changes every day. The fixture ``fixed_clock`` returns this
    function, so a test can take it as an argument or import it.

    >>> fixed_clock()
    datetime.date(2026, 1, 1)

    Example (a test)::

        def test_transcript(fixed_clock, snapshot_md):
            agent = ReActAgent(ScriptedModel([...]), tool_chain=chain, clock=fixed_clock)
            assert agent.run_sync("Book AA100").transcript() == snapshot_md
    """
    return FIXED_DATE


@pytest.fixture(name="fixed_clock")
def fixed_clock_fixture() -> Callable[[], dt.date]:
    """The fixture ``fixed_clock``: the function ``fixed_clock`` (always ``FIXED_DATE``).

    Example (a test)::

        def test_prompt(fixed_clock, snapshot_xml):
            agent = ReActAgent(model, tool_chain=chain, clock=fixed_clock)
            assert agent.system_prompt() == snapshot_xml
    """
    return fixed_clock


# -- one call, synchronously -----------------------------------------------------------


def run_tool(
    tool: Tool[Any, Any],
    args: Mapping[str, object] | None = None,
    *,
    text_format: TextFormat | None = None,
    calls: Literal["json", "yaml"] = "json",
    ctx: ExecutionContext | None = None,
) -> ToolChainResult:
    """Run one call of ``tool`` with ``args`` on a fresh chain and return the result.

    The tool is registered on a new ``JSONToolChain`` (``calls="yaml"``: a
    ``YAMLToolChain``, so outputs are shown as YAML) and the call
    ``{"tool": tool.name, "args": args}`` is written in that syntax and executed with
    ``execute_sync`` in a fresh ``ExecutionContext`` (or ``ctx``). ``text_format`` (by
    default ``XMLFormat()``) wraps the observation. Errors are reported as the chain
    reports them, in ``result.text`` and ``result.raw.errors[0]``, so they can be
    snapshot too. Not callable inside a running event loop (an ``async def`` test):
    there, ``await chain.execute(...)``.

    >>> from formats import MarkdownFormat
    >>> from toolchain import tool
    >>> @tool
    ... def lookup(code: str) -> dict[str, str]:
    ...     '''Look a code up.'''
    ...     return {"code": code, "status": "active"}
    >>> print(run_tool(lookup, {"code": "0123"}, text_format=MarkdownFormat(), calls="yaml").text)
    # observation
    <BLANKLINE>
    ## lookup
    code: '0123'
    status: active
    >>> run_tool(lookup, {}).raw.errors[0] is not None
    True
    """
    if calls not in ("json", "yaml"):
        raise ToolchainValueError(f"calls must be 'json' or 'yaml', not {calls!r}")
    chain: ToolChain = JSONToolChain() if calls == "json" else YAMLToolChain()
    chain.register_tool(tool)
    call = {"tool": tool.name, "args": to_builtins(dict(args or {}))}
    if calls == "json":
        content = msgspec.json.encode(call).decode("utf-8")
    else:
        content = yaml.safe_dump([call], sort_keys=False, allow_unicode=True)
    return chain.execute_sync(
        ctx if ctx is not None else ExecutionContext(),
        content,
        text_format if text_format is not None else XMLFormat(),
    )
