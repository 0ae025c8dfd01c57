"""Toolsets: the tools (and extensions, and persona) a prompt case runs against.

A case names its toolset with the ``toolset`` key:

- ``relay`` (the default): the tool-context-relay PoC's simulated tools,
  ``yt_transcribe``, ``deep_check``, ``google_drive_write_file`` and ``get_page``,
  under a ``ContextRelay`` (2,000 characters) in the run's boxing mode, with or
  without its few-shot examples. Video ``123`` has a long transcript (boxed), any
  other id a short one; every page is a large HTML document with two images.
- ``airline``: the SkyWings demo's tools on a fresh data set, with its persona.
- ``package.module:factory``: your own, a `ToolsetFactory`.

Each run gets a new toolset (fresh data, a fresh store). Reference ids come from a
`SeededStore` seeded with the case id, so a run's requests repeat exactly and
recordings replay.

>>> toolset = resolve_toolset("relay")(ToolsetOptions(seed="case1"))
>>> sorted(tool.name for tool in toolset.tools)
['deep_check', 'get_page', 'google_drive_write_file', 'yt_transcribe']
>>> [extension.name for extension in toolset.extensions]
['context_relay']
"""

from __future__ import annotations

import datetime as dt
import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from agents._errors import AgentError
from agents.evals._store import SeededStore
from agents.evals.matchers import MatcherSpecError, import_object
from toolchain import Extension, JSONToolChain, Tool, tool
from toolchain.relay import ContextRelay
from toolchain.runtime import describe_exception

__all__ = [
    "BUILTIN_TOOLSETS",
    "DEFAULT_TODAY",
    "LONG_TRANSCRIPT",
    "PAGE",
    "SHORT_TRANSCRIPT",
    "RelayWorld",
    "Toolset",
    "ToolsetError",
    "ToolsetFactory",
    "ToolsetOptions",
    "airline_toolset",
    "relay_toolset",
    "resolve_toolset",
]

DEFAULT_TODAY: Final = dt.date(2026, 3, 5)
"""The date system prompts show unless a case or toolset says otherwise: fixed, so that
a recording made today still replays tomorrow."""

LONG_TRANSCRIPT: Final = " ".join(f"word{n}" for n in range(8000)) + " and the last number is 4242."
SHORT_TRANSCRIPT: Final = "Hello and welcome to a short video."
PAGE: Final = (
    "<html><body>"
    + "".join(f"<p>paragraph {n} " + "filler " * 40 + "</p>\n" for n in range(300))
    + '<img src="/cat.png" alt="cat">\n<img src="/dog.png" alt="dog">\n</body></html>'
)
RELAY_THRESHOLD: Final = 2_000


class ToolsetError(AgentError, ValueError):
    """A ``toolset`` name that names no toolset."""


@dataclass(frozen=True, slots=True)
class ToolsetOptions:
    """What a run asks of its toolset: the relay's boxing mode, few-shot examples, and
    ``seed`` (the case id) for repeatable reference ids."""

    boxing: Literal["opaque", "json"] = "opaque"
    few_shot: bool = True
    seed: str = ""


@dataclass(frozen=True, slots=True)
class Toolset:
    """Tools, extensions and persona for one run; ``today`` is the prompt's date."""

    tools: tuple[Tool[Any, Any], ...]
    extensions: tuple[Extension, ...] = ()
    behavior: str = ""
    critical_rules: str = ""
    today: dt.date = DEFAULT_TODAY
    uses_relay: bool = False
    state: object = field(default=None, compare=False)
    """Whatever the tools act on (the relay world, the airline data), for checks."""


ToolsetFactory = Callable[[ToolsetOptions], Toolset]


@dataclass
class RelayWorld:
    """The PoC's simulated tools, recording every argument they really received.

    >>> world = RelayWorld()
    >>> transcribe = world.tools()[0]
    >>> transcribe.name, len(LONG_TRANSCRIPT) > RELAY_THRESHOLD
    ('yt_transcribe', True)
    """

    received: dict[str, list[dict[str, object]]] = field(default_factory=lambda: {})

    def tools(self) -> tuple[Tool[Any, Any], ...]:
        world = self

        @tool
        def yt_transcribe(video_id: str) -> str:
            """Transcribe a YouTube video by its video_id; returns the transcript text."""
            world.record("yt_transcribe", video_id=video_id)
            return LONG_TRANSCRIPT if video_id == "123" else SHORT_TRANSCRIPT

        @tool
        def deep_check(text: str) -> str:
            """Analyse a text in depth (Deep Check); returns a short analysis."""
            world.record("deep_check", text=text)
            return f"Analysis: {len(text.split())} words, nothing alarming."

        @tool
        def google_drive_write_file(file_content: str, file_name: str) -> str:
            """Write a file to Google Drive: its content and its name."""
            world.record("google_drive_write_file", file_content=file_content, file_name=file_name)
            return f"saved {file_name}"

        @tool
        def get_page(url: str) -> str:
            """Fetch a web page and return its HTML."""
            world.record("get_page", url=url)
            return PAGE

        return (yt_transcribe, deep_check, google_drive_write_file, get_page)

    def chain(self) -> JSONToolChain:
        """A JSON tool chain holding these tools."""
        chain = JSONToolChain()
        for each in self.tools():
            chain.register_tool(each)
        return chain

    def record(self, name: str, **args: object) -> None:
        self.received.setdefault(name, []).append(args)


def relay_toolset(options: ToolsetOptions) -> Toolset:
    """The relay PoC's world under a ``ContextRelay`` (see the module text)."""
    world = RelayWorld()
    relay = ContextRelay(
        threshold=RELAY_THRESHOLD,
        mode=options.boxing,
        few_shot=options.few_shot,
        store=SeededStore(options.seed),
    )
    return Toolset(world.tools(), (relay,), uses_relay=True, state=world)


def airline_toolset(options: ToolsetOptions) -> Toolset:
    """The SkyWings demo's tools on fresh data, with its behavior and critical rules."""
    from agents.demo import BEHAVIOR, CRITICAL_RULES, DEMO_TODAY, AirlineData
    from agents.demo.tools import airline_tools

    data = AirlineData.fresh()
    return Toolset(
        tuple(airline_tools(data)),
        behavior=BEHAVIOR,
        critical_rules=CRITICAL_RULES,
        today=DEMO_TODAY,
        state=data,
    )


BUILTIN_TOOLSETS: Final[Mapping[str, ToolsetFactory]] = {
    "relay": relay_toolset,
    "airline": airline_toolset,
}


def resolve_toolset(name: str) -> ToolsetFactory:
    """A built-in toolset's factory, or the one an import path names.

    >>> resolve_toolset("nope")
    Traceback (most recent call last):
    ...
    agents.evals.toolsets.ToolsetError: unknown toolset 'nope': use relay, airline or ...
    """
    builtin = BUILTIN_TOOLSETS.get(name)
    if builtin is not None:
        return builtin
    if ":" not in name and "." not in name:
        raise ToolsetError(
            f"unknown toolset {name!r}: use {', '.join(BUILTIN_TOOLSETS)} or package.module:factory"
        )
    try:
        found = import_object(name, "toolset")
    except MatcherSpecError as error:
        raise ToolsetError(error.message) from None
    if inspect.isbuiltin(found):
        # os:system and the like: never handed a ToolsetOptions to find out
        raise ToolsetError(
            f"toolset {name!r} is not a toolset factory: name a function that takes "
            "ToolsetOptions and returns a Toolset"
        )
    if not callable(found):
        raise ToolsetError(f"toolset {name!r} is not callable")

    def build(options: ToolsetOptions) -> Toolset:
        try:
            made = found(options)
        except Exception as error:  # the factory's own failure ends this run, not the others
            raise ToolsetError(f"toolset {name!r} failed: {describe_exception(error)}") from error
        if not isinstance(made, Toolset):
            raise ToolsetError(f"toolset {name!r} returned {type(made).__name__}, not a Toolset")
        return made

    return build


def describe_tools(tools: Sequence[Tool[Any, Any]]) -> list[tuple[str, str, dict[str, object]]]:
    """(name, description, argument schema) of each tool, for ``--print-tools``."""
    return [(each.name, each.description, each.input_schema()) for each in tools]
