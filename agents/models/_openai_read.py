"""Reading the chat completions API's answers: a whole completion, or a stream's chunks
as they come, into our `ModelResponse` and its pieces.

Every field is checked (`_responses`): an answer that is not what the API documents
raises `Malformed`, which the model turns into a `ModelCallError`. Servers that leave
things out (a call's id or index, ``finish_reason: stop`` on a reply with calls) get
the readings the OpenAI API would have given.
"""

from __future__ import annotations

from collections.abc import Mapping

from agents.models._failures import api_message
from agents.models._openai_wire import openai_stop_reason
from agents.models._responses import (
    Malformed,
    checked_body,
    checked_object,
    describe,
    field,
    items,
    optional_text,
    optional_tokens,
    response_id,
    text,
    tokens,
)
from agents.models._types import (
    GenerateOptions,
    ModelResponse,
    ToolCallDelta,
    ToolCallRequest,
    Usage,
)

__all__ = ["StreamState", "read_completion", "with_calls"]


def read_completion(
    completion: object, options: GenerateOptions, default_model: str
) -> ModelResponse:
    """Our response from the SDK's ``ChatCompletion``, each field checked; `Malformed` if not."""
    body = checked_body(completion)
    choices = field(body, "choices")
    error = field(body, "error")
    if choices is None and error is not None:
        raise Malformed(f"it reports an error: {api_message({'error': error}, repr(error))}")
    listed = items(choices, "choices")
    if not listed:
        raise Malformed("it holds no choices")
    choice = checked_object(listed[0], "choices[0]")
    message = checked_object(field(choice, "message"), "choices[0].message")
    content = optional_text(field(message, "content"), "choices[0].message.content")
    refusal = optional_text(field(message, "refusal"), "choices[0].message.refusal")
    finish_reason = optional_text(field(choice, "finish_reason"), "choices[0].finish_reason")
    calls = _read_tool_calls(field(message, "tool_calls"), "choices[0].message.tool_calls")
    refused = content is None and bool(refusal) and not calls
    return ModelResponse(
        text=content or "",
        stop_reason=(
            "content_filter"
            if refused
            else with_calls(openai_stop_reason(finish_reason, choice.model_extra, options), calls)
        ),
        usage=_read_usage(field(body, "usage"), "usage"),
        model=optional_text(field(body, "model"), "model") or default_model,
        tool_calls=calls,
        id=response_id(field(body, "id")),
    )


def _read_tool_calls(value: object, path: str) -> tuple[ToolCallRequest, ...]:
    """A message's ``tool_calls``: each call's id, function name and raw arguments."""
    calls: list[ToolCallRequest] = []
    for position, item in enumerate(items(value, path, optional=True)):
        where = f"{path}[{position}]"
        call = checked_object(item, where)
        function = checked_object(field(call, "function"), f"{where}.function")
        name = text(field(function, "name"), f"{where}.function.name")
        arguments = optional_text(field(function, "arguments"), f"{where}.function.arguments")
        call_id = optional_text(field(call, "id"), f"{where}.id")
        calls.append(ToolCallRequest(call_id or f"call_{position + 1}", name, arguments or "{}"))
    return tuple(calls)


def with_calls(stop_reason: str, calls: tuple[ToolCallRequest, ...]) -> str:
    """``tool_use`` for a reply with calls that says it just stopped (as Ollama does)."""
    return "tool_use" if calls and stop_reason in ("stop", "other") else stop_reason


def _read_usage(value: object, path: str) -> Usage:
    if value is None:
        return Usage()
    usage = checked_object(value, path)
    cached = 0
    details = field(usage, "prompt_tokens_details")
    if details is not None:
        where = f"{path}.prompt_tokens_details"
        cached = optional_tokens(
            field(checked_object(details, where), "cached_tokens"), f"{where}.cached_tokens"
        )
    return Usage(
        tokens(field(usage, "prompt_tokens"), f"{path}.prompt_tokens"),
        tokens(field(usage, "completion_tokens"), f"{path}.completion_tokens"),
        cached,
    )


class _CallParts:
    """One streamed tool call as its pieces arrive."""

    __slots__ = ("arguments", "id", "name")

    def __init__(self) -> None:
        self.id = ""
        self.name: list[str] = []
        self.arguments: list[str] = []


class StreamState:
    """What a stream's chunks said besides their text: model, usage, finish reason, calls."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.id = ""
        self.chunks = 0
        self.usage = Usage()
        self.finish_reason: str | None = None
        self.extra: Mapping[str, object] | None = None
        self.calls: dict[int, _CallParts] = {}
        self.last_index = -1

    def read(self, chunk: object) -> list[str | ToolCallDelta]:
        """The text and call pieces of choice 0 in one ``chat.completion.chunk``.

        `Malformed` if the chunk is not one.
        """
        self.chunks += 1
        body = checked_object(chunk, "a chunk")
        self.model = optional_text(field(body, "model"), "chunk.model") or self.model
        self.id = response_id(field(body, "id")) or self.id
        usage = field(body, "usage")
        if usage is not None:
            self.usage = _read_usage(usage, "chunk.usage")
        pieces: list[str | ToolCallDelta] = []
        choices = items(field(body, "choices"), "chunk.choices", optional=True)
        for position, item in enumerate(choices):
            path = f"chunk.choices[{position}]"
            choice = checked_object(item, path)
            if field(choice, "index") not in (0, None):
                continue
            delta = checked_object(field(choice, "delta"), f"{path}.delta")
            content = optional_text(field(delta, "content"), f"{path}.delta.content")
            if content:
                pieces.append(content)
            calls = field(delta, "tool_calls")
            if calls is not None:
                self._read_calls(calls, f"{path}.delta.tool_calls", pieces)
            finish_reason = optional_text(field(choice, "finish_reason"), f"{path}.finish_reason")
            if finish_reason is not None:
                self.finish_reason, self.extra = finish_reason, choice.model_extra
        return pieces

    def _read_calls(self, value: object, path: str, pieces: list[str | ToolCallDelta]) -> None:
        for position, item in enumerate(items(value, path)):
            where = f"{path}[{position}]"
            call = checked_object(item, where)
            call_id = optional_text(field(call, "id"), f"{where}.id") or ""
            index = self._index(field(call, "index"), call_id, f"{where}.index")
            name = arguments = None
            function = field(call, "function")
            if function is not None:
                function = checked_object(function, f"{where}.function")
                name = optional_text(field(function, "name"), f"{where}.function.name")
                arguments = optional_text(
                    field(function, "arguments"), f"{where}.function.arguments"
                )
            parts = self.calls.get(index)
            if parts is None:
                parts = self.calls[index] = _CallParts()
            if call_id and not parts.id:
                parts.id = call_id
            if name:
                parts.name.append(name)
            if arguments:
                parts.arguments.append(arguments)
            if call_id or name or arguments:
                pieces.append(ToolCallDelta(index, call_id, name or "", arguments or ""))

    def _index(self, value: object, call_id: str, path: str) -> int:
        """The call a piece belongs to: its ``index``; without one, its id's or the latest."""
        if value is None:  # some servers leave the index out
            if call_id:
                for index, parts in self.calls.items():
                    if parts.id == call_id:
                        self.last_index = index
                        return index
                self.last_index = max(self.calls, default=-1) + 1
            elif self.last_index < 0:
                self.last_index = 0
            return self.last_index
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            self.last_index = value
            return value
        raise Malformed(f"{path} is {describe(value)}, not a call index")

    def tool_calls(self) -> tuple[ToolCallRequest, ...]:
        """The streamed calls assembled, in index order."""
        return tuple(
            ToolCallRequest(
                parts.id or f"call_{position + 1}",
                "".join(parts.name),
                "".join(parts.arguments) or "{}",
            )
            for position, (_, parts) in enumerate(sorted(self.calls.items()))
        )
