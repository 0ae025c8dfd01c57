"""`OpenAIChatModel`: the chat completions API through the official ``openai`` SDK.

The SDK is imported when the first model is built, not with this module, so that
``import agents`` stays light (the SDK weighs seconds and tens of MiB). Requests are
written by `_openai_wire`, answers read by `_openai_read`; this module holds the
client: its options, retries and failures.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypeVar

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
from agents.models._openai_read import StreamState, read_completion, with_calls
from agents.models._openai_wire import (
    openai_messages,
    openai_stop_reason,
    openai_tool_choice,
    openai_tools,
)
from agents.models._responses import (
    no_events,
)
from agents.models._types import (
    GenerateOptions,
    Message,
    ModelResponse,
    TextDelta,
    ToolCallDelta,
)
from toolchain.runtime import remember_header_secrets

if TYPE_CHECKING:
    from openai import AsyncOpenAI, Omit, OpenAIError
    from openai.types.chat import (
        ChatCompletionMessageParam,
        ChatCompletionToolChoiceOptionParam,
        ChatCompletionToolUnionParam,
    )

__all__ = ["OpenAIChatModel"]

_T = TypeVar("_T")

MaxTokensField = Literal["max_tokens", "max_completion_tokens"]

_NOT_A_COMPLETION = "the response is not a chat completion"
_NOT_A_STREAM = "the stream is not a chat completion stream"


@dataclass(frozen=True, slots=True)
class _Sampling:
    stop: list[str] | Omit
    temperature: float | Omit
    max_tokens: int | Omit
    max_completion_tokens: int | Omit
    seed: int | Omit
    top_p: float | Omit
    presence_penalty: float | Omit
    frequency_penalty: float | Omit
    tools: Sequence[ChatCompletionToolUnionParam] | Omit
    tool_choice: ChatCompletionToolChoiceOptionParam | Omit
    extra_body: Mapping[str, object] | None
    extra_headers: Mapping[str, str] | None


class OpenAIChatModel:
    """A `Model` on any chat completions endpoint: OpenAI, vLLM, llama.cpp, Ollama …

    Retries on 408/409/429/5xx and on timeouts are the SDK's own (exponential backoff
    that honours ``retry-after`` and ``retry-after-ms``), up to ``max_retries``; what is
    left over is raised as `ModelCallError` (`ModelTimeoutError` for timeouts), and so
    is an answer that is not a chat completion (HTML, a JSON array, ``"content": 42``,
    a stream line that is not JSON). Images go as data URLs, wav/mp3 audio as
    ``input_audio``, other inline files as ``file`` parts; anything else raises
    `UnsupportedContentError`.

    ``GenerateOptions.tools`` go as function ``tools`` with their ``tool_choice``; the
    calls come back as ``ModelResponse.tool_calls`` (streamed as `ToolCallDelta` pieces)
    with stop reason ``tool_use``. A call without an id gets ``call_<n>`` (its 1-based
    position), one without arguments ``{}``; invalid argument JSON passes through raw.
    Tool messages take text only here: their media follows them in a user message (see
    `openai_messages`). ``prompt_tokens_details.cached_tokens`` is the usage's
    ``cached_input_tokens``.

    Sampling options go as the API's own fields (``top_p``, ``presence_penalty``,
    ``frequency_penalty``, ``seed`` …). The API has no ``top_k``; vLLM, llama.cpp's
    server, Ollama and most other compatible servers read one, so it goes as an extra
    body field (the SDK's ``extra_body``), except on api.openai.com, which refuses
    unknown fields: there it is dropped and logged once at debug level.
    ``GenerateOptions.headers`` go with that request only (the SDK's ``extra_headers``);
    ``GenerateOptions.max_retries`` replaces the model's ``max_retries`` for that call.
    Note that the SDK's own debug log (``OPENAI_LOG=debug``) prints request options,
    extra headers included, blanking only ``Authorization`` and ``api-key``.

    ``max_tokens_field`` picks the request field for ``GenerateOptions.max_tokens``:
    by default ``max_completion_tokens`` on api.openai.com (its reasoning models refuse
    ``max_tokens``) and ``max_tokens`` elsewhere, which every compatible server knows.
    Set ``stream_usage=False`` for a server that refuses ``stream_options``. A ready
    ``client`` replaces ``api_key``, ``base_url``, ``timeout`` and ``max_retries``.

    One model serves any number of event loops (``run_sync`` after ``run_sync``,
    ``asyncio.run`` after ``asyncio.run``, loops in several threads at once): each loop
    gets a copy of the SDK client with a connection pool of its own, closed when that
    loop shuts down. A ``client`` built with its own ``http_client`` is used as it is
    instead, so it serves one event loop (its pool belongs to that loop).

    Errors never carry the SDK's exception as ``__cause__`` (its text may echo the
    request's key); it stays reachable as ``__context__``.

    >>> model = OpenAIChatModel("llama3", api_key="unused", base_url="http://localhost:11434/v1")
    >>> model.name
    'openai:llama3'
    """

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 3,
        client: AsyncOpenAI | None = None,
        name: str | None = None,
        max_tokens_field: MaxTokensField | None = None,
        stream_usage: bool = True,
    ) -> None:
        self._model = model
        self._name = name if name is not None else f"openai:{model}"
        client_given = client is not None
        if client is None:
            import openai

            try:
                client = openai.AsyncOpenAI(
                    api_key=api_key, base_url=base_url, timeout=timeout, max_retries=max_retries
                )
            except openai.OpenAIError as err:
                raise ModelConfigError(
                    f"{self._name}: no API key; pass api_key= or set OPENAI_API_KEY ({err})"
                ) from err
        remember_client_secrets(client)
        self._clients = _loop_clients(client, given=client_given)
        self._timeout = client.timeout if isinstance(client.timeout, float | int) else None
        self._base_url = str(client.base_url)
        self._official = client.base_url.host == "api.openai.com"
        self._dropped = DroppedOptions(self._name)
        if max_tokens_field is None:
            max_tokens_field = "max_completion_tokens" if self._official else "max_tokens"
        self._max_tokens_field = max_tokens_field
        self._stream_usage = stream_usage

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
        """``openai:<model>`` unless another ``name`` was given."""
        return self._name

    async def generate(
        self, messages: Sequence[Message], options: GenerateOptions | None = None
    ) -> ModelResponse:
        """One whole chat completion."""
        import openai

        opts = options if options is not None else GenerateOptions()
        wire = openai_messages(messages)
        sampling = self._sampling(opts)
        client, retries = self._clients.pick(opts.max_retries)
        try:
            completion = await client.chat.completions.create(
                model=self._model,
                messages=wire,
                stream=False,
                stop=sampling.stop,
                temperature=sampling.temperature,
                max_tokens=sampling.max_tokens,
                max_completion_tokens=sampling.max_completion_tokens,
                seed=sampling.seed,
                top_p=sampling.top_p,
                presence_penalty=sampling.presence_penalty,
                frequency_penalty=sampling.frequency_penalty,
                tools=sampling.tools,
                tool_choice=sampling.tool_choice,
                extra_body=sampling.extra_body,
                extra_headers=sampling.extra_headers,
            )
            return read_completion(completion, opts, self._model)
        except openai.OpenAIError as err:
            raise self._failure(err, retries) from None
        except Exception as err:  # the connection, the SDK's parsing or ours failed
            raise self._unexpected(err, _NOT_A_COMPLETION) from err

    async def stream(
        self, messages: Sequence[Message], options: GenerateOptions | None = None
    ) -> AsyncIterator[TextDelta | ToolCallDelta | ModelResponse]:
        """A chat completion over server-sent events, then its `ModelResponse`."""
        opts = options if options is not None else GenerateOptions()
        wire = openai_messages(messages)
        state = StreamState(self._model)
        pieces: list[str] = []
        deltas = self._deltas(wire, self._sampling(opts), opts.max_retries, state)
        async with contextlib.aclosing(deltas):
            async for piece in deltas:
                if isinstance(piece, str):
                    pieces.append(piece)
                    yield TextDelta(piece)
                else:
                    yield piece
        calls = state.tool_calls()
        stop_reason = with_calls(openai_stop_reason(state.finish_reason, state.extra, opts), calls)
        yield ModelResponse(
            "".join(pieces), stop_reason, state.usage, state.model, calls, id=state.id
        )

    async def _deltas(
        self,
        wire: list[ChatCompletionMessageParam],
        sampling: _Sampling,
        max_retries: int | None,
        state: StreamState,
    ) -> AsyncGenerator[str | ToolCallDelta, None]:
        """The streamed text and tool-call pieces; every failure leaves as a `ModelError`."""
        import openai

        client, retries = self._clients.pick(max_retries)
        try:
            chunks = await client.chat.completions.create(
                model=self._model,
                messages=wire,
                stream=True,
                stream_options={"include_usage": True} if self._stream_usage else openai.omit,
                stop=sampling.stop,
                temperature=sampling.temperature,
                max_tokens=sampling.max_tokens,
                max_completion_tokens=sampling.max_completion_tokens,
                seed=sampling.seed,
                top_p=sampling.top_p,
                presence_penalty=sampling.presence_penalty,
                frequency_penalty=sampling.frequency_penalty,
                tools=sampling.tools,
                tool_choice=sampling.tool_choice,
                extra_body=sampling.extra_body,
                extra_headers=sampling.extra_headers,
            )
            async with chunks:
                async for chunk in chunks:
                    for piece in state.read(chunk):
                        yield piece
            if not state.chunks:
                raise no_events(chunks.response.headers.get("content-type"))
        except openai.OpenAIError as err:
            raise self._failure(err, retries) from None
        except Exception as err:  # the connection, the SDK's parsing or ours failed
            raise self._unexpected(err, _NOT_A_STREAM) from err

    def _sampling(self, options: GenerateOptions) -> _Sampling:
        from openai import omit

        remember_header_secrets(options.headers)  # a credential sent must never be shown
        max_tokens = options.max_tokens if options.max_tokens is not None else omit
        return _Sampling(
            stop=list(options.stop) if options.stop else omit,
            temperature=_given(options.temperature),
            max_tokens=max_tokens if self._max_tokens_field == "max_tokens" else omit,
            max_completion_tokens=(
                max_tokens if self._max_tokens_field == "max_completion_tokens" else omit
            ),
            seed=_given(options.seed),
            top_p=_given(options.top_p),
            presence_penalty=_given(options.presence_penalty),
            frequency_penalty=_given(options.frequency_penalty),
            tools=openai_tools(options.tools) if options.tools else omit,
            tool_choice=openai_tool_choice(options.tool_choice) if options.tools else omit,
            extra_body=self._extra_body(options),
            extra_headers=options.headers,
        )

    def _extra_body(self, options: GenerateOptions) -> Mapping[str, object] | None:
        """``top_k``, which compatible servers read but the chat completions API lacks."""
        if options.top_k is None:
            return None
        if self._official:
            self._dropped.note(options, ("top_k",), "api.openai.com refuses it")
            return None
        return {"top_k": options.top_k}

    def _unexpected(self, err: Exception, what: str) -> ModelCallError:
        moved = self._clients.moved_loop()
        return unexpected_failure(self._name, self._base_url, what, err, moved_loop=moved)

    def _failure(self, err: OpenAIError, retries: int) -> ModelError:
        import openai

        if isinstance(err, openai.APITimeoutError):
            return timeout_failure(self._name, self._timeout, retries)
        if isinstance(err, openai.APIConnectionError):
            moved = self._clients.moved_loop()
            return connection_failure(self._name, self._base_url, err, moved_loop=moved)
        if isinstance(err, openai.APIStatusError):
            message = api_message(err.body, err.message)
            return status_failure(self._name, err.status_code, message, retries)
        if isinstance(err, openai.APIError):
            return ModelCallError(f"{self._name}: {api_message(err.body, err.message)}")
        return ModelCallError(f"{self._name}: {err}")


def _loop_clients(client: AsyncOpenAI, *, given: bool) -> LoopClients[AsyncOpenAI]:
    import openai

    return sdk_loop_clients(client, openai.DefaultAsyncHttpxClient, given=given)


def _given(value: _T | None) -> _T | Omit:
    """``value``, or the SDK's ``omit`` so that the field stays out of the request."""
    from openai import omit

    return value if value is not None else omit
