"""Thinking blocks: ``<think>…</think>`` (DeepSeek-R1, Qwen3, QwQ, GLM, Granite 3.3),
``[THINK]…[/THINK]`` (Magistral) and Command-R7B's ``<|START_THINKING|>…``.

Nothing inside a thinking block is read as a call: a model drafting a call while it
thinks has not made it. An unclosed block runs to the end of the output. A closing tag
with no opening one (the chat template opened the block) is marked so the assembler can
move the text before it into reasoning.
"""

from __future__ import annotations

from toolchain.dialects._opener import Opener
from toolchain.dialects._scan import Block, Scan, Skip

__all__ = ["OPENERS"]

_PAIRS = {
    "<think>": "</think>",
    "[THINK]": "[/THINK]",
    "<|START_THINKING|>": "<|END_THINKING|>",
}
FAMILY = "reasoning"


def _read_block(scan: Scan, at: int, marker: str) -> Block | Skip:
    close_tag = _PAIRS[marker]
    inner = at + len(marker)
    close = scan.find(close_tag, inner)
    if close < 0:
        end, inner_end = len(scan.text), len(scan.text)
    else:
        end, inner_end = close + len(close_tag), close
    return Block(at, end, FAMILY, kind="reasoning", reasoning=scan.text[inner:inner_end])


def _read_close(scan: Scan, at: int, marker: str) -> Block | Skip:
    return Block(at, at + len(marker), FAMILY, kind="think_close")


OPENERS = (
    *(Opener(marker, FAMILY, _read_block) for marker in _PAIRS),
    Opener("</think>", FAMILY, _read_close),
    Opener("[/THINK]", FAMILY, _read_close),
)
