"""Thinking blocks: ``<think>…</think>`` (DeepSeek-R1, Qwen3, QwQ, GLM, Granite 3.3),
``[THINK]…[/THINK]`` (Magistral), Command-R7B's ``<|START_THINKING|>…``, Seed-OSS's
``<seed:think>`` and its ``<seed:cot_budget_reflect>`` notes, and Gemma 4's
``<|channel>thought…<channel|>``.

Nothing inside a thinking block is read as a call: a model drafting a call while it
thinks has not made it (Seed-OSS quotes whole call blocks there). An unclosed block runs
to the end of the output. A closing tag with no opening one (the chat template opened
the block: DeepSeek V3.2, MiniMax-M2, GLM-4.7, Command A) is marked so the assembler can
move the text before it into reasoning.
"""

from __future__ import annotations

import re

from toolchain.dialects._opener import Opener
from toolchain.dialects._scan import Block, Scan, Skip

__all__ = ["OPENERS"]

_PAIRS = {
    "<think>": "</think>",
    "[THINK]": "[/THINK]",
    "<|START_THINKING|>": "<|END_THINKING|>",
    "<seed:think>": "</seed:think>",
    "<seed:cot_budget_reflect>": "</seed:cot_budget_reflect>",
    "<|channel>": "<channel|>",
}
# Gemma 4 names its channel on the first line; the name is not part of the thinking.
_CHANNEL_NAME = "thought"
# Command cites its sources in its thinking too: `<co>TEXT</co: 0:[1]>` keeps TEXT.
_CITATION = re.compile(r"<co>|</co:[^>\n]*>")
FAMILY = "reasoning"


def _read_block(scan: Scan, at: int, marker: str) -> Block | Skip:
    close_tag = _PAIRS[marker]
    inner = at + len(marker)
    close = scan.find(close_tag, inner)
    if close < 0:
        end, inner_end = len(scan.text), len(scan.text)
    else:
        end, inner_end = close + len(close_tag), close
    thought = scan.text[inner:inner_end]
    if marker == "<|START_THINKING|>":
        thought = _CITATION.sub("", thought)
    if marker == "<|channel>" and thought.startswith(_CHANNEL_NAME):
        rest = thought[len(_CHANNEL_NAME) :]
        if not rest or rest[0] == "\n":
            thought = rest[1:]
    return Block(at, end, FAMILY, kind="reasoning", reasoning=thought)


def _read_close(scan: Scan, at: int, marker: str) -> Block | Skip:
    return Block(at, at + len(marker), FAMILY, kind="think_close")


OPENERS = (
    *(Opener(marker, FAMILY, _read_block) for marker in _PAIRS),
    *(
        Opener(close, FAMILY, _read_close)
        for close in ("</think>", "[/THINK]", "</seed:think>", "<channel|>", "<|END_THINKING|>")
    ),
)
