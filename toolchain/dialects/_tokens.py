"""Chat-template control tokens a model leaves in its text: removed from content.

Servers without a parser pass them through (``<|im_end|>``, ``<|eot_id|>``,
DeepSeek's end of sentence, ``<seed:eos>``, ``<turn|>``), and several formats close or
wrap their calls with tokens that carry nothing once the calls are read (``</tool_call>``
with no opening tag, ``[/TOOL_CALLS]``, Gemma-3's ``[END_TOOL_REQUEST]``, LFM2's echoed
``<|tool_call_end|>``).

Tokens of the prompt side a model imitates (DeepSeek's ``<|tool▁output▁begin|>``, GLM's
``<|observation|>``, ``<tool_response>``) are removed too; the text between them stays
content, as for every other token: it is what the model wrote, and dropping it would
hide that it imagined a tool's result. Command's citations ``<co>TEXT</co: 0:[1]>`` keep
their text.
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
    "</function_calls>",
    "</minimax:tool_call>",
    "<function_results>",
    "</function_results>",
    "<|tool_call_end|>",
    "<|tool_calls_section_begin|>",
    "<|tool_calls_section_end|>",
    "<|tool_call_section_begin|>",
    "<|tool_call_section_end|>",
    "<|START_RESPONSE|>",
    "<|END_RESPONSE|>",
    "<end_function_call>",
    "<escape>",
    "<tool_call|>",
    "<|tool_response>",
    "<tool_response|>",
    "<turn|>",
    "<|action_end|>",
    "<|END_ACTION|>",
    "<|START_TEXT|>",
    "<|END_TEXT|>",
    "<|START_OF_TURN_TOKEN|>",
    "<|END_OF_TURN_TOKEN|>",
    "<|START_TOOL_RESULT|>",
    "<|END_TOOL_RESULT|>",
    "<|CHATBOT_TOKEN|>",
    "<|message_sep|>",
    "<seed:eos>",
    "<seed:pad>",
    "</seed:cot_budget_reflect>",
    "[e~[",
    "<|observation|>",
    "<tool_response>",
    "</tool_response>",
    *(
        f"<{bar}{word}{bar}>"
        for bar in ("\uff5c", "|")
        for word in (
            "tool▁outputs▁begin",
            "tool▁outputs▁end",
            "begin▁of▁sentence",
            "User",
            "Assistant",
        )
    ),
)
# Removed from inside a run of text, which stays one: a citation mark, the marks around
# a tool result the model wrote in its reply.
_INLINE = (
    "<co>",
    *(f"<{bar}tool▁output▁{edge}{bar}>" for bar in ("\uff5c", "|") for edge in ("begin", "end")),
)
_ROLES = ("assistant", "model")


def read_token(scan: Scan, at: int, marker: str) -> Block | Skip:
    return Block(at, at + len(marker), FAMILY, kind="token")


def _read_inline(scan: Scan, at: int, marker: str) -> Block | Skip:
    return Block(at, at + len(marker), FAMILY, kind="inline")


def _read_citation_end(scan: Scan, at: int, marker: str) -> Block | Skip:
    """``</co: 0:[1,2]>`` (Command's citation close) up to its ``>`` on the same line."""
    close = scan.find(">", at)
    if close < 0:
        return Skip(at + 1, retire=True)
    if scan.text.find("\n", at, close) >= 0:
        return Skip(at + 1)
    return Block(at, close + 1, FAMILY, kind="inline")


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
    *(Opener(token, FAMILY, read_token) for token in _STRAY),
    *(Opener(token, FAMILY, _read_inline) for token in _INLINE),
    Opener("<|im_start|>", FAMILY, _read_turn_start),
    Opener("<start_of_turn>", FAMILY, _read_turn_start),
    Opener("<|turn>", FAMILY, _read_turn_start),
    Opener("<seed:bos>", FAMILY, _read_turn_start),
    Opener("</co:", FAMILY, _read_citation_end),
)
