"""Which models an evaluation runs against: profiles from the environment, model strings.

Profiles are the tool-context-relay PoC's, read from the environment (and a ``.env``
file, see `load_env_file`):

- a **provider block** per backend, by upper-case prefix (``OPENAI``, ``OPENROUTER``,
  ``LOCAL`` …): ``<P>_API_KEY`` (or ``<P>_COMPAT_API_KEY``), ``<P>_MODEL`` (its default
  model), ``<P>_BASE_URL`` / ``<P>_BASEURL`` / ``<P>_API_BASE`` / ``<P>_ENDPOINT``
  (required but for OpenAI and our built-in providers), ``<P>_BACKEND_PROVIDER`` and
  ``<P>_API_TYPE`` (``anthropic`` for an Anthropic endpoint);
- a **profile** ``X`` (case-insensitive): ``X_PROVIDER`` (which block; by default the
  block named ``X``), ``X_MODEL``, ``X_TEMPERATURE``, ``X_BACKEND_PROVIDER``;
- the default profile: ``AGENTS_EVAL_PROFILE`` (or the PoC's ``TOOL_CONTEXT_RELAY_PROFILE``),
  else ``openai``; the model: ``--model``, else ``X_MODEL``, else the block's
  ``<P>_MODEL``, else ``gpt-4.1-mini``;
- OpenRouter (the ``OPENROUTER`` block, or any base URL on openrouter.ai): every request
  carries ``provider.allow_fallbacks=false`` and ``provider.data_collection=deny``, and
  ``provider.order=[backend]`` when a backend provider is set
  (``DEEPSEEK_BACKEND_PROVIDER=atlas-cloud/fp8``).

Besides profiles, a model is any model string of `agents.models.resolve_model`
(``openai:gpt-4o-mini``) or ``LM_MODEL_*`` alias. Nothing here needs a key until a
model is built: replaying a recording needs only the model's name.

>>> env = {"DEEPSEEK_PROVIDER": "openrouter", "DEEPSEEK_MODEL": "deepseek/deepseek-v3.2",
...        "DEEPSEEK_BACKEND_PROVIDER": "atlas-cloud/fp8", "OPENROUTER_API_KEY": "sk-or-x"}
>>> profile = resolve_profile("deepseek", env=env)
>>> profile.name, profile.extra_body()
('openrouter:deepseek/deepseek-v3.2', {'provider': {'allow_fallbacks': False, \
'data_collection': 'deny', 'order': ['atlas-cloud/fp8']}})
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal, cast
from urllib.parse import urlsplit

from agents._errors import AgentError, AgentValueError
from agents._paths import PathError, check_regular
from agents.models import BUILTIN_PROVIDERS, Model, ModelConfigError, resolve_model
from toolchain.runtime import remember_environment

if TYPE_CHECKING:
    import httpx2

__all__ = [
    "DEFAULT_MODEL",
    "PROFILE_VARIABLES",
    "EnvFileError",
    "ModelProfile",
    "ModelTarget",
    "default_profile",
    "eval_environment",
    "is_reasoning_model",
    "load_env_file",
    "model_name",
    "resolve_profile",
]

DEFAULT_MODEL: Final = "gpt-4.1-mini"
PROFILE_VARIABLES: Final = ("AGENTS_EVAL_PROFILE", "TOOL_CONTEXT_RELAY_PROFILE")
_BASE_SUFFIXES: Final = ("_BASE_URL", "_BASEURL", "_API_BASE", "_ENDPOINT")
_KEY_SUFFIXES: Final = ("_API_KEY", "_COMPAT_API_KEY")
_MAX_ENV_FILE: Final = 1 << 20
_ENV_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")
_ESCAPES: Final = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "$": "$"}
_REASONING = re.compile(r"^(o[1-9]|gpt-5|deepseek-reasoner)", re.IGNORECASE)


class EnvFileError(AgentError, ValueError):
    """A ``.env`` line that cannot be read (the message names the file and line)."""


def load_env_file(path: Path | str) -> dict[str, str]:
    """The variables of a ``.env`` file; nothing is put into ``os.environ``.

    ``KEY=value`` lines (``export`` allowed before), ``#`` comments, blank lines.
    Values may be ``"double quoted"`` (``\\n``, ``\\t``, ``\\"``, ``\\\\`` escapes),
    ``'single quoted'`` (as written) or bare (up to a `` #`` comment). Quotes close on
    the same line, and nothing is expanded: ``$HOME`` stays ``$HOME``, no command runs.

    >>> import tempfile
    >>> file = Path(tempfile.mkdtemp()) / ".env"
    >>> _ = file.write_text('export A="x\\\\ny" # note\\nB=plain value # note\\nC=\\'$HOME\\'\\n')
    >>> load_env_file(file)
    {'A': 'x\\ny', 'B': 'plain value', 'C': '$HOME'}
    """
    file = Path(path)
    try:
        if not check_regular(file):
            raise EnvFileError(f"{file}: cannot be read: No such file or directory")
        with file.open("rb") as stream:
            data = stream.read(_MAX_ENV_FILE + 1)  # bounded even if the file grows meanwhile
    except PathError as error:  # a FIFO would block, a device never end
        raise EnvFileError(str(error)) from None
    except OSError as error:
        raise EnvFileError(f"{file}: cannot be read: {error.strerror or error}") from None
    if len(data) > _MAX_ENV_FILE:
        raise EnvFileError(f"{file}: larger than {_MAX_ENV_FILE} bytes")
    try:
        text = data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
    except UnicodeDecodeError as error:
        # Only the line: the decoder's own message quotes the bytes, a key's among them.
        where = data.count(b"\n", 0, error.start) + 1
        raise EnvFileError(f"{file}:{where}: not UTF-8 text") from None
    values: dict[str, str] = {}
    for number, raw in enumerate(text.removeprefix("\ufeff").splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("export ") or line.startswith("export\t"):
            line = line[len("export") :].lstrip()
        key, equals, rest = line.partition("=")
        key = key.strip()
        if not equals or not _ENV_KEY.fullmatch(key):
            # The line is not quoted: it may be a key pasted on its own.
            raise EnvFileError(f"{file}:{number}: expected KEY=value")
        try:
            values[key] = _env_value(rest.strip())
        except ValueError as error:  # the message names the line and the variable only
            raise EnvFileError(f"{file}:{number}: {key}: {error}") from None
    return values


def _env_value(text: str) -> str:
    if not text:
        return ""
    quote = text[0]
    if quote == "'":
        end = text.find("'", 1)
        if end < 0:
            raise AgentValueError("the single quote is not closed on this line")
        _after_quote(text[end + 1 :])
        return text[1:end]
    if quote == '"':
        out: list[str] = []
        index = 1
        while index < len(text):
            char = text[index]
            if char == "\\" and index + 1 < len(text):
                following = text[index + 1]
                out.append(_ESCAPES.get(following, "\\" + following))
                index += 2
                continue
            if char == '"':
                _after_quote(text[index + 1 :])
                return "".join(out)
            out.append(char)
            index += 1
        raise AgentValueError("the double quote is not closed on this line")
    comment = re.search(r"\s#", text)
    return (text[: comment.start()] if comment else text).strip()


def _after_quote(rest: str) -> None:
    rest = rest.strip()
    if rest and not rest.startswith("#"):
        # Never quoted back: the text is as likely as not the rest of a key.
        raise AgentValueError(
            "text follows the closing quote (quote the whole value, or put a space and "
            "# before a comment)"
        )


def eval_environment(
    env_file: Path | str | None = ".env", environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The process environment over the ``.env`` file's variables (if it is a file): as
    with python-dotenv, a variable already set is never overridden."""
    merged: dict[str, str] = {}
    # Only a regular file: ".env" is also a common name for a virtualenv's folder, and
    # a FIFO would block (is_file stats, it does not open).
    if env_file is not None and Path(env_file).is_file():
        merged.update(load_env_file(env_file))
    merged.update(os.environ if environ is None else environ)
    # The keys a .env holds are the process's too from now on: blanked wherever we write.
    remember_environment({**os.environ, **merged})
    return merged


def default_profile(env: Mapping[str, str]) -> str:
    """The profile to use when none is asked for (see `PROFILE_VARIABLES`), else ``openai``."""
    for variable in PROFILE_VARIABLES:
        chosen = env.get(variable, "").strip()
        if chosen:
            return chosen
    return "openai"


def is_reasoning_model(model_id: str) -> bool:
    """Models that take no sampling temperature (OpenAI's o-series and gpt-5 …).

    >>> [is_reasoning_model(m) for m in ("gpt-5-mini", "openai/o3", "gpt-4o")]
    [True, True, False]
    """
    return bool(_REASONING.match(model_id.rsplit("/", 1)[-1].rsplit(":", 1)[-1]))


def _prefix(name: str) -> str:
    return re.sub(r"[^A-Z0-9]", "_", name.strip().upper())


def _first(env: Mapping[str, str], names: tuple[str, ...]) -> tuple[str, str]:
    """(value, the variable it came from) of the first set variable; ("", "") if none."""
    for name in names:
        value = env.get(name, "").strip()
        if value:
            return value, name
    return "", ""


@dataclass(frozen=True, slots=True)
class ModelProfile:
    """A profile resolved from the environment; `build` makes its model (needs the key)."""

    profile: str
    provider: str
    model: str
    base_url: str | None
    api_key: str = field(repr=False)
    api_type: Literal["openai", "anthropic"] = "openai"
    temperature: float | None = None
    backend_provider: str = ""
    openrouter: bool = False
    key_variables: tuple[str, ...] = ()
    base_variables: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        """``provider:model``, the model's name in reports and recordings."""
        return f"{self.provider}:{self.model}"

    def extra_body(self) -> dict[str, object]:
        """What every request adds to its JSON body: OpenRouter's routing rules."""
        if not self.openrouter:
            return {}
        routing: dict[str, object] = {"allow_fallbacks": False, "data_collection": "deny"}
        if self.backend_provider:
            routing["order"] = [self.backend_provider]
        return {"provider": routing}

    def build(self, *, timeout: float = 120.0) -> Model:
        """The model: an OpenAI-compatible or Anthropic adapter on this endpoint.

        `ModelConfigError` naming the variables to set when the key or URL is missing.
        """
        if self.base_url is None and self.provider != "openai" and self.api_type == "openai":
            wanted = " or ".join(self.base_variables)
            raise ModelConfigError(f"profile {self.profile!r}: set {wanted} (the endpoint's URL)")
        key = self.api_key
        if not key:
            if self.base_url is None or not _is_local(self.base_url):
                wanted = " or ".join(self.key_variables)
                raise ModelConfigError(f"profile {self.profile!r} needs an API key: set {wanted}")
            key = "unused"  # local servers take any key; the SDKs insist on one
        if self.api_type == "anthropic":
            from agents.models import AnthropicModel

            return AnthropicModel(self.model, api_key=key, base_url=self.base_url, name=self.name)
        import openai

        from agents.models import OpenAIChatModel

        http_client = None
        extra = self.extra_body()
        if extra:
            import httpx2

            http_client = httpx2.AsyncClient(transport=_extra_body_transport(extra))
        client = openai.AsyncOpenAI(
            api_key=key, base_url=self.base_url, timeout=timeout, http_client=http_client
        )
        return OpenAIChatModel(self.model, client=client, name=self.name)


def _is_local(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback or ipaddress.ip_address(host).is_private
    except ValueError:
        return False


def resolve_profile(
    profile: str, *, model: str | None = None, env: Mapping[str, str] | None = None
) -> ModelProfile:
    """The profile named ``profile`` (case-insensitive), ``model`` overriding its model.

    `ModelConfigError` when nothing configures it, or its temperature is no number.

    >>> resolve_profile("local", env={"LOCAL_BASE_URL": "http://127.0.0.1:1234/v1",
    ...     "LOCAL_MODEL": "bielik", "LOCAL_TEMPERATURE": "0.1"}).temperature
    0.1
    """
    environ = os.environ if env is None else env
    prefix = _prefix(profile)
    provider = environ.get(f"{prefix}_PROVIDER", "").strip().lower() or profile.strip().lower()
    block = _prefix(provider)
    builtin = BUILTIN_PROVIDERS.get(provider)
    configured = any(name.startswith((f"{prefix}_", f"{block}_")) for name in environ)
    if not configured and builtin is None:
        raise ModelConfigError(
            f"profile {profile!r} is not configured: set {prefix}_PROVIDER (a provider block "
            f"such as openai, openrouter or local) and {prefix}_MODEL, or "
            f"{prefix}_BASE_URL and {prefix}_API_KEY"
        )
    model_id = (
        (model or "").strip()
        or _first(environ, (f"{prefix}_MODEL", f"{block}_MODEL"))[0]
        or DEFAULT_MODEL
    )
    base_variables = tuple(block + suffix for suffix in _BASE_SUFFIXES)
    base_url = _first(environ, base_variables)[0] or (builtin.base_url if builtin else None)
    key_variables = tuple(block + suffix for suffix in _KEY_SUFFIXES)
    if builtin is not None:
        key_variables += tuple(v for v in builtin.key_vars if v not in key_variables)
    api_key = _first(environ, key_variables)[0]
    if not api_key and builtin is not None and not builtin.needs_key:
        api_key = builtin.placeholder_key
    api_type_text = environ.get(f"{block}_API_TYPE", "").strip().lower()
    api_type: Literal["openai", "anthropic"] = (
        "anthropic"
        if api_type_text == "anthropic"
        or (not api_type_text and builtin and builtin.api_type == "anthropic")
        else "openai"
    )
    temperature = _temperature(environ, f"{prefix}_TEMPERATURE")
    backend = _first(environ, (f"{prefix}_BACKEND_PROVIDER", f"{block}_BACKEND_PROVIDER"))[0]
    openrouter = provider == "openrouter" or (base_url is not None and "openrouter.ai" in base_url)
    return ModelProfile(
        profile=profile,
        provider=provider,
        model=model_id,
        base_url=base_url,
        api_key=api_key,
        api_type=api_type,
        temperature=temperature,
        backend_provider=backend,
        openrouter=openrouter,
        key_variables=key_variables,
        base_variables=base_variables,
    )


def _temperature(environ: Mapping[str, str], variable: str) -> float | None:
    text = environ.get(variable, "").strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        raise ModelConfigError(f"{variable}={text!r} is not a number") from None
    if not 0.0 <= value <= 2.0:
        raise ModelConfigError(f"{variable}={text!r} must be from 0 to 2")
    return value


def model_name(spec: str, env: Mapping[str, str] | None = None) -> str:
    """The name a model string's model will have, without building it (no key needed).

    An alias is looked up in ``LM_MODEL_<NAME>``; a string without a provider that is
    no alias stays as it is.

    >>> model_name("fast", {"LM_MODEL_FAST": "ollama:llama3.2:3b"}), model_name("openai:gpt-4o")
    ('ollama:llama3.2:3b', 'openai:gpt-4o')
    """
    environ = os.environ if env is None else env
    text = spec.strip()
    if ":" in text:
        provider, _, model_id = text.partition(":")
        return f"{provider.strip().lower()}:{model_id.strip()}"
    target = environ.get(f"LM_MODEL_{_prefix(text)}", "").strip()
    return model_name(target, environ) if ":" in target else text


@dataclass(frozen=True, slots=True)
class ModelTarget:
    """A model an evaluation runs against: its name, its default temperature, and how
    to build it (only live and recording runs build it)."""

    name: str
    build: Callable[[], Model] = field(compare=False)
    temperature: float | None = None

    @property
    def reasoning(self) -> bool:
        """Whether the model takes no temperature (`is_reasoning_model`)."""
        return is_reasoning_model(self.name.partition(":")[2] or self.name)

    @classmethod
    def of(cls, model: Model, *, temperature: float | None = None) -> ModelTarget:
        """A target for a ready model (a `ScriptedModel`, a configured adapter)."""
        return cls(model.name, lambda: model, temperature)

    @classmethod
    def from_string(cls, spec: str, env: Mapping[str, str] | None = None) -> ModelTarget:
        """A target for a model string or alias (`agents.models.resolve_model`)."""
        environ = dict(os.environ if env is None else env)
        return cls(model_name(spec, environ), lambda: resolve_model(spec, env=environ))

    @classmethod
    def from_profile(cls, profile: ModelProfile) -> ModelTarget:
        """A target for a profile: its name, temperature and endpoint."""
        return cls(profile.name, profile.build, profile.temperature)


def _extra_body_transport(extra: Mapping[str, object]) -> httpx2.AsyncBaseTransport:
    """An httpx transport that merges ``extra`` into every JSON request body."""
    import httpx2

    class ExtraBody(httpx2.AsyncBaseTransport):
        def __init__(self) -> None:
            self._inner = httpx2.AsyncHTTPTransport()

        async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
            if request.method == "POST" and "json" in request.headers.get("content-type", ""):
                body: object = json.loads(await request.aread() or b"{}")
                if isinstance(body, dict):
                    merged = _merged(cast("dict[str, object]", body), extra)
                    headers = [
                        (k, v)
                        for k, v in request.headers.multi_items()
                        if k.lower() != "content-length"
                    ]
                    request = httpx2.Request(
                        request.method,
                        request.url,
                        headers=headers,
                        content=json.dumps(merged).encode(),
                        extensions=request.extensions,
                    )
            return await self._inner.handle_async_request(request)

        async def aclose(self) -> None:
            await self._inner.aclose()

    return ExtraBody()


def _merged(body: dict[str, object], extra: Mapping[str, object]) -> dict[str, object]:
    """``body`` with ``extra``'s fields; mappings on both sides are merged one level deep."""
    out = dict(body)
    for key, value in extra.items():
        current = out.get(key)
        if isinstance(value, Mapping) and isinstance(current, Mapping):
            out[key] = {
                **cast("Mapping[str, object]", current),
                **cast("Mapping[str, object]", value),
            }
        else:
            out[key] = value
    return out
