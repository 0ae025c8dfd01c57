"""`resolve_model`: turn a ``provider:model`` string or an alias into a `Model`."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from agents.models._errors import ModelConfigError
from agents.models._types import Model

__all__ = ["resolve_model"]

_BUILTIN = ("openai", "anthropic")
_API_TYPES = ("openai", "anthropic")


def _env_name(name: str) -> str:
    return re.sub(r"[^A-Z0-9]", "_", name.upper())


def resolve_model(spec: str | Model, *, env: Mapping[str, str] | None = None) -> Model:
    """The `Model` that ``spec`` names; a `Model` is returned as it is.

    ``spec`` is ``provider:model_id`` (the model id may hold more colons) or a bare
    alias ``NAME``, looked up in ``LM_MODEL_<NAME>`` (upper-cased, other characters
    turned to ``_``) whose value is ``provider:model_id``. A provider ``P`` reads
    ``P_API_KEY`` (required), ``P_API_BASE`` (the endpoint) and ``P_API_TYPE``
    (``openai`` or ``anthropic``). ``openai`` and ``anthropic`` are built in; any other
    provider needs ``P_API_BASE`` and speaks ``openai`` unless ``P_API_TYPE`` says
    otherwise. Variables come from ``env``, by default `os.environ`. Anything missing
    raises `ModelConfigError` naming the variables to set (never echoing a key: error
    messages are redacted).

    >>> env = {"OLLAMA_API_BASE": "http://localhost:11434/v1", "OLLAMA_API_KEY": "unused",
    ...        "LM_MODEL_FAST": "ollama:llama3.2:3b"}
    >>> resolve_model("fast", env=env).name
    'ollama:llama3.2:3b'
    """
    if not isinstance(spec, str):
        return spec
    environ: Mapping[str, str] = os.environ if env is None else env
    target = _dealias(spec.strip(), environ)
    provider, _, model_id = (piece.strip() for piece in target.partition(":"))
    provider = provider.lower()
    if not provider or not model_id:
        raise ModelConfigError(
            f"model {spec!r} must have the form provider:model_id, e.g. openai:gpt-4o-mini"
        )
    prefix = _env_name(provider)
    key_var, base_var, type_var = f"{prefix}_API_KEY", f"{prefix}_API_BASE", f"{prefix}_API_TYPE"
    base_url = environ.get(base_var, "").strip() or None
    if provider not in _BUILTIN and base_url is None:
        raise ModelConfigError(
            f"unknown model provider {provider!r} in {spec!r}: the built-in providers are "
            f"openai and anthropic; for another endpoint set {base_var} (its base URL) and "
            f"{key_var}, and {type_var}=anthropic if it speaks the Anthropic API"
        )
    default_type = provider if provider in _BUILTIN else "openai"
    api_type = environ.get(type_var, "").strip().lower() or default_type
    if api_type not in _API_TYPES:
        raise ModelConfigError(
            f"{type_var}={environ.get(type_var)!r} is not an API type: "
            "set it to openai or anthropic"
        )
    api_key = environ.get(key_var, "").strip()
    if not api_key:
        hint = "" if provider in _BUILTIN else " (any non-empty value if the server needs no key)"
        raise ModelConfigError(f"model {spec!r} needs an API key: set {key_var}{hint}")
    name = f"{provider}:{model_id}"
    # An adapter (and its SDK) is imported only when a model of its kind is built.
    if api_type == "anthropic":
        from agents.models._anthropic import AnthropicModel

        return AnthropicModel(model_id, api_key=api_key, base_url=base_url, name=name)
    from agents.models._openai import OpenAIChatModel

    return OpenAIChatModel(model_id, api_key=api_key, base_url=base_url, name=name)


def _dealias(spec: str, environ: Mapping[str, str]) -> str:
    if ":" in spec:
        return spec
    if not spec:
        raise ModelConfigError("empty model name: pass provider:model_id, e.g. openai:gpt-4o-mini")
    var = f"LM_MODEL_{_env_name(spec)}"
    target = environ.get(var, "").strip()
    if not target:
        hint = (
            "; scripted models are built in code with ScriptedModel" if spec == "scripted" else ""
        )
        raise ModelConfigError(
            f"model {spec!r} has no provider and is no alias: write provider:model_id "
            f"(e.g. openai:gpt-4o-mini) or set {var}=provider:model_id{hint}"
        )
    if ":" not in target:
        raise ModelConfigError(
            f"{var}={target!r} must have the form provider:model_id, e.g. openai:gpt-4o-mini"
        )
    return target
