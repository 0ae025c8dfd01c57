"""Chat-template control tokens a model leaves in its text: removed from content.

Servers without a parser pass them through (``<|im_end|>``, ``<|eot_id|>``,
DeepSeek's end of sentence), and several formats close or wrap their calls with tokens
that carry nothing once the calls are read (``</tool_call>`` with no opening tag,
``[/TOOL_CALLS]``, Gemma-3's ``[END_TOOL_REQUEST]``).
"""

from __future__ import annotations

from toolchain.dialects._opener import Opener
from toolchain.dialects._scan import Block, Scan, Skip

__all__ = ["OPENERS"]

FAMILY = "tokens"
_STRAY = (
    "<|im_end|>",
    "<|eot_id|>",
    "<|eom_id|>",
    "<|end_of_text|>",
    "<|endoftext|>",
    "<end_of_turn>",
    "<|end|>",
    "<|return|>",
    "<|call|>",
    "</s>",
    "<|end▁of▁sentence|>",
    "<\uff5cend▁of▁sentence\uff5c>",  # DeepSeek, fullwidth bars
    "</tool_call>",
    "[/TOOL_CALLS]",
    "<|python_end|>",
    "[END_TOOL_REQUEST]",
    "[TOOL_REQUEST_END]",
    "<function_calls>",
    "</function_calls>",
    "<minimax:tool_call>",
    "</minimax:tool_call>",
    "<|tool_calls_section_begin|>",
    "<|tool_calls_section_end|>",
    "<|tool_call_section_begin|>",
    "<|tool_call_section_end|>",
    "<|START_RESPONSE|>",
    "<|END_RESPONSE|>",
    "<start_function_call>",
    "<end_function_call>",
    "<|tool_call>",
    "<tool_call|>",
    "<|action_end|>",
    "<|END_ACTION|>",
)
_ROLES = ("assistant", "model")


def _read_token(scan: Scan, at: int, marker: str) -> Block | Skip:
    return Block(at, at + len(marker), FAMILY, kind="token")


def _read_turn_start(scan: Scan, at: int, marker: str) -> Block | Skip:
    """``<|im_start|>assistant`` and the newline after it."""
    end = at + len(marker)
    for role in _ROLES:
        if scan.has(role, end):
            end += len(role)
            break
    if scan.has("\n", end):
        end += 1
    return Block(at, end, FAMILY, kind="token")


OPENERS = (
    *(Opener(token, FAMILY, _read_token) for token in _STRAY),
    Opener("<|im_start|>", FAMILY, _read_turn_start),
    Opener("<start_of_turn>", FAMILY, _read_turn_start),
)
