"""The names the GenAI semantic conventions give spans and attributes, and our values in them.

The conventions (``gen_ai.*``, ``error.type``, ``mcp.*``) are spelled out here rather
than read from ``opentelemetry-semantic-conventions``: only the API is a dependency, and
these names are the contract a backend reads. What the conventions have no name for
goes under ``gent.`` (runs, steps, extensions).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Final
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from agents.models import GenerateOptions

__all__ = [
    "ERROR_TYPE",
    "FINISH_REASONS",
    "Attributes",
    "finish_reason",
    "model_parts",
    "request_attributes",
    "server_attributes",
]

Attributes = dict[str, "str | bool | int | float | list[str]"]

# Operations and the spans they name.
OPERATION = "gen_ai.operation.name"
INVOKE_AGENT = "invoke_agent"
CHAT = "chat"
EXECUTE_TOOL = "execute_tool"
EXECUTE_CODE = "execute_code"  # ours: a code-mode program, its tool calls' spans under it

PROVIDER = "gen_ai.provider.name"
AGENT_NAME = "gen_ai.agent.name"
REQUEST_MODEL = "gen_ai.request.model"
REQUEST_STREAM = "gen_ai.request.stream"
RESPONSE_MODEL = "gen_ai.response.model"
RESPONSE_ID = "gen_ai.response.id"
FINISH = "gen_ai.response.finish_reasons"
INPUT_TOKENS = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
CACHE_READ_TOKENS = "gen_ai.usage.cache_read.input_tokens"
ERROR_TYPE = "error.type"
OTHER_ERROR = "_OTHER"
"""The conventions' ``error.type`` when nothing more precise is known."""

TOOL_NAME = "gen_ai.tool.name"
TOOL_CALL_ID = "gen_ai.tool.call.id"
TOOL_TYPE = "gen_ai.tool.type"
TOOL_DESCRIPTION = "gen_ai.tool.description"

# Opt-in content (``capture_content=True``): JSON text on spans, as the conventions allow.
INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = "gen_ai.output.messages"
SYSTEM_INSTRUCTIONS = "gen_ai.system_instructions"
TOOL_DEFINITIONS = "gen_ai.tool.definitions"
TOOL_ARGUMENTS = "gen_ai.tool.call.arguments"
TOOL_RESULT = "gen_ai.tool.call.result"

# MCP client spans (the conventions' ``mcp.client`` span).
MCP_METHOD = "mcp.method.name"
MCP_PROTOCOL = "mcp.protocol.version"
NETWORK_TRANSPORT = "network.transport"
SERVER_ADDRESS = "server.address"
SERVER_PORT = "server.port"

# Ours: what a run and its extensions know that the conventions have no name for.
RUN_ID = "gent.run.id"
STOPPED_BY = "gent.run.stopped_by"
STEPS = "gent.run.steps"
STEP = "gent.step"
PROTOCOL = "gent.agent.protocol"

_PROVIDERS: Final[Mapping[str, str]] = {
    "google": "gcp.gemini",  # the generativelanguage endpoint (AI Studio)
    "mistral": "mistral_ai",
    "xai": "x_ai",
    "moonshot": "moonshot_ai",
    "bedrock": "aws.bedrock",
    "azure": "azure.ai.openai",
}
"""Our provider prefixes whose well-known name in the conventions differs; the others
(``openai``, ``anthropic``, ``groq``, ``deepseek``, a custom one) are used as they are."""

FINISH_REASONS: Final[Mapping[str, str]] = {
    "stop": "stop",
    "stop_sequence": "stop",
    "length": "length",
    "tool_use": "tool_call",
    "content_filter": "content_filter",
    "error": "error",
}
"""Our ``StopReason`` words as the conventions' finish reasons (``other`` stays ``other``)."""


def model_parts(name: str) -> tuple[str, str]:
    """The provider (as the conventions name it) and the model id of a model's name.

    >>> model_parts("openai:gpt-4.1-mini"), model_parts("google:gemini-2.5-flash")
    (('openai', 'gpt-4.1-mini'), ('gcp.gemini', 'gemini-2.5-flash'))
    >>> model_parts("scripted")
    ('scripted', 'scripted')
    """
    provider, colon, model = name.partition(":")
    if not colon:
        return name, name
    return _PROVIDERS.get(provider, provider), model


def server_attributes(base_url: str) -> Attributes:
    """``server.address`` and ``server.port`` of the endpoint a model calls (the port
    its scheme implies when the URL gives none); nothing for no URL, or one without a
    host. Only the host and the port: never the URL's user, password or query.

    >>> server_attributes("https://key:s3cret@api.example.com/v1?api-key=k")
    {'server.address': 'api.example.com', 'server.port': 443}
    >>> server_attributes("http://127.0.0.1:8080/v1"), server_attributes("")
    ({'server.address': '127.0.0.1', 'server.port': 8080}, {})
    """
    if not base_url:
        return {}
    try:
        parts = urlsplit(base_url)
        host, port = parts.hostname, parts.port
    except ValueError:  # a port that is not a number
        return {}
    if not host:
        return {}
    found: Attributes = {SERVER_ADDRESS: host}
    port = port if port is not None else _DEFAULT_PORTS.get(parts.scheme.lower())
    if port is not None:
        found[SERVER_PORT] = port
    return found


_DEFAULT_PORTS: Final[Mapping[str, int]] = {"https": 443, "http": 80}


def finish_reason(stop_reason: str) -> str:
    """``stop_reason`` as the conventions' finish reason.

    >>> finish_reason("tool_use"), finish_reason("stop_sequence"), finish_reason("other")
    ('tool_call', 'stop', 'other')
    """
    return FINISH_REASONS.get(stop_reason, stop_reason)


def request_attributes(options: GenerateOptions) -> Attributes:
    """The sampling options a call was made with, as ``gen_ai.request.*`` attributes.

    Headers are never among them: their values may be credentials.

    >>> from agents.models import GenerateOptions
    >>> request_attributes(GenerateOptions(temperature=0.0, max_tokens=64, stop=("</a>",)))
    {'gen_ai.request.temperature': 0.0, 'gen_ai.request.max_tokens': 64, \
'gen_ai.request.stop_sequences': ['</a>']}
    """
    found: Attributes = {}
    for option, value in (
        ("temperature", options.temperature),
        ("max_tokens", options.max_tokens),
        ("top_p", options.top_p),
        ("top_k", options.top_k),
        ("presence_penalty", options.presence_penalty),
        ("frequency_penalty", options.frequency_penalty),
        ("seed", options.seed),
    ):
        if value is not None:
            found[f"gen_ai.request.{option}"] = value
    if options.stop:
        found["gen_ai.request.stop_sequences"] = list(options.stop)
    return found
