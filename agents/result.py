"""The record of a run: each iteration and the final ``AgentResult``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Generic, Literal, TypeVar

from agents.models import Message, ToolCallRequest, Usage
from toolchain import TextContent, ToolChainResult

__all__ = ["AgentResult", "Iteration", "StopKind", "render_transcript"]

AnswerT = TypeVar("AnswerT")

StopKind = Literal["answer", "limit", "cancelled", "paused", "error"]
"""Why a run ended. ``paused``: something asked for a person's decision (``ctx.pause``);
continue the conversation once it is made."""


@dataclass(frozen=True, slots=True)
class Iteration:
    """One model call and what came of it.

    ``sections`` is the parsed output (empty when it had none, and for native tool
    calling but for the ``thinking`` a ``DialectToolChain`` read from the text);
    ``tool_calls`` the native calls the model made (or the chain read from its text);
    ``tool_results`` one ``ToolChainResult`` per action section (per turn of native
    calls); ``feedback`` the corrective text sent back when the output could not be
    used as written.

    >>> Iteration(1, "<answer>4</answer>", {"answer": ["4"]}).sections["answer"]
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


@dataclass(frozen=True)  # no slots: Cls[T](...) must work (sets __orig_class__)
class AgentResult(Generic[AnswerT]):
    """How a run ended. ``answer`` is set when ``stopped_by == "answer"``.

    When a limit ends the run, ``limit`` names it and everything done so far is kept
    in ``iterations`` and ``messages``.

    >>> from agents import ReActAgent, ScriptedModel
    >>> result = ReActAgent(ScriptedModel(["<answer>4</answer>"])).run_sync("2 + 2?")
    >>> result.ok, result.answer, result.stopped_by, len(result.iterations)
    (True, '4', 'answer', 1)
    """

    answer: AnswerT | None
    stopped_by: StopKind
    iterations: tuple[Iteration, ...]
    messages: tuple[Message, ...]
    stats: Mapping[str, int]
    usage: Usage
    limit: str | None = None
    error: str | None = None
    paused: str | None = None
    """Why the run paused (``stopped_by == "paused"``)."""
    extension_state: Mapping[str, object] = field(default_factory=lambda: {})
    """What the extensions keep for the rest of the conversation, by extension name
    (plain JSON data): pass it to the next run with ``extension_state=``."""

    @property
    def ok(self) -> bool:
        """True when the run ended with an accepted answer."""
        return self.stopped_by == "answer"

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
