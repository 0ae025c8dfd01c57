"""`OpenAIChatModel`: the chat completions API through the official ``openai`` SDK."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Literal

import openai
from openai import AsyncOpenAI, Omit, omit

from agents.models._errors import ModelCallError, ModelConfigError, ModelError
from agents.models._failures import (
    api_message,
    connection_failure,
    status_failure,
    timeout_failure,
)
from agents.models._openai_wire import openai_messages, openai_stop_reason
from agents.models._types import GenerateOptions, Message, ModelResponse, TextDelta, Usage

__all__ = ["OpenAIChatModel"]

MaxTokensField = Literal["max_tokens", "max_completion_tokens"]


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
    left over is raised as `ModelCallError` (`ModelTimeoutError` for timeouts). Images
    go as data URLs, wav/mp3 audio as ``input_audio``, other inline files as ``file``
    parts; anything else raises `UnsupportedContentError`.

    ``max_tokens_field`` picks the request field for ``GenerateOptions.max_tokens``:
    by default ``max_completion_tokens`` on api.openai.com (its reasoning models refuse
    ``max_tokens``) and ``max_tokens`` elsewhere, which every compatible server knows.
    Set ``stream_usage=False`` for a server that refuses ``stream_options``. A ready
    ``client`` replaces ``api_key``, ``base_url``, ``timeout`` and ``max_retries``.

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
            try:
                client = AsyncOpenAI(
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
        except openai.OpenAIError as err:
            raise self._failure(err) from err
        if not completion.choices:
            raise ModelCallError(f"{self._name}: the response holds no choices")
        choice = completion.choices[0]
        usage = completion.usage
        refused = choice.message.content is None and bool(choice.message.refusal)
        return ModelResponse(
            text=choice.message.content or "",
            stop_reason=(
                "content_filter"
                if refused
                else openai_stop_reason(choice.finish_reason, choice.model_extra, opts)
            ),
            usage=Usage(usage.prompt_tokens, usage.completion_tokens) if usage else Usage(),
            model=completion.model or self._model,
        )

    async def stream(
        self, messages: Sequence[Message], options: GenerateOptions | None = None
    ) -> AsyncIterator[TextDelta | ModelResponse]:
        """A chat completion over server-sent events, then its `ModelResponse`."""
        opts = options if options is not None else GenerateOptions()
        wire = openai_messages(messages)
        sampling = self._sampling(opts)
        pieces: list[str] = []
        finish_reason: str | None = None
        extra: dict[str, object] | None = None
        usage = Usage()
        model = self._model
        try:
            chunks = await self._client.chat.completions.create(
                model=self._model,
                messages=wire,
                stream=True,
                stream_options={"include_usage": True} if self._stream_usage else omit,
                stop=sampling.stop,
                temperature=sampling.temperature,
                max_tokens=sampling.max_tokens,
                max_completion_tokens=sampling.max_completion_tokens,
                seed=sampling.seed,
            )
            async with chunks:
                async for chunk in chunks:
                    model = chunk.model or model
                    if chunk.usage is not None:
                        usage = Usage(chunk.usage.prompt_tokens, chunk.usage.completion_tokens)
                    for choice in chunk.choices:
                        if choice.index != 0:
                            continue
                        if choice.delta.content:
                            pieces.append(choice.delta.content)
                            yield TextDelta(choice.delta.content)
                        if choice.finish_reason is not None:
                            finish_reason, extra = choice.finish_reason, choice.model_extra
        except openai.OpenAIError as err:
            raise self._failure(err) from err
        yield ModelResponse(
            "".join(pieces), openai_stop_reason(finish_reason, extra, opts), usage, model
        )

    def _sampling(self, options: GenerateOptions) -> _Sampling:
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

    def _failure(self, err: openai.OpenAIError) -> ModelError:
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
