"""Model adapters: one `Model` protocol over OpenAI-style and Anthropic endpoints.

A `Model` turns a conversation of `Message` items into a `ModelResponse`, whole
(``generate``) or piece by piece (``stream``: `TextDelta` items, then the response).
`resolve_model` builds one from a ``provider:model`` string; `ScriptedModel` replays
fixed outputs for tests. Every failure is a `ModelError`.

>>> import asyncio
>>> model = resolve_model(ScriptedModel(["Final Answer: 42"]))
>>> reply = asyncio.run(model.generate([Message.text("user", "6 * 7?")]))
>>> reply.text, reply.stop_reason
('Final Answer: 42', 'stop')
"""

from agents.models._anthropic import AnthropicModel
from agents.models._errors import (
    ModelCallError,
    ModelConfigError,
    ModelError,
    ModelTimeoutError,
    ScriptExhaustedError,
    UnsupportedContentError,
)
from agents.models._openai import OpenAIChatModel
from agents.models._resolve import resolve_model
from agents.models._scripted import ScriptedModel, ScriptedRequest, estimate_tokens
from agents.models._types import (
    STOP_REASONS,
    GenerateOptions,
    Message,
    Model,
    ModelResponse,
    Role,
    StopReason,
    TextDelta,
    Usage,
)

__all__ = [
    "STOP_REASONS",
    "AnthropicModel",
    "GenerateOptions",
    "Message",
    "Model",
    "ModelCallError",
    "ModelConfigError",
    "ModelError",
    "ModelResponse",
    "ModelTimeoutError",
    "OpenAIChatModel",
    "Role",
    "ScriptExhaustedError",
    "ScriptedModel",
    "ScriptedRequest",
    "StopReason",
    "TextDelta",
    "UnsupportedContentError",
    "Usage",
    "estimate_tokens",
    "resolve_model",
]
