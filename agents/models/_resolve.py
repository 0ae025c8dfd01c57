"""`resolve_model`: turn a ``provider:model`` string or an alias into a `Model`."""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal

from agents.models._errors import ModelConfigError
from agents.models._types import Model

__all__ = [
    "BUILTIN_PROVIDERS",
    "Provider",
    "ProviderSettings",
    "provider_settings",
    "resolve_model",
]

ApiType = Literal["openai", "anthropic"]


@dataclass(frozen=True, slots=True)
class Provider:
    """A built-in provider: the API it speaks, its usual endpoint and key variables.

    ``base_url`` ``None`` leaves the SDK's own default (api.openai.com, api.anthropic.com);
    ``key_vars`` are read in order, the first set one wins; ``needs_key`` False (a local
    server) sends ``placeholder_key`` when none is set, since the SDKs insist on one.
    """

    api_type: ApiType
    base_url: str | None
    key_vars: tuple[str, ...]
    needs_key: bool = True
    placeholder_key: str = ""


BUILTIN_PROVIDERS: Final[Mapping[str, Provider]] = {
    "openai": Provider("openai", None, ("OPENAI_API_KEY",)),
    "anthropic": Provider("anthropic", None, ("ANTHROPIC_API_KEY",)),
    "google": Provider(
        "openai",
        "https://generativelanguage.googleapis.com/v1beta/openai/",
        ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    ),
    "mistral": Provider("openai", "https://api.mistral.ai/v1", ("MISTRAL_API_KEY",)),
    "groq": Provider("openai", "https://api.groq.com/openai/v1", ("GROQ_API_KEY",)),
    "deepseek": Provider("openai", "https://api.deepseek.com/v1", ("DEEPSEEK_API_KEY",)),
    "openrouter": Provider("openai", "https://openrouter.ai/api/v1", ("OPENROUTER_API_KEY",)),
    "ollama": Provider(
        "openai",
        "http://localhost:11434/v1",
        ("OLLAMA_API_KEY",),
        needs_key=False,
        placeholder_key="ollama",
    ),
}
"""The providers a model string may name without any configuration but a key.

``P_API_BASE`` (``P`` the provider upper-cased) overrides a built-in's endpoint, and
``P_API_TYPE`` its API type, as for a custom provider."""

_API_TYPES: Final = ("openai", "anthropic")
_ALIAS_PREFIX: Final = "LM_MODEL_"


@dataclass(frozen=True, slots=True)
class ProviderSettings:
    """What `resolve_model` builds a model from: nothing here has touched the network.

    >>> provider_settings("ollama:llama3", env={})
    ProviderSettings(provider='ollama', model_id='llama3', api_type='openai', \
base_url='http://localhost:11434/v1', api_key='ollama')
    """

    provider: str
    model_id: str
    api_type: ApiType
    base_url: str | None
    api_key: str

    @property
    def name(self) -> str:
        """``provider:model_id``, the model's name in logs and transcripts."""
        return f"{self.provider}:{self.model_id}"


def _env_name(name: str) -> str:
    return re.sub(r"[^A-Z0-9]", "_", name.upper())


def resolve_model(spec: str | Model, *, env: Mapping[str, str] | None = None) -> Model:
    """The `Model` that ``spec`` names; a `Model` is returned as it is.

    ``spec`` is ``provider:model_id`` (the model id may hold more colons) or a bare
    alias ``NAME``, looked up in ``LM_MODEL_<NAME>`` (upper-cased, other characters
    turned to ``_``) whose value is ``provider:model_id``. A provider ``P`` reads
    ``P_API_KEY``, ``P_API_BASE`` (the endpoint) and ``P_API_TYPE`` (``openai`` or
    ``anthropic``). Built in (`BUILTIN_PROVIDERS`): ``openai``, ``anthropic``, and the
    OpenAI-compatible ``google`` (Gemini; ``GEMINI_API_KEY`` or ``GOOGLE_API_KEY``),
    ``mistral``, ``groq``, ``deepseek``, ``openrouter`` and ``ollama`` (local, no key
    needed); ``P_API_BASE`` overrides a built-in's endpoint. Any other provider needs
    ``P_API_BASE`` and ``P_API_KEY`` and speaks ``openai`` unless ``P_API_TYPE`` says
    otherwise. Variables come from ``env``, by default `os.environ`. Anything missing
    raises `ModelConfigError` naming the variables to set (a mistyped provider or alias
    gets a "did you mean"; a key is never echoed). Building a model makes no network
    call, and imports only the SDK its API type needs.

    >>> env = {"OLLAMA_API_BASE": "http://gpu-box:11434/v1", "LM_MODEL_FAST": "ollama:llama3.2:3b"}
    >>> resolve_model("fast", env=env).name
    'ollama:llama3.2:3b'
    """
    if not isinstance(spec, str):
        return spec
    settings = provider_settings(spec, env=env)
    # An adapter (and its SDK) is imported only when a model of its kind is built.
    if settings.api_type == "anthropic":
        from agents.models._anthropic import AnthropicModel

        return AnthropicModel(
            settings.model_id,
            api_key=settings.api_key,
            base_url=settings.base_url,
            name=settings.name,
        )
    from agents.models._openai import OpenAIChatModel

    return OpenAIChatModel(
        settings.model_id, api_key=settings.api_key, base_url=settings.base_url, name=settings.name
    )


def provider_settings(spec: str, *, env: Mapping[str, str] | None = None) -> ProviderSettings:
    """The provider, endpoint, API type and key that the model string ``spec`` names.

    The rules are `resolve_model`'s; this stops short of building the model.

    >>> s = provider_settings("groq:llama-3.3-70b", env={"GROQ_API_KEY": "gsk"})
    >>> s.api_type, s.base_url
    ('openai', 'https://api.groq.com/openai/v1')
    """
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
    builtin = BUILTIN_PROVIDERS.get(provider)
    base_url = environ.get(base_var, "").strip() or None
    if builtin is None and base_url is None:
        raise ModelConfigError(
            f"unknown model provider {provider!r} in {spec!r}"
            f"{_did_you_mean(provider, _known_providers(environ))}: the built-in providers "
            f"are {', '.join(BUILTIN_PROVIDERS)}; for another endpoint set {base_var} (its "
            f"base URL) and {key_var}, and {type_var}=anthropic if it speaks the Anthropic API"
        )
    if base_url is None and builtin is not None:
        base_url = builtin.base_url
    api_type = _api_type(environ, type_var, builtin.api_type if builtin else "openai")
    key_vars = builtin.key_vars if builtin is not None else (key_var,)
    api_key = next((v for v in (environ.get(k, "").strip() for k in key_vars) if v), "")
    if not api_key:
        if builtin is not None and not builtin.needs_key:
            api_key = builtin.placeholder_key
        else:
            hint = "" if builtin else " (any non-empty value if the server needs no key)"
            wanted = " or ".join(key_vars)
            raise ModelConfigError(f"model {spec!r} needs an API key: set {wanted}{hint}")
    return ProviderSettings(provider, model_id, api_type, base_url, api_key)


def _api_type(environ: Mapping[str, str], type_var: str, default: ApiType) -> ApiType:
    given = environ.get(type_var, "").strip().lower()
    if not given:
        return default
    if given == "openai":
        return "openai"
    if given == "anthropic":
        return "anthropic"
    raise ModelConfigError(
        f"{type_var}={environ.get(type_var)!r} is not an API type: set it to openai or anthropic"
    )


def _known_providers(environ: Mapping[str, str]) -> list[str]:
    """The built-in providers and the custom ones ``environ`` configures (lower-cased)."""
    custom = [
        name[: -len("_API_BASE")].lower()
        for name in environ
        if name.endswith("_API_BASE") and len(name) > len("_API_BASE")
    ]
    return [*BUILTIN_PROVIDERS, *custom]


def _did_you_mean(word: str, candidates: list[str]) -> str:
    close = difflib.get_close_matches(word, candidates, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _dealias(spec: str, environ: Mapping[str, str]) -> str:
    if ":" in spec:
        return spec
    if not spec:
        raise ModelConfigError("empty model name: pass provider:model_id, e.g. openai:gpt-4o-mini")
    var = f"{_ALIAS_PREFIX}{_env_name(spec)}"
    target = environ.get(var, "").strip()
    if not target:
        aliases = [
            name[len(_ALIAS_PREFIX) :].lower()
            for name in environ
            if name.startswith(_ALIAS_PREFIX) and len(name) > len(_ALIAS_PREFIX)
        ]
        hint = _did_you_mean(spec.lower(), aliases)
        if spec == "scripted":
            hint += "; scripted models are built in code with ScriptedModel"
        raise ModelConfigError(
            f"model {spec!r} has no provider and is no alias{hint}: write provider:model_id "
            f"(e.g. openai:gpt-4o-mini) or set {var}=provider:model_id"
        )
    if ":" not in target:
        raise ModelConfigError(
            f"{var}={target!r} must have the form provider:model_id, e.g. openai:gpt-4o-mini"
        )
    return target
