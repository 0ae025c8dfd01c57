"""`ScriptedModel`: a deterministic stand-in for a real model, for tests and demos."""

from __future__ import annotations

import asyncio
import itertools
import math
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, replace

import msgspec

from agents._errors import AgentTypeError, AgentValueError
from agents.models._errors import ScriptExhaustedError
from agents.models._types import (
    GenerateOptions,
    Message,
    ModelResponse,
    TextDelta,
    ToolCallDelta,
    ToolCallRequest,
    Usage,
)

__all__ = ["ScriptedModel", "ScriptedReply", "ScriptedRequest", "estimate_tokens"]

_CHARS_PER_TOKEN = 4


def estimate_tokens(text: str) -> int:
    """A rough token count, one token per four characters, rounded up.

    >>> estimate_tokens("abcdefghi")
    3
    """
    return math.ceil(len(text) / _CHARS_PER_TOKEN)


@dataclass(frozen=True, slots=True)
class ScriptedReply:
    """One scripted reply with native tool calls: optional text, then the calls.

    A call whose ``id`` is empty gets ``call_1``, ``call_2`` … (counted per model) when
    it is replayed. ``arguments`` are sent as written, so a script can hand the loop
    invalid JSON on purpose. `ScriptedModel.call` builds a one-call reply.

    >>> reply = ScriptedReply("Checking.", (ToolCallRequest("c1", "add", '{"a": 1}'),))
    >>> reply.tool_calls[0].name
    'add'
    """

    text: str = ""
    tool_calls: tuple[ToolCallRequest, ...] = ()

    def __post_init__(self) -> None:
        calls: object = self.tool_calls  # typed as a tuple; a bare request slips in easily
        if isinstance(calls, ToolCallRequest):
            raise AgentTypeError("tool_calls must be a tuple of ToolCallRequest, got a single one")


ScriptItem = str | ScriptedReply
"""What a script gives for one reply: plain text, or a `ScriptedReply`."""


@dataclass(frozen=True, slots=True)
class ScriptedRequest:
    """One call a `ScriptedModel` received: the conversation and the options in force.

    >>> ScriptedRequest((Message.text("user", "hi"),), GenerateOptions()).messages[0].role
    'user'
    """

    messages: tuple[Message, ...]
    options: GenerateOptions


class ScriptedModel:
    """A `Model` that replays fixed outputs, or computes each from the conversation.

    It behaves like an endpoint where that is cheap to do: output is cut at the first
    ``options.stop`` sequence (stop reason ``stop_sequence``) and at ``options.max_tokens``
    estimated tokens (``length``); usage is `estimate_tokens` of the input and output
    text. Every call is kept in `requests`. Streaming yields the text in ``chunk_size``
    pieces, then the `ModelResponse`.

    An output may also be a `ScriptedReply` holding native tool calls (or build one
    with `ScriptedModel.call`): they come back in ``ModelResponse.tool_calls`` with stop
    reason ``tool_use``, streamed as `ToolCallDelta` items (id and name first, then the
    arguments in ``chunk_size`` pieces) after the text. A reply whose text is cut by a
    stop sequence or ``max_tokens`` loses its calls, as it would from an endpoint.

    >>> import asyncio
    >>> model = ScriptedModel(["Thought: add\\nAction: calc", "Final Answer: 42"])
    >>> stop = GenerateOptions(stop=("\\nAction:",))
    >>> asyncio.run(model.generate([Message.text("user", "6*7?")], stop)).text
    'Thought: add'
    >>> echo = ScriptedModel(lambda messages: messages[-1].text_content().upper())
    >>> asyncio.run(echo.generate([Message.text("user", "hi")])).text
    'HI'
    >>> native = ScriptedModel([ScriptedModel.call("add", a=2, b=3), "5"])
    >>> reply = asyncio.run(native.generate([Message.text("user", "2+3?")]))
    >>> reply.stop_reason, reply.tool_calls
    ('tool_use', (ToolCallRequest(id='call_1', name='add', arguments='{"a":2,"b":3}'),))
    """

    def __init__(
        self,
        outputs: Sequence[ScriptItem] | Callable[[Sequence[Message]], ScriptItem],
        *,
        name: str = "scripted",
        chunk_size: int = 7,
    ) -> None:
        if isinstance(outputs, str):
            # A bare string is a Sequence[str] of single characters: surely a mistake.
            raise AgentTypeError("ScriptedModel needs a list of outputs, got a single string")
        if chunk_size < 1:
            raise AgentValueError(f"chunk_size must be at least 1, got {chunk_size}")
        self._script: Callable[[Sequence[Message]], ScriptItem] | None = None
        self._outputs: tuple[ScriptItem, ...] = ()
        if callable(outputs):
            self._script = outputs
        else:
            self._outputs = tuple(outputs)
        self._next = 0
        self._name = name
        self._chunk_size = chunk_size
        self._call_ids = itertools.count(1)
        self.requests: list[ScriptedRequest] = []

    @staticmethod
    def call(
        name: str,
        arguments: Mapping[str, object] | None = None,
        /,
        *,
        id: str = "",
        text: str = "",
        **args: object,
    ) -> ScriptedReply:
        """A reply making one native call of ``name`` with ``arguments`` and ``args``.

        Pass arguments named ``id`` or ``text`` in the ``arguments`` mapping.

        >>> ScriptedModel.call("search", {"id": 7}, id="c9").tool_calls
        (ToolCallRequest(id='c9', name='search', arguments='{"id":7}'),)
        """
        merged = {**(arguments or {}), **args}
        encoded = msgspec.json.encode(merged).decode()
        return ScriptedReply(text, (ToolCallRequest(id, name, encoded),))

    @property
    def name(self) -> str:
        """The name given at construction, ``scripted`` by default."""
        return self._name

    async def generate(
        self, messages: Sequence[Message], options: GenerateOptions | None = None
    ) -> ModelResponse:
        """The next scripted reply, cut at stop sequences and ``max_tokens``."""
        return self._respond(messages, options)

    async def stream(
        self, messages: Sequence[Message], options: GenerateOptions | None = None
    ) -> AsyncIterator[TextDelta | ToolCallDelta | ModelResponse]:
        """The next scripted reply in ``chunk_size`` pieces, then its `ModelResponse`."""
        response = self._respond(messages, options)
        size = self._chunk_size
        for start in range(0, len(response.text), size):
            # Yield to the loop between pieces, as a network stream would.
            await asyncio.sleep(0)
            yield TextDelta(response.text[start : start + size])
        for index, call in enumerate(response.tool_calls):
            await asyncio.sleep(0)
            yield ToolCallDelta(index, id=call.id, name=call.name)
            for start in range(0, len(call.arguments), size):
                await asyncio.sleep(0)
                yield ToolCallDelta(index, arguments=call.arguments[start : start + size])
        yield response

    def _respond(
        self, messages: Sequence[Message], options: GenerateOptions | None
    ) -> ModelResponse:
        opts = options if options is not None else GenerateOptions()
        conversation = tuple(messages)
        self.requests.append(ScriptedRequest(conversation, opts))
        output = self._next_output(conversation)
        calls: tuple[ToolCallRequest, ...] = ()
        if isinstance(output, str):
            text = output
        elif isinstance(output, ScriptedReply):
            text, calls = output.text, output.tool_calls
        else:
            raise AgentTypeError(
                f"ScriptedModel {self._name!r}: a scripted output must be a str or a "
                f"ScriptedReply, got {type(output).__name__}"
            )
        text, stop_reason = _truncate(text, opts)
        if calls and stop_reason == "stop":
            stop_reason = "tool_use"
            calls = tuple(
                request if request.id else replace(request, id=f"call_{next(self._call_ids)}")
                for request in calls
            )
        else:
            calls = ()
        prompt = "".join(_message_text(message) for message in conversation)
        written = text + "".join(call.name + call.arguments for call in calls)
        usage = Usage(estimate_tokens(prompt), estimate_tokens(written))
        return ModelResponse(text, stop_reason, usage, self._name, calls)

    def _next_output(self, conversation: tuple[Message, ...]) -> object:
        if self._script is not None:
            return self._script(conversation)
        if self._next >= len(self._outputs):
            given = len(self._outputs)
            raise ScriptExhaustedError(
                f"ScriptedModel {self._name!r} was given {given} "
                f"output{'' if given == 1 else 's'} and all have been used; "
                f"call {len(self.requests)} has no scripted reply"
            )
        output = self._outputs[self._next]
        self._next += 1
        return output


def _message_text(message: Message) -> str:
    text = message.text_content()
    if message.tool_calls:
        text += "".join(call.name + call.arguments for call in message.tool_calls)
    return text


def _truncate(text: str, options: GenerateOptions) -> tuple[str, str]:
    stop_reason = "stop"
    cuts = [index for index in (text.find(stop) for stop in options.stop) if index >= 0]
    if cuts:
        text, stop_reason = text[: min(cuts)], "stop_sequence"
    if options.max_tokens is not None and estimate_tokens(text) > options.max_tokens:
        text, stop_reason = text[: options.max_tokens * _CHARS_PER_TOKEN], "length"
    return text, stop_reason
