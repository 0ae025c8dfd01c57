"""`ScriptedModel`: a deterministic stand-in for a real model, for tests and demos."""

from __future__ import annotations

import asyncio
import math
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass

from agents.models._errors import ScriptExhaustedError
from agents.models._types import GenerateOptions, Message, ModelResponse, TextDelta, Usage

__all__ = ["ScriptedModel", "ScriptedRequest", "estimate_tokens"]

_CHARS_PER_TOKEN = 4


def estimate_tokens(text: str) -> int:
    """A rough token count, one token per four characters, rounded up.

    >>> estimate_tokens("abcdefghi")
    3
    """
    return math.ceil(len(text) / _CHARS_PER_TOKEN)


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

    >>> import asyncio
    >>> model = ScriptedModel(["Thought: add\\nAction: calc", "Final Answer: 42"])
    >>> stop = GenerateOptions(stop=("\\nAction:",))
    >>> asyncio.run(model.generate([Message.text("user", "6*7?")], stop)).text
    'Thought: add'
    >>> echo = ScriptedModel(lambda messages: messages[-1].text_content().upper())
    >>> asyncio.run(echo.generate([Message.text("user", "hi")])).text
    'HI'
    """

    def __init__(
        self,
        outputs: Sequence[str] | Callable[[Sequence[Message]], str],
        *,
        name: str = "scripted",
        chunk_size: int = 7,
    ) -> None:
        if isinstance(outputs, str):
            # A bare string is a Sequence[str] of single characters: surely a mistake.
            raise TypeError("ScriptedModel needs a list of outputs, got a single string")
        if chunk_size < 1:
            raise ValueError(f"chunk_size must be at least 1, got {chunk_size}")
        self._script: Callable[[Sequence[Message]], str] | None = None
        self._outputs: tuple[str, ...] = ()
        if callable(outputs):
            self._script = outputs
        else:
            self._outputs = tuple(outputs)
        self._next = 0
        self._name = name
        self._chunk_size = chunk_size
        self.requests: list[ScriptedRequest] = []

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
    ) -> AsyncIterator[TextDelta | ModelResponse]:
        """The next scripted reply in ``chunk_size`` pieces, then its `ModelResponse`."""
        response = self._respond(messages, options)
        for start in range(0, len(response.text), self._chunk_size):
            # Yield to the loop between pieces, as a network stream would.
            await asyncio.sleep(0)
            yield TextDelta(response.text[start : start + self._chunk_size])
        yield response

    def _respond(
        self, messages: Sequence[Message], options: GenerateOptions | None
    ) -> ModelResponse:
        opts = options if options is not None else GenerateOptions()
        conversation = tuple(messages)
        self.requests.append(ScriptedRequest(conversation, opts))
        text, stop_reason = _truncate(self._next_output(conversation), opts)
        prompt = "".join(message.text_content() for message in conversation)
        usage = Usage(estimate_tokens(prompt), estimate_tokens(text))
        return ModelResponse(text, stop_reason, usage, self._name)

    def _next_output(self, conversation: tuple[Message, ...]) -> str:
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


def _truncate(text: str, options: GenerateOptions) -> tuple[str, str]:
    stop_reason = "stop"
    cuts = [index for index in (text.find(stop) for stop in options.stop) if index >= 0]
    if cuts:
        text, stop_reason = text[: min(cuts)], "stop_sequence"
    if options.max_tokens is not None and estimate_tokens(text) > options.max_tokens:
        text, stop_reason = text[: options.max_tokens * _CHARS_PER_TOKEN], "length"
    return text, stop_reason
