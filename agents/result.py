"""The record of a run: each step (`StepResult`) and the final ``AgentResult``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Generic, Literal, TypeVar

from typing_extensions import deprecated

from agents._renamed import renamed_names
from agents.models import Message, ToolCallRequest, Usage
from toolchain import ApprovalRequest, TextContent, ToolChainResult
from toolchain.runtime import slot_init

__all__ = ["AgentResult", "Savings", "StepResult", "StopKind", "render_transcript"]

AnswerT = TypeVar("AnswerT")

StopKind = Literal["answer", "limit", "cancelled", "paused", "error"]
"""Why a run ended. ``paused``: something asked for a person's decision: calls held
for approval (``AgentResult.pending``: ``agent.resume`` goes on once they are decided),
or ``ctx.pause`` (continue the conversation once it is made)."""


@slot_init  # one per step: each slot set through its descriptor, frozen all the same
@dataclass(frozen=True, slots=True)
class StepResult:
    """One step of a run: its model call and what came of it (what the step's
    `StepRequest` led to; ``Iteration`` until this release).

    ``sections`` is the parsed output (empty when it had none, and for native tool
    calling but for the ``thinking`` a ``DialectToolChain`` read from the text);
    ``tool_calls`` the native calls the model made (or the chain read from its text);
    ``tool_results`` one ``ToolChainResult`` per action section (per turn of native
    calls); ``feedback`` the corrective text sent back when the output could not be
    used as written.

    >>> StepResult(1, "<answer>4</answer>", {"answer": ["4"]}).sections["answer"]
    ['4']
    """

    index: int
    output: str
    sections: Mapping[str, list[str]]
    tool_results: tuple[ToolChainResult, ...] = ()
    feedback: str = ""
    usage: Usage = field(default_factory=Usage)
    duration: float = 0.0
    tool_calls: tuple[ToolCallRequest, ...] = ()


@dataclass(frozen=True, slots=True)
class Savings:
    """What one extension did to a run's requests, in o200k tokens summed over every
    request the run sent (each request counted whole: no prompt cache assumed).

    ``kept_out``: for each piece of content the extension replaced, the tokens of what
    would have been sent less the tokens of what was sent instead, times the number of
    the run's requests that carried it. A tool message or a call's arguments stay in
    every request after their step; a tool's definition is left out of one request at
    a time. What each replaces:

    - ``ContextRelay``: an output boxed (the output, as the observation would have
      shown it, against its reference), and a reference passed in a call's arguments
      (the value, written as JSON, against the reference);
    - ``ToolSearch``: the definitions of the tools a request could call but did not
      describe (text: the prompt's listing; native: the specs), which every request
      would describe without it;
    - ``ToolVariables``: a variable named in a call's arguments (``$weather.temp``)
      against the value the tool got, written as JSON; and an output shown otherwise
      than the chain wrote it (the ``$name =`` beside it is a cost).

    ``cost``: the tokens the extension added. Its guide and its own tools' definitions
    in every request; its prompt section in each request that had one; the calls of
    its own tools and their results (``tool_search``, the relay's readers) in every
    later request; and a request whose reply called only its tools, counted whole with
    that step's messages: without the extension the run would not have taken that
    step (a search, a read of a boxed output), so nothing in it counts as kept out.
    ``net`` is what the run saved: ``kept_out - cost``, below 0 when the extension
    cost more than it saved.

    Tokens are counted as the benchmarks count a request: the text of each message and
    of its calls (name, arguments), and the native tool specs as JSON; the framing a
    provider adds per message is left out. The figure matches the difference of two
    runs of one scripted task, with and without the extension, to a token per request
    (o200k may merge characters across the edges of texts counted apart;
    ``tests/agents/test_savings.py``), assuming the model would have taken the same
    steps without it, copying what it now names. Not followed: a step hook that drops
    earlier messages (compaction; what it dropped still counts as carried), and an
    output the chain would have cut at ``max_output_chars`` (it counts whole).
    Counted only in runs with one of these extensions; a sub-agent's savings are added
    into its parent run's.

    Units: o200k tokens (the encoding of OpenAI's GPT-4o, GPT-4.1 and o-series models),
    whatever the model. ``AgentResult.usage.input_tokens`` is what the model reported,
    in its own units: a provider counts with its own tokenizer (Anthropic's, like most
    others', splits the same text into other tokens), adds a few tokens of framing per
    message and renders tool definitions its own way; ``ScriptedModel`` reports a
    quarter of the characters of the messages' text and leaves tool definitions out. So
    ``net`` is not a difference of ``usage.input_tokens``; read them side by side as two
    sizes. On the docs' example (docs/savings.md) ``usage.input_tokens`` is 986
    where the same three requests are about 3,890 o200k tokens as counted here (2,979
    of them tool definitions); without the relay they are 45,000 and about 69,590, so
    the 65,700 or so that ``net`` reports is a fall of 44,014 in ``ScriptedModel``'s
    count.

    >>> saved = Savings(kept_out=12_000, cost=400)
    >>> saved.net, saved + Savings(kept_out=50)
    (11600, Savings(kept_out=12050, cost=400))
    """

    kept_out: int = 0
    cost: int = 0

    @property
    def net(self) -> int:
        """Tokens the run saved: ``kept_out - cost``."""
        return self.kept_out - self.cost

    def __add__(self, other: Savings) -> Savings:
        return Savings(self.kept_out + other.kept_out, self.cost + other.cost)


@dataclass(frozen=True)  # no slots: Cls[T](...) must work (sets __orig_class__)
class AgentResult(Generic[AnswerT]):
    """How a run ended. ``answer`` is set when ``stopped_by == "answer"``.

    When a limit ends the run, ``limit`` names it and everything done so far is kept
    in ``steps`` and ``messages``.

    >>> from agents import ReActAgent, ScriptedModel
    >>> result = ReActAgent(ScriptedModel(["<answer>4</answer>"])).run_sync("2 + 2?")
    >>> result.ok, result.answer, result.stopped_by, len(result.steps)
    (True, '4', 'answer', 1)
    """

    answer: AnswerT | None
    stopped_by: StopKind
    steps: tuple[StepResult, ...]
    """Every step of the run, in order (``iterations`` until this release)."""
    messages: tuple[Message, ...]
    """The run's conversation. Its system message is the one the run's first model call
    sent (what the model saw: with tool discovery, the prompt listing the tools it
    showed); a step hook's own change to the prompt holds for its call only, and the
    run keeps the agent's prompt. A run that made no call keeps the agent's prompt."""
    stats: Mapping[str, int]
    usage: Usage
    limit: str | None = None
    error: str | None = None
    paused: str | None = None
    """Why the run paused (``stopped_by == "paused"``)."""
    extension_state: Mapping[str, object] = field(default_factory=lambda: {})
    """What the extensions keep for the rest of the conversation, by extension name
    (plain JSON data): pass it to the next run with ``extension_state=``."""
    savings: Mapping[str, Savings] = field(default_factory=lambda: {})
    """Extension name → the o200k tokens it kept out of the run's requests and what it
    cost (`Savings`); one entry per extension of the run, none for a run without. o200k
    whatever the model, while ``usage`` is the model's own count: `Savings` says how the
    two differ."""
    pending: tuple[ApprovalRequest, ...] = ()
    """The calls the run holds for a person's decision (``stopped_by == "paused"``), in
    call order, sealed: pass decisions by ``call_id`` to ``agent.resume(result, {...})``.
    A resumed run's result counts from the run's start (its iterations, messages, stats
    and usage); its ``savings`` only from the resume."""

    @property
    def ok(self) -> bool:
        """True when the run ended with an accepted answer."""
        return self.stopped_by == "answer"

    @property
    @deprecated(
        "AgentResult.iterations is AgentResult.steps now; the old name goes in the next release"
    )
    def iterations(self) -> tuple[StepResult, ...]:
        """``steps``, under its old name (for one release)."""
        return self.steps

    def transcript(self) -> str:
        """Every message of the run as plain text, for reading and snapshot tests.

        Media parts show as ``[image/png, 14 bytes]``.
        """
        return render_transcript(self.messages)


def render_transcript(messages: Sequence[Message]) -> str:
    """Messages as readable text: a ``==== role ====`` line, then the content.

    Native tool calls show as ``-> name(arguments) [id]`` lines, and each tool message
    under a header naming its tool and the call it answers.

    >>> print(render_transcript([Message.text("user", "Hi"), Message.text("assistant", "Hello")]))
    ==== user ====
    Hi
    <BLANKLINE>
    ==== assistant ====
    Hello
    """
    blocks: list[str] = []
    for message in messages:
        parts = [
            part.text if isinstance(part, TextContent) else f"[{part.describe()}]"
            for part in message.content
        ]
        parts.extend(f"-> {call.name}({call.arguments}) [{call.id}]" for call in message.tool_calls)
        header: str = message.role
        if message.role == "tool":
            header = f"tool {message.name} [{message.tool_call_id}]"
        blocks.append(f"==== {header} ====\n" + "\n".join(parts))
    return "\n\n".join(blocks)


if TYPE_CHECKING:  # the old name, for one release: typed as what it is; it warns
    Iteration = StepResult

__getattr__ = renamed_names(__name__, {"Iteration": "StepResult"})
