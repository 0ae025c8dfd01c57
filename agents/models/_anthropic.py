"""`AnthropicModel`: the Messages API through the official ``anthropic`` SDK."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence

import anthropic
import httpx2
from anthropic import AsyncAnthropic, omit
from anthropic import types as wire

from agents.models._anthropic_wire import anthropic_request, anthropic_stop_reason
from agents.models._errors import ModelCallError, ModelConfigError, ModelError
from agents.models._failures import (
    api_message,
    connection_failure,
    status_failure,
    timeout_failure,
)
from agents.models._types import GenerateOptions, Message, ModelResponse, TextDelta, Usage

__all__ = ["AnthropicModel"]


class AnthropicModel:
    """A `Model` on the Anthropic Messages API (or a server that speaks it).

    System messages are joined into the ``system`` parameter. ``max_tokens`` is required
    by the API, so ``GenerateOptions.max_tokens`` falls back to the constructor's. The
    SDK retries 408/409/429/5xx and timeouts with backoff that honours ``retry-after``
    and ``retry-after-ms``, up to ``max_retries``; what is left is raised as
    `ModelCallError` (`ModelTimeoutError` for timeouts). Images go as base64 or URL
    blocks, PDFs and plain text as documents; audio raises `UnsupportedContentError`.

    The SDK has no ``temperature`` parameter any more (newer models reject it), so a
    ``temperature`` that is set is sent as an extra body field, and only then; the API
    has no ``seed``, so that option is ignored. Input usage counts cached tokens too.
    A ready ``client`` replaces ``api_key``, ``base_url``, ``timeout`` and ``max_retries``.

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
    ) -> None:
        self._model = model
        self._name = name if name is not None else f"anthropic:{model}"
        if client is None:
            try:
                client = AsyncAnthropic(
                    api_key=api_key, base_url=base_url, timeout=timeout, max_retries=max_retries
                )
            except anthropic.AnthropicError as err:
                raise ModelConfigError(
                    f"{self._name}: cannot set up the client; pass api_key= or set "
                    f"ANTHROPIC_API_KEY ({err})"
                ) from err
        self._client = client
        self._timeout = client.timeout if isinstance(client.timeout, float | int) else None
        self._max_retries = client.max_retries
        self._base_url = str(client.base_url)
        self._max_tokens = max_tokens

    async def aclose(self) -> None:
        """Close the SDK client and its connections; the model is unusable afterwards."""
        await self._client.close()

    @property
    def name(self) -> str:
        """``anthropic:<model>`` unless another ``name`` was given."""
        return self._name

    async def generate(
        self, messages: Sequence[Message], options: GenerateOptions | None = None
    ) -> ModelResponse:
        """One whole message."""
        opts = options if options is not None else GenerateOptions()
        system, turns = anthropic_request(messages)
        try:
            reply = await self._client.messages.create(
                model=self._model,
                messages=turns,
                max_tokens=opts.max_tokens if opts.max_tokens is not None else self._max_tokens,
                system=system if system is not None else omit,
                stop_sequences=list(opts.stop) if opts.stop else omit,
                extra_body=self._extra_body(opts),
                stream=False,
            )
        except (anthropic.AnthropicError, httpx2.HTTPError) as err:
            raise self._failure(err) from err
        text = "".join(block.text for block in reply.content if isinstance(block, wire.TextBlock))
        return ModelResponse(
            text=text,
            stop_reason=anthropic_stop_reason(reply.stop_reason),
            usage=Usage(_input_tokens(reply.usage), reply.usage.output_tokens),
            model=reply.model or self._model,
        )

    async def stream(
        self, messages: Sequence[Message], options: GenerateOptions | None = None
    ) -> AsyncIterator[TextDelta | ModelResponse]:
        """A message over server-sent events, then its `ModelResponse`."""
        opts = options if options is not None else GenerateOptions()
        system, turns = anthropic_request(messages)
        pieces: list[str] = []
        stop_reason: str | None = None
        input_tokens = output_tokens = 0
        model = self._model
        try:
            events = await self._client.messages.create(
                model=self._model,
                messages=turns,
                max_tokens=opts.max_tokens if opts.max_tokens is not None else self._max_tokens,
                system=system if system is not None else omit,
                stop_sequences=list(opts.stop) if opts.stop else omit,
                extra_body=self._extra_body(opts),
                stream=True,
            )
            async with events:
                async for event in events:
                    if isinstance(event, wire.RawMessageStartEvent):
                        model = event.message.model or model
                        input_tokens = _input_tokens(event.message.usage)
                        output_tokens = event.message.usage.output_tokens
                    elif isinstance(event, wire.RawContentBlockDeltaEvent):
                        if isinstance(event.delta, wire.TextDelta) and event.delta.text:
                            pieces.append(event.delta.text)
                            yield TextDelta(event.delta.text)
                    elif isinstance(event, wire.RawMessageDeltaEvent):
                        # Counts in message_delta are cumulative, so they replace, not add.
                        stop_reason = event.delta.stop_reason or stop_reason
                        output_tokens = event.usage.output_tokens
                        if event.usage.input_tokens is not None:
                            input_tokens = (
                                event.usage.input_tokens
                                + (event.usage.cache_creation_input_tokens or 0)
                                + (event.usage.cache_read_input_tokens or 0)
                            )
        except (anthropic.AnthropicError, httpx2.HTTPError) as err:
            # The SDK leaves transport errors raised while reading the stream unwrapped.
            raise self._failure(err) from err
        yield ModelResponse(
            "".join(pieces),
            anthropic_stop_reason(stop_reason),
            Usage(input_tokens, output_tokens),
            model,
        )

    @staticmethod
    def _extra_body(options: GenerateOptions) -> Mapping[str, object] | None:
        return {"temperature": options.temperature} if options.temperature is not None else None

    def _failure(self, err: anthropic.AnthropicError | httpx2.HTTPError) -> ModelError:
        if isinstance(err, anthropic.APITimeoutError | httpx2.TimeoutException):
            return timeout_failure(self._name, self._timeout, self._max_retries)
        if isinstance(err, anthropic.APIConnectionError | httpx2.TransportError):
            return connection_failure(self._name, self._base_url, err)
        if isinstance(err, anthropic.APIStatusError):
            message = api_message(err.body, err.message)
            return status_failure(self._name, err.status_code, message, self._max_retries)
        if isinstance(err, anthropic.APIError):
            return ModelCallError(f"{self._name}: {api_message(err.body, err.message)}")
        return ModelCallError(f"{self._name}: {err}")


def _input_tokens(usage: wire.Usage) -> int:
    return (
        usage.input_tokens
        + (usage.cache_creation_input_tokens or 0)
        + (usage.cache_read_input_tokens or 0)
    )
