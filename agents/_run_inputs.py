"""What a run is given, checked where it is given: the task, the history, the extensions'
state.

A chat-API habit (``agent.run([{"role": "user", "content": "hi"}])``) would otherwise
travel into the run and fail inside the model adapter, reported as a failed model call
(``AttributeError: 'dict' object has no attribute 'data'``). Checked here, it is a
``TypeError`` at the call that says what each argument may be, before any model call.
The checks look at each item once: a long history costs one pass.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import cast

from agents._errors import AgentTypeError
from agents.models import Message
from toolchain import AudioContent, BinaryContent, ContentPart, ImageContent, TextContent

__all__ = [
    "check_extension_state",
    "check_history",
    "check_message_text",
    "check_run_inputs",
    "check_task",
]

_PARTS = (TextContent, ImageContent, AudioContent, BinaryContent)

_TASK = (
    "a task is a str or a sequence of content parts (TextContent, ImageContent, "
    "AudioContent, BinaryContent from toolchain)"
)
_HISTORY = (
    "earlier messages go in history= as agents.Message objects (Message.text('user', "
    "'hi'), or result.messages of an earlier run)"
)


def check_task(task: object) -> str | tuple[ContentPart, ...]:
    """``task`` as a run takes it; ``TypeError`` saying what a task may be otherwise.

    >>> check_task("What is 6 * 7?")
    'What is 6 * 7?'
    >>> check_task([{"role": "user", "content": "hi"}])
    Traceback (most recent call last):
    ...
    agents._errors.AgentTypeError: a task is a str or a sequence of content parts (TextContent, \
ImageContent, AudioContent, BinaryContent from toolchain), not a list holding a dict \
(item 0); earlier messages go in history= as agents.Message objects \
(Message.text('user', 'hi'), or result.messages of an earlier run)
    """
    if isinstance(task, str):
        return task
    parts: list[ContentPart] = []
    for index, part in enumerate(_items(task, _TASK)):
        if not isinstance(part, _PARTS):
            held = f"{kind_of(task)} holding {kind_of(part)} (item {index})"
            hint = f"; {_HISTORY}" if isinstance(part, Mapping | Message) else ""
            raise AgentTypeError(f"{_TASK}, not {held}{hint}")
        parts.append(part)
    return tuple(parts)


def check_history(history: object) -> tuple[Message, ...]:
    """``history`` as a run takes it; ``TypeError`` saying what it may hold otherwise.

    >>> check_history([{"role": "user", "content": "hi"}])
    Traceback (most recent call last):
    ...
    agents._errors.AgentTypeError: \
history must be a sequence of agents.Message, not a list holding a dict \
(item 0); earlier messages go in history= as agents.Message objects \
(Message.text('user', 'hi'), or result.messages of an earlier run)
    """
    what = "history must be a sequence of agents.Message"
    messages: list[Message] = []
    for index, message in enumerate(_items(history, what)):
        if not isinstance(message, Message):
            held = f"{kind_of(history)} holding {kind_of(message)} (item {index})"
            raise AgentTypeError(f"{what}, not {held}; {_HISTORY}")
        messages.append(message)
    return tuple(messages)


def check_extension_state(state: object) -> Mapping[str, object] | None:
    """``extension_state`` as a run takes it: None, or a mapping of extension name to
    state (``result.extension_state``); ``TypeError`` otherwise.

    >>> check_extension_state(["tool_search"])
    Traceback (most recent call last):
    ...
    agents._errors.AgentTypeError: \
extension_state must be a mapping of extension name to its state \
(result.extension_state of an earlier run), or None, not a list
    """
    if state is None or isinstance(state, Mapping):
        return cast("Mapping[str, object] | None", state)
    raise AgentTypeError(
        "extension_state must be a mapping of extension name to its state "
        f"(result.extension_state of an earlier run), or None, not {kind_of(state)}"
    )


def check_message_text(role: str, text: object) -> str:
    """The text of a prompt's message (``prompt.user``); ``TypeError`` unless a str.

    >>> check_message_text("user", [{"role": "user", "content": "hi"}])
    Traceback (most recent call last):
    ...
    agents._errors.AgentTypeError: \
a prompt's user message is a str, not a list; earlier messages go in \
run_prompt(..., history=[agents.Message, ...])
    """
    if isinstance(text, str):
        return text
    raise AgentTypeError(
        f"a prompt's {role} message is a str, not {kind_of(text)}; earlier messages go in "
        "run_prompt(..., history=[agents.Message, ...])"
    )


def check_run_inputs(
    task: object, history: object, extension_state: object
) -> tuple[str | tuple[ContentPart, ...], tuple[Message, ...], Mapping[str, object] | None]:
    """The three arguments of a run, checked in the order they are given."""
    return check_task(task), check_history(history), check_extension_state(extension_state)


def _items(value: object, what: str) -> Sequence[object]:
    """``value`` as a sequence of items to check; text and bytes are not one."""
    if isinstance(value, str | bytes | bytearray) or not isinstance(value, Sequence):
        raise AgentTypeError(f"{what}, not {kind_of(value)}")
    return cast("Sequence[object]", value)


def kind_of(value: object) -> str:
    """``a dict``, ``an int``: the type named as the message reads it."""
    name = type(value).__name__
    return f"{'an' if name[:1] in 'aeiouAEIOU' else 'a'} {name}"
