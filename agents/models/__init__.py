"""Model adapters: one `Model` protocol over OpenAI-style and Anthropic endpoints.

A `Model` turns a conversation of `Message` items into a `ModelResponse`, whole
(``generate``) or piece by piece (``stream``: `TextDelta` items, then the response).
`resolve_model` builds one from a ``provider:model`` string; `ScriptedModel` replays
fixed outputs for tests. Every failure is a `ModelError`.

`AnthropicModel` and `OpenAIChatModel` are loaded on first use (PEP 562
``__getattr__``), and their SDKs only when a model is built, so importing this
package costs neither ``anthropic`` nor ``openai``.

What lives here: the protocol and its values (``_types``), errors (``_errors``,
``_failures``), reading answers (``_responses``), one module per provider for the
client (``_openai``, ``_anthropic``), its request wire (``_openai_wire``,
``_anthropic_wire``) and, for OpenAI, its answer reading (``_openai_read``), event-loop
clients (``_loop_clients``), ``ScriptedModel``, conversations as JSON and
``resolve_model``. It may import ``toolchain`` (content parts, redaction) and the
provider SDKs, lazily; no other part of ``agents`` but ``agents._errors`` (``ModelError``
is an ``AgentError``): everything there stands on it.
Public objects keep their defining module's ``__module__`` (see ``agents``).

>>> import asyncio
>>> model = resolve_model(ScriptedModel(["Final Answer: 42"]))
>>> reply = asyncio.run(model.generate([Message.text("user", "6 * 7?")]))
>>> reply.text, reply.stop_reason
('Final Answer: 42', 'stop')
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from agents.models._conversation import (
    CONVERSATION_VERSION,
    messages_from_json,
    messages_to_json,
)
from agents.models._errors import (
    ModelCallError,
    ModelConfigError,
    ModelError,
    ModelTimeoutError,
    ScriptExhaustedError,
    UnsupportedContentError,
)
from agents.models._resolve import (
    BUILTIN_PROVIDERS,
    ProviderSettings,
    provider_settings,
    resolve_model,
)
from agents.models._scripted import ScriptedModel, ScriptedReply, ScriptedRequest, estimate_tokens
from agents.models._types import (
    STOP_REASONS,
    GenerateOptions,
    Message,
    Model,
    ModelResponse,
    Role,
    StopReason,
    TextDelta,
    ToolCallDelta,
    ToolCallRequest,
    ToolChoice,
    ToolSpec,
    Usage,
)

if TYPE_CHECKING:
    from agents.models._anthropic import AnthropicModel
    from agents.models._openai import OpenAIChatModel

__all__ = [
    "BUILTIN_PROVIDERS",
    "CONVERSATION_VERSION",
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
    "ProviderSettings",
    "Role",
    "ScriptExhaustedError",
    "ScriptedModel",
    "ScriptedReply",
    "ScriptedRequest",
    "StopReason",
    "TextDelta",
    "ToolCallDelta",
    "ToolCallRequest",
    "ToolChoice",
    "ToolSpec",
    "UnsupportedContentError",
    "Usage",
    "estimate_tokens",
    "messages_from_json",
    "messages_to_json",
    "provider_settings",
    "resolve_model",
]

_LAZY = {
    "AnthropicModel": "agents.models._anthropic",
    "OpenAIChatModel": "agents.models._openai",
}


def __getattr__(name: str) -> object:
    """Load a provider adapter the first time it is asked for (PEP 562)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value: object = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
