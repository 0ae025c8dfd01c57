"""`AnthropicModel`: the Messages API through the official ``anthropic`` SDK.

The SDK is imported when the first model is built, not with this module, so that
``import agents`` stays light (the SDK weighs seconds and tens of MiB).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from typing import TYPE_CHECKING

from agents.models._anthropic_wire import (
    anthropic_request,
    anthropic_stop_reason,
    anthropic_tools,
)
from agents.models._call_options import DroppedOptions
from agents.models._errors import ModelCallError, ModelConfigError, ModelError
from agents.models._failures import (
    api_message,
    connection_failure,
    remember_client_secrets,
    status_failure,
    timeout_failure,
    unexpected_failure,
)
from agents.models._loop_clients import LoopClients, sdk_loop_clients
from agents.models._responses import (
    Malformed,
    checked_body,
    checked_object,
    field,
    items,
    json_object,
    no_events,
    optional_text,
    optional_tokens,
    position,
    response_id,
    text,
    tokens,
)
from agents.models._types import (
    GenerateOptions,
    Message,
    ModelResponse,
    TextDelta,
    ToolCallDelta,
    ToolCallRequest,
    Usage,
)
from toolchain.runtime import remember_header_secrets

if TYPE_CHECKING:
    import httpx2
    from anthropic import AnthropicError, AsyncAnthropic, Omit
    from anthropic.types import MessageParam, TextBlockParam, ToolChoiceParam, ToolParam
    from pydantic import BaseModel

__all__ = ["AnthropicModel"]

_NOT_A_MESSAGE = "the response is not a Messages API message"
_NOT_A_STREAM = "the stream is not a Messages API event stream"
_NO_SUCH_PARAMETER = ("seed", "presence_penalty", "frequency_penalty")


class AnthropicModel:
    """A `Model` on the Anthropic Messages API (or a server that speaks it).

    System messages are joined into the ``system`` parameter. ``max_tokens`` is required
    by the API, so ``GenerateOptions.max_tokens`` falls back to the constructor's. The
    SDK retries 408/409/429/5xx and timeouts with backoff that honours ``retry-after``
    and ``retry-after-ms``, up to ``max_retries``; what is left is raised as
    `ModelCallError` (`ModelTimeoutError` for timeouts), and so is an answer that is
    not a message (HTML, a JSON array, ``"content": 42``, a stream line that is not
    JSON). Images go as base64 or URL blocks, PDFs and plain text as documents; audio
    raises `UnsupportedContentError`.

    Native tools: ``GenerateOptions.tools`` go as ``tools`` (a strict spec with
    ``strict: true``) with ``tool_choice`` (``auto``, ``any`` for ``"required"``,
    ``none``, or the named tool); ``tool_use`` blocks come back as
    `ModelResponse.tool_calls`, their ``input`` as compact JSON (streamed: the
    ``input_json_delta`` pieces as sent, each also yielded as a `ToolCallDelta`). Tool
    messages go as ``tool_result`` blocks, media inside them (see `anthropic_request`).

    ``cache_prompt=True`` places prompt-cache breakpoints on the system prompt and on the
    last block of the last message, so each step reads the unchanged prefix from the
    cache; ``Usage.cached_input_tokens`` reports ``cache_read_input_tokens``.

    The SDK has no ``temperature``, ``top_p`` or ``top_k`` parameters any more (newer
    models reject them), so each that is set is sent as an extra body field, and only
    then. The API has no ``seed``, ``presence_penalty`` or ``frequency_penalty``: those
    options are ignored, and logged once per model at debug level (logger ``agents``).
    ``GenerateOptions.headers`` go with that request only (the SDK's ``extra_headers``);
    ``GenerateOptions.max_retries`` replaces the model's ``max_retries`` for that call.
    Input usage counts cached tokens too (cache reads and writes).
    A ready ``client`` replaces ``api_key``, ``base_url``, ``timeout`` and ``max_retries``.

    One model serves any number of event loops (``run_sync`` after ``run_sync``,
    ``asyncio.run`` after ``asyncio.run``, loops in several threads at once): each loop
    gets a copy of the SDK client with a connection pool of its own, closed when that
    loop shuts down. A ``client`` built with its own ``http_client`` is used as it is
    instead, so it serves one event loop (its pool belongs to that loop).

    Errors never carry the SDK's exception as ``__cause__`` (its text may echo the
    request's key); it stays reachable as ``__context__``.

    >>> model = AnthropicModel("claude-haiku-4-5", api_key="sk-ant-example")
    >>> model.name
    'anthropic:claude-haiku-4-5'
    """

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 3,
        client: AsyncAnthropic | None = None,
        name: str | None = None,
        max_tokens: int = 4096,
        cache_prompt: bool = False,
    ) -> None:
        self._model = model
        self._name = name if name is not None else f"anthropic:{model}"
        client_given = client is not None
        if client is None:
            import anthropic

            try:
                client = anthropic.AsyncAnthropic(
                    api_key=api_key, base_url=base_url, timeout=timeout, max_retries=max_retries
                )
            except anthropic.AnthropicError as err:
                raise ModelConfigError(
                    f"{self._name}: cannot set up the client; pass api_key= or set "
                    f"ANTHROPIC_API_KEY ({err})"
                ) from err
        remember_client_secrets(client)
        self._clients = _loop_clients(client, given=client_given)
        self._dropped = DroppedOptions(self._name)
        self._timeout = client.timeout if isinstance(client.timeout, float | int) else None
        self._base_url = str(client.base_url)
        self._max_tokens = max_tokens
        self._cache_prompt = cache_prompt

    async def aclose(self) -> None:
        """Close the connections this model opened on the running event loop.

        A later call opens new ones. Connections on loops still running in other threads
        close when those loops shut down; a ``client`` given with its own ``http_client``
        is closed here, and is unusable afterwards.
        """
        await self._clients.aclose()

    @property
    def base_url(self) -> str:
        """The endpoint the requests go to (the client's ``base_url``)."""
        return self._base_url

    @property
    def name(self) -> str:
        """``anthropic:<model>`` unless another ``name`` was given."""
        return self._name

    async def generate(
        self, messages: Sequence[Message], options: GenerateOptions | None = None
    ) -> ModelResponse:
        """One whole message."""
        import anthropic
        import httpx2
        from anthropic import omit

        opts = options if options is not None else GenerateOptions()
        system, turns = anthropic_request(messages, cache_prompt=self._cache_prompt)
        remember_header_secrets(opts.headers)  # a credential sent must never be shown
        tools, tool_choice = _tool_params(opts)
        client, retries = self._clients.pick(opts.max_retries)
        try:
            reply = await client.messages.create(
                model=self._model,
                messages=turns,
                max_tokens=opts.max_tokens if opts.max_tokens is not None else self._max_tokens,
                system=system if system is not None else omit,
                stop_sequences=list(opts.stop) if opts.stop else omit,
                tools=tools,
                tool_choice=tool_choice,
                extra_body=self._extra_body(opts),
                extra_headers=opts.headers,
                stream=False,
            )
            return _read_message(reply, self._model)
        except (anthropic.AnthropicError, httpx2.HTTPError) as err:
            raise self._failure(err, retries) from None
        except Exception as err:  # the connection, the SDK's parsing or ours failed
            raise self._unexpected(err, _NOT_A_MESSAGE) from err

    async def stream(
        self, messages: Sequence[Message], options: GenerateOptions | None = None
    ) -> AsyncIterator[TextDelta | ToolCallDelta | ModelResponse]:
        """A message over server-sent events, then its `ModelResponse`."""
        opts = options if options is not None else GenerateOptions()
        system, turns = anthropic_request(messages, cache_prompt=self._cache_prompt)
        state = _StreamState(self._model)
        pieces: list[str] = []
        async with contextlib.aclosing(self._deltas(system, turns, opts, state)) as deltas:
            async for delta in deltas:
                if isinstance(delta, TextDelta):
                    pieces.append(delta.text)
                yield delta
        yield ModelResponse(
            "".join(pieces),
            anthropic_stop_reason(state.stop_reason),
            Usage(state.input_tokens, state.output_tokens, state.cached_tokens),
            state.model,
            state.tool_calls(),
            id=state.id,
        )

    async def _deltas(
        self,
        system: str | list[TextBlockParam] | None,
        turns: list[MessageParam],
        options: GenerateOptions,
        state: _StreamState,
    ) -> AsyncGenerator[TextDelta | ToolCallDelta, None]:
        """The streamed text and tool-call pieces; every failure leaves as a `ModelError`."""
        import anthropic
        import httpx2
        from anthropic import omit

        remember_header_secrets(options.headers)
        tools, tool_choice = _tool_params(options)
        client, retries = self._clients.pick(options.max_retries)
        try:
            events = await client.messages.create(
                model=self._model,
                messages=turns,
                max_tokens=(
                    options.max_tokens if options.max_tokens is not None else self._max_tokens
                ),
                system=system if system is not None else omit,
                stop_sequences=list(options.stop) if options.stop else omit,
                tools=tools,
                tool_choice=tool_choice,
                extra_body=self._extra_body(options),
                extra_headers=options.headers,
                stream=True,
            )
            async with events:
                async for event in events:
                    delta = state.read(event)
                    if delta is not None:
                        yield delta
            if not state.events:
                raise no_events(events.response.headers.get("content-type"))
            if not state.started:
                raise Malformed("it has no message_start event")
        except (anthropic.AnthropicError, httpx2.HTTPError) as err:
            # The SDK leaves transport errors raised while reading the stream unwrapped.
            raise self._failure(err, retries) from None
        except Exception as err:  # the connection, the SDK's parsing or ours failed
            raise self._unexpected(err, _NOT_A_STREAM) from err

    def _extra_body(self, options: GenerateOptions) -> Mapping[str, object] | None:
        """The sampling options the SDK has no parameters for; `None` when none is set.

        Also notes (once) the options set that the API has no parameter for at all.
        """
        self._dropped.note(options, _NO_SUCH_PARAMETER, "the Messages API has no such parameter")
        body = {
            name: value
            for name, value in (
                ("temperature", options.temperature),
                ("top_p", options.top_p),
                ("top_k", options.top_k),
            )
            if value is not None
        }
        return body or None

    def _unexpected(self, err: Exception, what: str) -> ModelCallError:
        moved = self._clients.moved_loop()
        return unexpected_failure(self._name, self._base_url, what, err, moved_loop=moved)

    def _failure(self, err: AnthropicError | httpx2.HTTPError, retries: int) -> ModelError:
        import anthropic
        import httpx2

        if isinstance(err, anthropic.APITimeoutError | httpx2.TimeoutException):
            return timeout_failure(self._name, self._timeout, retries)
        if isinstance(err, anthropic.APIConnectionError | httpx2.TransportError):
            moved = self._clients.moved_loop()
            return connection_failure(self._name, self._base_url, err, moved_loop=moved)
        if isinstance(err, anthropic.APIStatusError):
            message = api_message(err.body, err.message)
            return status_failure(self._name, err.status_code, message, retries)
        if isinstance(err, anthropic.APIError):
            return ModelCallError(f"{self._name}: {api_message(err.body, err.message)}")
        return ModelCallError(f"{self._name}: {err}")


def _loop_clients(client: AsyncAnthropic, *, given: bool) -> LoopClients[AsyncAnthropic]:
    import anthropic

    return sdk_loop_clients(client, anthropic.DefaultAsyncHttpxClient, given=given)


def _tool_params(
    options: GenerateOptions,
) -> tuple[list[ToolParam] | Omit, ToolChoiceParam | Omit]:
    """``tools`` and ``tool_choice``, or the SDK's ``omit`` for both when there are none."""
    from anthropic import omit

    if not options.tools:
        return omit, omit
    return anthropic_tools(options.tools, options.tool_choice)


def _compact(arguments: dict[str, object]) -> str:
    """A tool call's ``input`` as compact JSON text, non-ASCII kept as it is."""
    return json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))


def _read_message(reply: object, default_model: str) -> ModelResponse:
    """Our response from the SDK's ``Message``, each field checked; `Malformed` if not."""
    from anthropic import types as wire

    body = checked_body(reply)
    content = field(body, "content")
    error = field(body, "error")
    if content is None and error is not None:
        raise Malformed(f"it reports an error: {api_message({'error': error}, repr(error))}")
    pieces: list[str] = []
    calls: list[ToolCallRequest] = []
    for number, item in enumerate(items(content, "content")):
        path = f"content[{number}]"
        block = checked_object(item, path)
        if isinstance(block, wire.TextBlock):
            pieces.append(text(field(block, "text"), f"{path}.text"))
        elif isinstance(block, wire.ToolUseBlock):
            calls.append(
                ToolCallRequest(
                    id=text(field(block, "id"), f"{path}.id"),
                    name=text(field(block, "name"), f"{path}.name"),
                    arguments=_compact(json_object(field(block, "input"), f"{path}.input")),
                )
            )
    return ModelResponse(
        text="".join(pieces),
        stop_reason=anthropic_stop_reason(optional_text(field(body, "stop_reason"), "stop_reason")),
        usage=_read_usage(field(body, "usage"), "usage"),
        model=optional_text(field(body, "model"), "model") or default_model,
        tool_calls=tuple(calls),
        id=response_id(field(body, "id")),
    )


def _read_usage(value: object, path: str) -> Usage:
    """Input tokens (cached ones included), output tokens and cache reads of a ``usage``."""
    usage = checked_object(value, path)
    return Usage(
        _input_tokens(usage, path),
        tokens(field(usage, "output_tokens"), f"{path}.output_tokens"),
        _cached_tokens(usage, path),
    )


def _input_tokens(usage: BaseModel, path: str) -> int:
    """Input tokens, the cache's writes and reads included."""
    fresh = tokens(field(usage, "input_tokens"), f"{path}.input_tokens")
    cached = (
        optional_tokens(field(usage, name), f"{path}.{name}")
        for name in ("cache_creation_input_tokens", "cache_read_input_tokens")
    )
    return fresh + sum(cached)


def _cached_tokens(usage: BaseModel, path: str) -> int:
    """Input tokens read from the prompt cache (0 when not reported)."""
    name = "cache_read_input_tokens"
    return optional_tokens(field(usage, name), f"{path}.{name}")


class _Call:
    """A tool call being streamed: its place in the reply, id, name and argument text."""

    __slots__ = ("id", "index", "name", "pieces", "start_input")

    def __init__(self, index: int, id: str, name: str, start_input: dict[str, object]) -> None:
        self.index = index
        self.id = id
        self.name = name
        self.start_input = start_input
        self.pieces: list[str] = []


class _StreamState:
    """What a stream's events said besides their text: model, usage, stop reason, calls."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.id = ""
        self.events = 0
        self.started = False
        self.input_tokens = 0
        self.output_tokens = 0
        self.cached_tokens = 0
        self.stop_reason: str | None = None
        self.calls: dict[int, _Call] = {}  # by content block index, in the order they started

    def read(self, item: object) -> TextDelta | ToolCallDelta | None:
        """What one event adds (often nothing); `Malformed` if it is not an event."""
        from anthropic import types as wire

        self.events += 1
        event = checked_object(item, "an event")
        if isinstance(event, wire.RawMessageStartEvent):
            message = checked_object(field(event, "message"), "message_start.message")
            self.started = True
            self.model = optional_text(field(message, "model"), "message_start.message.model") or (
                self.model
            )
            self.id = response_id(field(message, "id"))
            usage = _read_usage(field(message, "usage"), "message_start.message.usage")
            self.input_tokens, self.output_tokens = usage.input_tokens, usage.output_tokens
            self.cached_tokens = usage.cached_input_tokens
        elif isinstance(event, wire.RawContentBlockStartEvent):
            return self._start(event)
        elif isinstance(event, wire.RawContentBlockDeltaEvent):
            delta = checked_object(field(event, "delta"), "content_block_delta.delta")
            if isinstance(delta, wire.TextDelta):
                piece = text(field(delta, "text"), "content_block_delta.delta.text")
                return TextDelta(piece) if piece else None
            if isinstance(delta, wire.InputJSONDelta):
                return self._arguments(event, delta)
        elif isinstance(event, wire.RawContentBlockStopEvent):
            return self._stop(event)
        elif isinstance(event, wire.RawMessageDeltaEvent):
            delta = checked_object(field(event, "delta"), "message_delta.delta")
            stop_reason = optional_text(field(delta, "stop_reason"), "message_delta.stop_reason")
            self.stop_reason = stop_reason or self.stop_reason
            # Counts in message_delta are cumulative, so they replace, not add.
            counts = checked_object(field(event, "usage"), "message_delta.usage")
            self.output_tokens = tokens(
                field(counts, "output_tokens"), "message_delta.usage.output_tokens"
            )
            if field(counts, "input_tokens") is not None:
                self.input_tokens = _input_tokens(counts, "message_delta.usage")
            if field(counts, "cache_read_input_tokens") is not None:
                self.cached_tokens = _cached_tokens(counts, "message_delta.usage")
        return None

    def _start(self, event: BaseModel) -> ToolCallDelta | None:
        """A ``tool_use`` block opening: the call's id and name."""
        from anthropic import types as wire

        path = "content_block_start"
        block = checked_object(field(event, "content_block"), f"{path}.content_block")
        if not isinstance(block, wire.ToolUseBlock):
            return None
        index = position(field(event, "index"), f"{path}.index")
        if index in self.calls:
            raise Malformed(f"{path}.index {index} starts a second block at the same index")
        call = _Call(
            len(self.calls),
            text(field(block, "id"), f"{path}.content_block.id"),
            text(field(block, "name"), f"{path}.content_block.name"),
            # Anthropic sends {} here and the input in deltas; keep any that came early.
            json_object(field(block, "input") or {}, f"{path}.content_block.input"),
        )
        self.calls[index] = call
        return ToolCallDelta(call.index, id=call.id, name=call.name)

    def _arguments(self, event: BaseModel, delta: BaseModel) -> ToolCallDelta | None:
        """A piece of a call's argument JSON, which may end anywhere."""
        path = "content_block_delta"
        index = position(field(event, "index"), f"{path}.index")
        piece = text(field(delta, "partial_json"), f"{path}.delta.partial_json")
        call = self.calls.get(index)
        if call is None:
            raise Malformed(f"{path} at index {index} sends tool input, but no tool_use started")
        if not piece:
            return None
        call.pieces.append(piece)
        return ToolCallDelta(call.index, arguments=piece)

    def _stop(self, event: BaseModel) -> ToolCallDelta | None:
        """A block closing: a call whose input came whole at its start yields it now."""
        index = position(field(event, "index"), "content_block_stop.index")
        call = self.calls.get(index)
        if call is None or call.pieces or not call.start_input:
            return None
        call.pieces.append(_compact(call.start_input))
        return ToolCallDelta(call.index, arguments=call.pieces[0])

    def tool_calls(self) -> tuple[ToolCallRequest, ...]:
        """The calls streamed, in order; a call sent no input has ``{}``."""
        return tuple(
            ToolCallRequest(call.id, call.name, "".join(call.pieces) or "{}")
            for call in self.calls.values()
        )
