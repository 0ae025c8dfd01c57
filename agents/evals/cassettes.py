"""Record model calls once, replay them in CI: cassettes and `CassetteModel`.

A `Cassette` is a readable JSON file of one run's model calls. Each call is filed
under `request_key`, a SHA-256 of what decides the reply: the model's name, every
message, the sampling options and the tool specs (never headers, retry counts or keys).
`CassetteModel` wraps any `Model`:

- ``mode="record"``: each call goes to the wrapped model and is written down;
- ``mode="replay"``: each call is answered from the cassette and nothing else. A call
  the cassette does not hold raises `CassetteMiss` (a `ModelError`: the run ends with
  "no recording for this request (prompt changed?)" and where it differs from the
  recording), never a live call. Replaying needs no API key: the wrapped model may be
  only its name.

Secrets never reach the file: request headers are not recorded at all, and every string
written goes through `toolchain._redact.redact` and loses any of the given secret values
(`secret_values` finds them in the environment: ``*_API_KEY``, ``*_TOKEN`` …). A
response that itself held something shaped like a key is replayed blanked.

In the file, each request lists only the messages added since the previous request
(``earlier_messages`` says how many it shares with it), and options or tools equal to
the previous request's are written as ``"same as previous"``; `Cassette.load` restores
them whole.

>>> import asyncio, tempfile
>>> from pathlib import Path
>>> from agents.models import Message, ScriptedModel
>>> path = Path(tempfile.mkdtemp()) / "case.json"
>>> recorder = CassetteModel(ScriptedModel(["42"]), Cassette(path), mode="record")
>>> ask = [Message.text("user", "6 * 7?")]
>>> asyncio.run(recorder.generate(ask)).text
'42'
>>> recorder.cassette.save()
>>> player = CassetteModel("scripted", Cassette.load(path), mode="replay")
>>> asyncio.run(player.generate(ask)).text
'42'
>>> asyncio.run(player.generate([Message.text("user", "6 * 9?")]))
Traceback (most recent call last):
...
agents.evals.cassettes.CassetteMiss: no recording for this request (prompt changed?): ...
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal, cast

from agents._errors import AgentError, AgentTypeError
from agents._paths import PathError, check_regular, write_text
from agents.models import (
    GenerateOptions,
    Message,
    Model,
    ModelError,
    ModelResponse,
    TextDelta,
    ToolCallDelta,
    ToolCallRequest,
    Usage,
    messages_from_json,
    messages_to_json,
)
from toolchain.runtime import REDACTED, json_nesting_exceeds, redact

__all__ = [
    "CASSETTE_VERSION",
    "Cassette",
    "CassetteError",
    "CassetteMiss",
    "CassetteModel",
    "Interaction",
    "request_key",
    "secret_values",
]

CASSETTE_VERSION: Final = 1
MAX_NESTING: Final = 200
"""Levels of JSON a cassette may nest (messages, tool schemas): far below the interpreter's
recursion limit, which reading, comparing and scrubbing the file would otherwise meet."""
SAME: Final = "same as previous"
_NOT_HASHED: Final = frozenset({"headers", "max_retries", "tools"})
_SECRET_NAME = re.compile(r"(?i)(^|_)(API_?KEY|KEY|TOKEN|SECRET|PASSWORD|CREDENTIALS?)$")
_SHORTEST_SECRET: Final = 8


class CassetteError(AgentError, ValueError):
    """A cassette file that cannot be read, or written."""


class CassetteMiss(ModelError):
    """A request the cassette holds no recording for (replay never calls a model)."""


def _options(options: GenerateOptions) -> dict[str, object]:
    """The options that shape a reply, defaults left out (new fields need no migration)."""
    shown: dict[str, object] = {}
    for option in dataclasses.fields(options):
        if option.name in _NOT_HASHED:
            continue
        value: object = getattr(options, option.name)
        if value == option.default:
            continue
        if option.name == "tool_choice" and not options.tools:
            continue
        shown[option.name] = (
            list(cast("Iterable[object]", value)) if isinstance(value, tuple) else value
        )
    return shown


def _tools(options: GenerateOptions) -> list[dict[str, object]]:
    return [
        {
            "name": spec.name,
            "description": spec.description,
            "parameters": dict(spec.parameters),
            **({"strict": True} if spec.strict else {}),
        }
        for spec in options.tools
    ]


def _wire(messages: Sequence[Message]) -> list[dict[str, object]]:
    document = json.loads(messages_to_json(messages))
    return cast("list[dict[str, object]]", document["messages"])


def _canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def request_key(
    model: str, messages: Sequence[Message], options: GenerateOptions | None = None
) -> str:
    """The hex SHA-256 a request is filed under: model name, messages, options, tools.

    Headers and ``max_retries`` do not count (they do not change the reply, and headers
    may hold credentials).

    >>> ask = [Message.text("user", "hi")]
    >>> request_key("m", ask) == request_key("m", ask, GenerateOptions(max_retries=0))
    True
    >>> request_key("m", ask) == request_key("m", ask, GenerateOptions(temperature=0.0))
    False
    """
    opts = options if options is not None else GenerateOptions()
    document = {
        "model": model,
        "messages": _wire(messages),
        "options": _options(opts),
        "tools": _tools(opts),
    }
    return hashlib.sha256(_canonical(document).encode("utf-8")).hexdigest()


def secret_values(env: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """Values of variables named like secrets (``OPENAI_API_KEY``, ``HF_TOKEN`` …).

    >>> env = {"OPENAI_API_KEY": "sk-abcdefgh123", "OPENAI_MODEL": "gpt-4o", "X_TOKEN": "s"}
    >>> secret_values(env)
    ('sk-abcdefgh123',)
    """
    environ = os.environ if env is None else env
    found = {
        value.strip()
        for name, value in environ.items()
        if _SECRET_NAME.search(name) and len(value.strip()) >= _SHORTEST_SECRET
    }
    return tuple(sorted(found, key=len, reverse=True))


def _scrub(value: object, secrets: Sequence[str]) -> object:
    if isinstance(value, str):
        for secret in secrets:
            value = value.replace(secret, REDACTED)
        return redact(value)
    if isinstance(value, dict):
        return {k: _scrub(v, secrets) for k, v in cast("dict[str, object]", value).items()}
    if isinstance(value, list):
        return [_scrub(item, secrets) for item in cast("list[object]", value)]
    return value


@dataclass(frozen=True, slots=True)
class Interaction:
    """One recorded call: its key, the request in full (for people) and the reply."""

    key: str
    model: str
    messages: tuple[dict[str, object], ...]
    options: Mapping[str, object]
    tools: tuple[Mapping[str, object], ...]
    response: ModelResponse


def _response_to_json(response: ModelResponse) -> dict[str, object]:
    usage = response.usage
    return {
        "text": response.text,
        "stop_reason": response.stop_reason,
        "model": response.model,
        "usage": {
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
            "cached_input_tokens": usage.cached_input_tokens,
        },
        "tool_calls": [
            {"id": c.id, "name": c.name, "arguments": c.arguments} for c in response.tool_calls
        ],
    }


_USAGE_FIELDS: Final = ("input_tokens", "output_tokens", "cached_input_tokens")


def _tokens(usage: Mapping[str, object], name: str, where: str) -> int:
    value = usage.get(name, 0)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 1 << 63:
        shown = repr(value)[:40]  # 1e999 reads as infinity; a number may be long
        raise CassetteError(f"{where}: usage.{name} must be a count of tokens, got {shown}")
    return value


def _response_from_json(data: Mapping[str, object], where: str) -> ModelResponse:
    recorded: object = data.get("usage") or {}
    if not isinstance(recorded, dict):
        raise CassetteError(f"{where}: usage must be an object")
    usage = Usage(*(_tokens(cast("dict[str, object]", recorded), n, where) for n in _USAGE_FIELDS))
    try:
        calls = cast("list[Mapping[str, str]]", data.get("tool_calls") or [])
        return ModelResponse(
            text=str(data["text"]),
            stop_reason=str(data["stop_reason"]),
            usage=usage,
            model=str(data.get("model", "")),
            tool_calls=tuple(ToolCallRequest(c["id"], c["name"], c["arguments"]) for c in calls),
        )
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise CassetteError(f"{where}: the response is malformed ({error!r})") from None


class Cassette:
    """The recorded calls of one run, kept in the JSON file at ``path``.

    ``secrets`` are blanked wherever they appear when the file is written.
    """

    def __init__(self, path: Path | str, *, secrets: Sequence[str] = ()) -> None:
        self.path = Path(path)
        self.secrets = tuple(s for s in secrets if len(s) >= _SHORTEST_SECRET)
        self.interactions: list[Interaction] = []
        self.exists = False
        self._used: set[int] = set()
        self._asked = 0

    @classmethod
    def load(cls, path: Path | str, *, secrets: Sequence[str] = ()) -> Cassette:
        """The cassette at ``path``; an empty one when there is no such file."""
        cassette = cls(path, secrets=secrets)
        try:
            if not check_regular(cassette.path):  # a FIFO there would block the read
                return cassette
            text = cassette.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return cassette
        except PathError as error:
            raise CassetteError(str(error)) from None
        except OSError as error:
            raise CassetteError(f"{path}: cannot be read: {error}") from None
        cassette.exists = True
        if json_nesting_exceeds(text, MAX_NESTING):  # before json.loads meets its own limit
            raise CassetteError(f"{path}: nested more than {MAX_NESTING} levels deep")
        try:
            document = json.loads(text)
        except (ValueError, RecursionError) as error:
            raise CassetteError(f"{path}: not JSON: {error}") from None
        if not isinstance(document, dict):
            raise CassetteError(f"{path}: not a version {CASSETTE_VERSION} cassette")
        data = cast("dict[str, object]", document)
        if data.get("version") != CASSETTE_VERSION:
            raise CassetteError(f"{path}: not a version {CASSETTE_VERSION} cassette")
        items = data.get("interactions")
        if not isinstance(items, list):
            raise CassetteError(f"{path}: 'interactions' must be a list")
        previous: Interaction | None = None
        for index, item in enumerate(cast("list[object]", items)):
            previous = _interaction(item, previous, f"{path}: interactions[{index}]")
            cassette.interactions.append(previous)
        return cassette

    # -- recording -------------------------------------------------------------------

    def record(
        self,
        model: str,
        messages: Sequence[Message],
        options: GenerateOptions,
        response: ModelResponse,
    ) -> None:
        """Add a call and its reply."""
        self.interactions.append(
            Interaction(
                request_key(model, messages, options),
                model,
                tuple(_wire(messages)),
                _options(options),
                tuple(_tools(options)),
                response,
            )
        )

    def to_json(self) -> str:
        """The file's text: indented JSON, secrets scrubbed."""
        items: list[dict[str, object]] = []
        previous: Interaction | None = None
        for interaction in self.interactions:
            items.append(_interaction_to_json(interaction, previous))
            previous = interaction
        document = {"version": CASSETTE_VERSION, "interactions": items}
        scrubbed = _scrub(document, self.secrets)
        return json.dumps(scrubbed, indent=2, ensure_ascii=False) + "\n"

    def save(self) -> None:
        """Write the file (and its folders), replacing any earlier recording;
        `CassetteError` saying why it cannot be (a full disk, a folder in the way)."""
        partial = self.path.with_name(self.path.name + ".partial")
        try:
            check_regular(self.path)  # replaced whole below: never opened, but refused alike
            write_text(partial, self.to_json())
            os.replace(partial, self.path)
        except PathError as error:
            raise CassetteError(str(error)) from None
        except OSError as error:
            raise CassetteError(f"{self.path}: cannot be written: {error.strerror}") from None
        self.exists = True

    # -- replaying -------------------------------------------------------------------

    def replay(
        self, model: str, messages: Sequence[Message], options: GenerateOptions
    ) -> ModelResponse:
        """The recorded reply to this request; `CassetteMiss` when there is none."""
        position = self._asked
        self._asked += 1
        key = request_key(model, messages, options)
        matching = [i for i, item in enumerate(self.interactions) if item.key == key]
        if not matching:
            raise CassetteMiss(self._miss(position, model, messages, options))
        fresh = [i for i in matching if i not in self._used]
        chosen = fresh[0] if fresh else matching[-1]
        self._used.add(chosen)
        return self.interactions[chosen].response

    def _miss(
        self, position: int, model: str, messages: Sequence[Message], options: GenerateOptions
    ) -> str:
        head = f"no recording for this request (prompt changed?): request {position + 1} to {model}"
        if not self.exists:
            return f"{head}; there is no cassette {self.path} (record one with --record)"
        if position >= len(self.interactions):
            return (
                f"{head}; {self.path} holds {len(self.interactions)} requests "
                "(the run went further than the recording)"
            )
        recorded = self.interactions[position]
        # The file holds scrubbed text: compare like with like.
        asked = cast("list[dict[str, object]]", _scrub(_wire(messages), self.secrets))
        return f"{head} differs from the recording's in {self.path}: " + _difference(
            recorded, model, asked, _options(options), _tools(options)
        )


def _difference(
    recorded: Interaction,
    model: str,
    messages: list[dict[str, object]],
    options: Mapping[str, object],
    tools: list[dict[str, object]],
) -> str:
    if recorded.model != model:
        return f"the model ({recorded.model!r} recorded)"
    for index, (old, new) in enumerate(zip(recorded.messages, messages, strict=False)):
        if _canonical(old) != _canonical(new):
            return f"message {index} ({new.get('role')})"
    if len(recorded.messages) != len(messages):
        return f"the number of messages ({len(recorded.messages)} recorded, {len(messages)} now)"
    if _canonical(recorded.options) != _canonical(options):
        return f"the options ({_canonical(recorded.options)} recorded, {_canonical(options)} now)"
    if _canonical(list(recorded.tools)) != _canonical(tools):
        return "the tool specs"
    return "something the cassette does not show (it was edited by hand?)"


def _interaction_to_json(item: Interaction, previous: Interaction | None) -> dict[str, object]:
    shared = 0
    if previous is not None:
        for old, new in zip(previous.messages, item.messages, strict=False):
            if _canonical(old) != _canonical(new):
                break
            shared += 1
    same_options = previous is not None and _canonical(previous.options) == _canonical(item.options)
    same_tools = previous is not None and _canonical(list(previous.tools)) == _canonical(
        list(item.tools)
    )
    request: dict[str, object] = {
        "model": item.model,
        "options": SAME if same_options else dict(item.options),
        "tools": SAME if same_tools else list(item.tools),
        "earlier_messages": shared,
        "messages": list(item.messages[shared:]),
    }
    return {"key": item.key, "request": request, "response": _response_to_json(item.response)}


def _interaction(item: object, previous: Interaction | None, where: str) -> Interaction:
    if not isinstance(item, dict):
        raise CassetteError(f"{where}: expected an object")
    data = cast("dict[str, object]", item)
    request = data.get("request")
    response = data.get("response")
    key = data.get("key")
    if not isinstance(request, dict) or not isinstance(response, dict) or not isinstance(key, str):
        raise CassetteError(f"{where}: needs 'key', 'request' and 'response'")
    req = cast("dict[str, object]", request)
    shared = req.get("earlier_messages", 0)
    new = req.get("messages", [])
    if not isinstance(shared, int) or not isinstance(new, list):
        raise CassetteError(f"{where}: 'earlier_messages' and 'messages' are malformed")
    if shared and (previous is None or shared > len(previous.messages)):
        raise CassetteError(f"{where}: shares {shared} messages with a request that has fewer")
    earlier = previous.messages[:shared] if previous is not None else ()
    messages = (*earlier, *cast("list[dict[str, object]]", new))
    try:  # the messages must read back as messages
        messages_from_json(json.dumps({"version": 1, "messages": messages}))
    except ValueError as error:
        raise CassetteError(f"{where}: {error}") from None
    options: object = req.get("options", {})
    tools: object = req.get("tools", [])
    if options == SAME:
        options = previous.options if previous is not None else {}
    if tools == SAME:
        tools = list(previous.tools) if previous is not None else []
    return Interaction(
        key,
        str(req.get("model", "")),
        messages,
        cast("Mapping[str, object]", options),
        tuple(cast("list[Mapping[str, object]]", tools)),
        _response_from_json(cast("dict[str, object]", response), where),
    )


class CassetteModel:
    """A `Model` that records the calls of ``inner`` or replays them (see the module).

    ``inner`` is the model to record; in replay mode it may be just the name the
    recording was made under (its ``name`` is part of every request's key).
    """

    def __init__(
        self, inner: Model | str, cassette: Cassette, *, mode: Literal["record", "replay"]
    ) -> None:
        if mode == "record" and isinstance(inner, str):
            raise AgentTypeError("recording needs a model to call, not only its name")
        self.inner = inner
        self.cassette = cassette
        self.mode: Literal["record", "replay"] = mode

    @property
    def name(self) -> str:
        """The wrapped model's name."""
        return self.inner if isinstance(self.inner, str) else self.inner.name

    async def generate(
        self, messages: Sequence[Message], options: GenerateOptions | None = None
    ) -> ModelResponse:
        opts = options if options is not None else GenerateOptions()
        if self.mode == "replay" or isinstance(self.inner, str):
            return self.cassette.replay(self.name, messages, opts)
        response = await self.inner.generate(messages, opts)
        self.cassette.record(self.name, messages, opts, response)
        return response

    async def stream(
        self, messages: Sequence[Message], options: GenerateOptions | None = None
    ) -> AsyncIterator[TextDelta | ToolCallDelta | ModelResponse]:
        opts = options if options is not None else GenerateOptions()
        if self.mode == "replay" or isinstance(self.inner, str):
            response = self.cassette.replay(self.name, messages, opts)
            if response.text:
                yield TextDelta(response.text)
            for index, call in enumerate(response.tool_calls):
                yield ToolCallDelta(index, call.id, call.name, call.arguments)
            yield response
            return
        final: ModelResponse | None = None
        async for item in self.inner.stream(messages, opts):
            if isinstance(item, ModelResponse):
                final = item
            yield item
        if final is not None:
            self.cassette.record(self.name, messages, opts, final)
