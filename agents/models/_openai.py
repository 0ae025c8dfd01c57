"""`OpenAIChatModel`: the chat completions API through the official ``openai`` SDK.

The SDK is imported when the first model is built, not with this module, so that
``import agents`` stays light (the SDK weighs seconds and tens of MiB).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from agents.models._errors import ModelCallError, ModelConfigError, ModelError
from agents.models._failures import (
    api_message,
    connection_failure,
    malformed_failure,
    status_failure,
    timeout_failure,
)
from agents.models._openai_wire import openai_messages, openai_stop_reason
from agents.models._responses import (
    Malformed,
    checked_body,
    checked_object,
    field,
    items,
    no_events,
    optional_text,
    tokens,
)
from agents.models._types import GenerateOptions, Message, ModelResponse, TextDelta, Usage

if TYPE_CHECKING:
    from openai import AsyncOpenAI, Omit, OpenAIError
    from openai.types.chat import ChatCompletionMessageParam

__all__ = ["OpenAIChatModel"]

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


class OpenAIChatModel:
    """A `Model` on any chat completions endpoint: OpenAI, vLLM, llama.cpp, Ollama …

    Retries on 408/409/429/5xx and on timeouts are the SDK's own (exponential backoff
    that honours ``retry-after`` and ``retry-after-ms``), up to ``max_retries``; what is
    left over is raised as `ModelCallError` (`ModelTimeoutError` for timeouts), and so
    is an answer that is not a chat completion (HTML, a JSON array, ``"content": 42``,
    a stream line that is not JSON). Images go as data URLs, wav/mp3 audio as
    ``input_audio``, other inline files as ``file`` parts; anything else raises
    `UnsupportedContentError`.

    ``max_tokens_field`` picks the request field for ``GenerateOptions.max_tokens``:
    by default ``max_completion_tokens`` on api.openai.com (its reasoning models refuse
    ``max_tokens``) and ``max_tokens`` elsewhere, which every compatible server knows.
    Set ``stream_usage=False`` for a server that refuses ``stream_options``. A ready
    ``client`` replaces ``api_key``, ``base_url``, ``timeout`` and ``max_retries``.

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
        self._client = client
        self._timeout = client.timeout if isinstance(client.timeout, float | int) else None
        self._max_retries = client.max_retries
        self._base_url = str(client.base_url)
        if max_tokens_field is None:
            official = client.base_url.host == "api.openai.com"
            max_tokens_field = "max_completion_tokens" if official else "max_tokens"
        self._max_tokens_field = max_tokens_field
        self._stream_usage = stream_usage

    async def aclose(self) -> None:
        """Close the SDK client and its connections; the model is unusable afterwards."""
        await self._client.close()

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
        try:
            completion = await self._client.chat.completions.create(
                model=self._model,
                messages=wire,
                stream=False,
                stop=sampling.stop,
                temperature=sampling.temperature,
                max_tokens=sampling.max_tokens,
                max_completion_tokens=sampling.max_completion_tokens,
                seed=sampling.seed,
            )
            return _read_completion(completion, opts, self._model)
        except openai.OpenAIError as err:
            raise self._failure(err) from None
        except Exception as err:  # the SDK's parsing, or ours, choked on the answer
            raise malformed_failure(self._name, _NOT_A_COMPLETION, err) from err

    async def stream(
        self, messages: Sequence[Message], options: GenerateOptions | None = None
    ) -> AsyncIterator[TextDelta | ModelResponse]:
        """A chat completion over server-sent events, then its `ModelResponse`."""
        opts = options if options is not None else GenerateOptions()
        wire = openai_messages(messages)
        state = _StreamState(self._model)
        pieces: list[str] = []
        async with contextlib.aclosing(self._deltas(wire, self._sampling(opts), state)) as deltas:
            async for text in deltas:
                pieces.append(text)
                yield TextDelta(text)
        stop_reason = openai_stop_reason(state.finish_reason, state.extra, opts)
        yield ModelResponse("".join(pieces), stop_reason, state.usage, state.model)

    async def _deltas(
        self, wire: list[ChatCompletionMessageParam], sampling: _Sampling, state: _StreamState
    ) -> AsyncGenerator[str, None]:
        """The streamed text pieces; every failure leaves as a `ModelError`."""
        import openai

        try:
            chunks = await self._client.chat.completions.create(
                model=self._model,
                messages=wire,
                stream=True,
                stream_options={"include_usage": True} if self._stream_usage else openai.omit,
                stop=sampling.stop,
                temperature=sampling.temperature,
                max_tokens=sampling.max_tokens,
                max_completion_tokens=sampling.max_completion_tokens,
                seed=sampling.seed,
            )
            async with chunks:
                async for chunk in chunks:
                    text = state.read(chunk)
                    if text:
                        yield text
            if not state.chunks:
                raise no_events(chunks.response.headers.get("content-type"))
        except openai.OpenAIError as err:
            raise self._failure(err) from None
        except Exception as err:  # the SDK's parsing, or ours, choked on the answer
            raise malformed_failure(self._name, _NOT_A_STREAM, err) from err

    def _sampling(self, options: GenerateOptions) -> _Sampling:
        from openai import omit

        max_tokens = options.max_tokens if options.max_tokens is not None else omit
        return _Sampling(
            stop=list(options.stop) if options.stop else omit,
            temperature=options.temperature if options.temperature is not None else omit,
            max_tokens=max_tokens if self._max_tokens_field == "max_tokens" else omit,
            max_completion_tokens=(
                max_tokens if self._max_tokens_field == "max_completion_tokens" else omit
            ),
            seed=options.seed if options.seed is not None else omit,
        )

    def _failure(self, err: OpenAIError) -> ModelError:
        import openai

        if isinstance(err, openai.APITimeoutError):
            return timeout_failure(self._name, self._timeout, self._max_retries)
        if isinstance(err, openai.APIConnectionError):
            return connection_failure(self._name, self._base_url, err)
        if isinstance(err, openai.APIStatusError):
            message = api_message(err.body, err.message)
            return status_failure(self._name, err.status_code, message, self._max_retries)
        if isinstance(err, openai.APIError):
            return ModelCallError(f"{self._name}: {api_message(err.body, err.message)}")
        return ModelCallError(f"{self._name}: {err}")


def _read_completion(
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
    refused = content is None and bool(refusal)
    return ModelResponse(
        text=content or "",
        stop_reason=(
            "content_filter"
            if refused
            else openai_stop_reason(finish_reason, choice.model_extra, options)
        ),
        usage=_read_usage(field(body, "usage"), "usage"),
        model=optional_text(field(body, "model"), "model") or default_model,
    )


def _read_usage(value: object, path: str) -> Usage:
    if value is None:
        return Usage()
    usage = checked_object(value, path)
    return Usage(
        tokens(field(usage, "prompt_tokens"), f"{path}.prompt_tokens"),
        tokens(field(usage, "completion_tokens"), f"{path}.completion_tokens"),
    )


class _StreamState:
    """What a stream's chunks said besides their text: model, usage, finish reason."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.chunks = 0
        self.usage = Usage()
        self.finish_reason: str | None = None
        self.extra: Mapping[str, object] | None = None

    def read(self, chunk: object) -> str:
        """The text of choice 0 in one ``chat.completion.chunk``; `Malformed` if it is none."""
        self.chunks += 1
        body = checked_object(chunk, "a chunk")
        self.model = optional_text(field(body, "model"), "chunk.model") or self.model
        usage = field(body, "usage")
        if usage is not None:
            self.usage = _read_usage(usage, "chunk.usage")
        text: list[str] = []
        choices = items(field(body, "choices"), "chunk.choices", optional=True)
        for position, item in enumerate(choices):
            path = f"chunk.choices[{position}]"
            choice = checked_object(item, path)
            if field(choice, "index") not in (0, None):
                continue
            delta = checked_object(field(choice, "delta"), f"{path}.delta")
            content = optional_text(field(delta, "content"), f"{path}.delta.content")
            if content:
                text.append(content)
            finish_reason = optional_text(field(choice, "finish_reason"), f"{path}.finish_reason")
            if finish_reason is not None:
                self.finish_reason, self.extra = finish_reason, choice.model_extra
        return "".join(text)
