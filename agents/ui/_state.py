"""A conversation handed to the client and back, sealed so the client cannot change it.

A chat page keeps the conversation between requests: the protocols have a place for
it (AG-UI's ``state``, the AI SDK's message metadata). What we hand out there is ours:
the conversation's messages (``messages_to_json``), what the extensions keep
(``extension_state``: activated tools, variables, boxed references) and, when the run
paused on held calls, which paused run the next request may resume. All of it is
sealed with the core's `Seal` (an HMAC under the app's key), bound to the thread it
was made for: a state edited, forged, taken to another thread, or sealed by another
key (another server, or this one after a restart) is refused with `StateRefused`,
and nothing runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import cast

from agents._errors import AgentValueError
from agents.models import Message, messages_from_json, messages_to_json
from toolchain.runtime import Seal

__all__ = ["Conversation", "StateRefused", "open_state", "seal_state"]

VERSION = 1


class StateRefused(AgentValueError):
    """The state a request carried is not one this app sealed for this thread: nothing
    ran. The message says why and what to do (start a new conversation)."""


@dataclass(frozen=True, slots=True)
class Conversation:
    """A thread's conversation as the app last left it."""

    messages: tuple[Message, ...] = ()
    extension_state: Mapping[str, object] = field(default_factory=lambda: {})
    paused: str | None = None
    """The run id of the paused run the next request may resume (held calls)."""


def seal_state(seal: Seal, thread: str, conversation: Conversation) -> dict[str, object]:
    """``conversation`` as plain JSON data for the client, sealed for ``thread``."""
    body: dict[str, object] = {
        "version": VERSION,
        "messages": messages_to_json(conversation.messages),
        "extension_state": dict(conversation.extension_state),
        "paused": conversation.paused,
    }
    return {**body, "seal": seal.sign([thread, body])}


def open_state(seal: Seal, thread: str, sealed: object) -> Conversation:
    """The conversation ``seal_state`` sealed for ``thread``; `StateRefused` otherwise.

    >>> from toolchain.runtime import Seal
    >>> seal = Seal(b"k" * 32)
    >>> state = seal_state(seal, "t1", Conversation(paused="run_1"))
    >>> open_state(seal, "t1", state).paused
    'run_1'
    >>> open_state(seal, "t2", state)
    Traceback (most recent call last):
    ...
    agents.ui._state.StateRefused: the conversation state was not sealed by this server \
for this thread (edited, forged, from another thread, or from before a restart): \
start a new conversation
    """
    if not isinstance(sealed, dict):
        raise StateRefused(
            f"the conversation state must be the object this server sent, not "
            f"{type(sealed).__name__}: start a new conversation"
        )
    state = cast(dict[str, object], sealed)
    mac = state.get("seal")
    body = {key: value for key, value in state.items() if key != "seal"}
    if not isinstance(mac, str) or not seal.signed([thread, body], mac):
        raise StateRefused(
            "the conversation state was not sealed by this server for this thread "
            "(edited, forged, from another thread, or from before a restart): "
            "start a new conversation"
        )
    # Sealed by us, so the shapes are ours; still checked, as a key may be shared.
    messages, extension_state, paused = (
        body.get("messages"),
        body.get("extension_state"),
        body.get("paused"),
    )
    if (
        body.get("version") != VERSION
        or not isinstance(messages, str)
        or not isinstance(extension_state, dict)
        or not (paused is None or isinstance(paused, str))
    ):
        raise StateRefused(
            f"the conversation state is not of version {VERSION}: start a new conversation"
        )
    return Conversation(
        messages_from_json(messages), cast(dict[str, object], extension_state), paused
    )
