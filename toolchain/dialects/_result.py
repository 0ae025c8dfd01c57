"""What a dialect parse returns, and the policies a caller may choose."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from toolchain._errors import ToolchainValueError
from toolchain._result import ToolCall

__all__ = ["DialectParse", "DialectPolicy"]


@dataclass(frozen=True, slots=True)
class DialectPolicy:
    """Choices where the peers that read these formats disagree; the defaults are the
    ones that serve a user best.

    - ``reasoning``: ``"separate"`` moves ``<think>`` blocks (and a leading
      ``…</think>`` when the template opened the block) into ``reasoning``;
      ``"inline"`` leaves them in ``content`` as written (llama.cpp's
      ``reasoning_format=none``, vLLM's tool parsers). Calls inside them are never read.
    - ``unknown_tools`` (used only when tools are given): ``"keep_marked"`` keeps a call
      written in explicit tool-call markup (a chain then tells the model the tool does
      not exist) but reads unmarked text (bare JSON, a Python-style list, a name line)
      naming a tool that is not offered as plain content; ``"drop"`` drops every call
      to a tool not offered; ``"keep"`` keeps them all.
    - ``families``: read only these format families (see ``FAMILIES``); ``None``: all.
    - ``max_chars``: text past this many characters is not read (``error`` says so).

    >>> DialectPolicy(unknown_tools="drop").reasoning
    'separate'
    """

    reasoning: Literal["separate", "inline"] = "separate"
    unknown_tools: Literal["keep_marked", "drop", "keep"] = "keep_marked"
    families: frozenset[str] | None = None
    max_chars: int = 1_000_000

    def __post_init__(self) -> None:
        if self.max_chars < 1:
            raise ToolchainValueError("max_chars must be >= 1")


@dataclass(frozen=True, slots=True)
class DialectParse:
    """One model output read: its tool calls, and the text around them kept apart.

    - ``calls``: the well-formed calls, in the order written; ``id`` is set where the
      format carries one (Kimi-K2 ``functions.name:0``, Command-R7B ``tool_call_id``).
    - ``content``: the user-visible text once the call markup is removed (segments
      between calls are stripped and joined by a newline); ``None`` when there is none.
    - ``reasoning``: thinking text (``<think>``, harmony ``analysis``, ReAct
      ``Thought:``, Command-R7B thinking); ``None`` when there is none.
    - ``answer``: a final answer the model marked as such (ReAct ``Final Answer:``,
      ``<final_answer>``, a JSON action ``"Final Answer"``); it is in ``content`` too.
    - ``format``: the family the first call (or the answer) was read from, ``"text"``
      when there is neither.
    - ``error``: why markup that looked like a call was not read, or why the whole
      output is ambiguous; ``None`` when nothing went wrong.
    - ``rejected``: calls recognised by name whose arguments could not be used, each with
      ``rejected`` set; a chain answers them with that error.
    - ``unread``: whether ``error`` reports call markup the model wrote and that will not
      run (a malformed block, an ambiguous step, a call the policy dropped, text past
      ``max_chars``), so the model should be told; ``False`` when ``error`` only notes
      unmarked call-shaped text naming a tool not offered, which stays content as written.

    >>> from toolchain.dialects import parse
    >>> result = parse('Checking.<tool_call>{"name": "f", "arguments": {"x": 1}}</tool_call>')
    >>> result.calls[0].name, dict(result.calls[0].args), result.content, result.format
    ('f', {'x': 1}, 'Checking.', 'hermes')
    >>> parse("Checking.<tool_call>{not json}</tool_call>").unread
    True
    """

    calls: tuple[ToolCall, ...] = ()
    content: str | None = None
    reasoning: str | None = None
    answer: str | None = None
    format: str = "text"
    error: str | None = None
    rejected: tuple[ToolCall, ...] = ()
    unread: bool = False
