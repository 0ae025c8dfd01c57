"""What a run reports it saved (``AgentResult.savings``) against what it measurably saved.

Each task of ``benchmarks.pass_by_reference`` (the relay's prompt cases, the weather
flow with ``ToolVariables``) and the 60-tool task of ``benchmarks.discovery_tokens``
runs twice on its scripted model, with the extension and without it, on both agents.
"measured" is the difference of the input tokens of every request of the two runs,
counted as ``pass_by_reference`` counts them (each message's text and calls, native
tool specs as JSON, summed over the requests); "reported" is the run's own
``savings[name].net`` (``kept_out - cost``), with ``kept_out`` and ``cost`` beside it.

Target (reported, never asserted): the reported net within one token per request of
the two runs of the measured difference. The extension's pieces are counted apart
(an output, a reference, a definition, a guide) while a request is one text, and o200k
may merge a character at a piece's edge with its neighbour. Reference ids are random,
so a figure may move by a token or two between runs.

Run alone with ``python -m benchmarks.reported_savings``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agents import AgentResult, ReActAgent, ToolCallingAgent
from agents.models import ScriptedModel
from benchmarks._timing import Settings, render_table, verdict
from toolchain import Extension, JSONToolChain

__all__ = ["discovery_rows", "reference_rows", "report", "run"]

HEADERS = [
    "task",
    "agent (mode)",
    "extension",
    "requests without / with",
    "measured",
    "kept out",
    "cost",
    "reported net",
    "gap",
    "within 1 / request",
]


@dataclass(frozen=True, slots=True)
class Pair:
    """One task's two runs: the input tokens without and with the extension."""

    task: str
    mode: str
    extension: str
    without: int
    with_: int
    requests: tuple[int, int]
    result: AgentResult[Any]

    def row(self) -> list[str]:
        saved = self.result.savings[self.extension]
        measured = self.without - self.with_
        gap = saved.net - measured
        agent = "ToolCallingAgent (native)" if self.mode == "native" else "ReActAgent (text)"
        return [
            self.task,
            agent,
            self.extension,
            f"{self.requests[0]} / {self.requests[1]}",
            f"{measured:,}",
            f"{saved.kept_out:,}",
            f"{saved.cost:,}",
            f"{saved.net:,}",
            f"{gap:+d}",
            verdict(abs(gap) <= sum(self.requests)),
        ]


def _agent(
    mode: str, model: ScriptedModel, chain: JSONToolChain, extensions: list[Extension]
) -> ReActAgent[str] | ToolCallingAgent[str]:
    if mode == "native":
        return ToolCallingAgent(model, tool_chain=chain, extensions=extensions)
    return ReActAgent(model, tool_chain=chain, extensions=extensions)


def reference_rows() -> list[Pair]:
    """The relay's prompt cases and the weather flow (``benchmarks.pass_by_reference``)."""
    from benchmarks._reference_tasks import TASKS, new_world
    from benchmarks.pass_by_reference import MODES, Player, Tokens

    count = Tokens()
    pairs: list[Pair] = []
    for task in TASKS:
        for mode in MODES:
            runs: list[tuple[int, int, AgentResult[Any]]] = []
            extension: Extension | None = None
            for by_reference in (False, True):
                world = new_world(task.toolset)
                extensions = [task.extension()] if by_reference else []
                extension = extensions[0] if extensions else extension
                chain = JSONToolChain(extensions=extensions)
                for each in world.tools():
                    chain.register_tool(each)
                model = ScriptedModel(Player(mode, task.script(by_reference), count))
                result = _agent(mode, model, chain, extensions).run_sync(task.prompt)
                runs.append((count.requests(model), len(model.requests), result))
            assert extension is not None
            (without, n_without, _), (with_, n_with, result) = runs
            pairs.append(
                Pair(task.name, mode, extension.name, without, with_, (n_without, n_with), result)
            )
    return pairs


def discovery_rows() -> list[Pair]:
    """The 60-tool CMS task (``benchmarks.discovery_tokens``), every tool vs ToolSearch."""
    from benchmarks._cms_tools import cms_info, cms_tools
    from benchmarks.discovery_tokens import TASK, Player
    from benchmarks.pass_by_reference import Tokens
    from toolchain.discovery import ToolIndex, ToolSearch

    count = Tokens()
    pairs: list[Pair] = []
    for mode in ("text", "native"):
        runs: list[tuple[int, int, AgentResult[Any]]] = []
        for discovery in (False, True):
            tools = cms_tools()
            chain = JSONToolChain()
            extensions: list[Extension] = []
            if discovery:
                extensions.append(ToolSearch(ToolIndex(tools, cms_info(tools)), defer=True))
            else:
                for each in tools:
                    chain.register_tool(each)
            model = ScriptedModel(Player(mode, discovery))
            result = _agent(mode, model, chain, extensions).run_sync(TASK)
            runs.append((count.requests(model), len(model.requests), result))
        (without, n_without, _), (with_, n_with, result) = runs
        pairs.append(
            Pair("cms 60 tools", mode, "tool_search", without, with_, (n_without, n_with), result)
        )
    return pairs


def report(pairs: list[Pair]) -> None:
    """The table of reported against measured savings, and the verdict."""
    print("AgentResult.savings against the measured difference of the runs with and without")
    print("the extension (o200k input tokens over every request; gap = reported - measured)")
    print(render_table(HEADERS, [pair.row() for pair in pairs], "lllrrrrrrl"))
    worst = max(
        abs(p.result.savings[p.extension].net - (p.without - p.with_)) / sum(p.requests)
        for p in pairs
    )
    print(
        f"reported savings: at worst {worst:.2f} tokens per request from the measured "
        f"difference; target <= 1: {verdict(worst <= 1)}"
    )
    print()


def run(settings: Settings) -> None:
    """Both tables: the reference tasks and the discovery task."""
    del settings  # token counts do not depend on timing settings
    print("== Reported savings: AgentResult.savings against measured runs ==")
    report(reference_rows())
    report(discovery_rows())


if __name__ == "__main__":
    from benchmarks._cli import run_alone

    run_alone(run, "python -m benchmarks.reported_savings")
