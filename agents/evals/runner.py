"""Running prompt cases: one case on one model (`run_case`), or a whole matrix (`run_cases`).

Each run builds its toolset afresh, runs the case's prompt through a ``ReActAgent``
(protocol ``text``) or a ``ToolCallingAgent`` (``native``), records every tool call as
the model wrote it (`CallRecord`: arguments before the relay unboxed them, the result
text the model saw) and judges the run (`agents.evals.validation.validate`).

Modes: ``live`` calls the model; ``record`` calls it and writes a cassette next to the
case (``<case dir>/cassettes/<case id>/<model>.<protocol>[.<boxing>.<few-shot>].json``,
or under ``EvalSettings.cassette_dir``); ``replay`` answers from that cassette only.
The system prompt's date is the case's ``today`` (else the toolset's), so a recording
replays on any day.

>>> import asyncio
>>> from agents.models import ScriptedModel
>>> from agents.evals.cases import parse_case
>>> case = parse_case("---\\nanswer: {contains: Paris}\\n---\\nCapital of France?")
>>> target = ModelTarget.of(ScriptedModel(["<answer>Paris</answer>"]))
>>> result = asyncio.run(run_case(case, target, EvalSettings()))
>>> result.passed, result.stopped_by, result.answer
(True, 'answer', 'Paris')
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import re
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from typing_extensions import deprecated

from agents._errors import AgentValueError
from agents._renamed import renamed_names
from agents.evals.cases import PromptCase
from agents.evals.cassettes import Cassette, CassetteError, CassetteModel, secret_values
from agents.evals.profiles import ModelTarget
from agents.evals.toolsets import Toolset, ToolsetError, ToolsetOptions, resolve_toolset
from agents.evals.validation import CallRecord, validate
from agents.models import GenerateOptions, Message, Model, ModelError, Usage
from agents.react import ReActAgent
from agents.result import AgentResult
from agents.tool_calling import ToolCallingAgent
from formats import MarkdownFormat, TextFormat, XMLFormat
from toolchain import (
    ExecutionContext,
    JSONToolChain,
    Limits,
    TextContent,
    ToolCall,
    ToolChain,
    ToolHook,
    YAMLToolChain,
)
from toolchain.runtime import redact, redact_data, remember_secret

__all__ = [
    "DEFAULT_MAX_STEPS",
    "CaseResult",
    "EvalSettings",
    "ModelTarget",
    "RunMode",
    "cassette_path",
    "run_case",
    "run_cases",
]

RunMode = Literal["live", "record", "replay"]
DEFAULT_MAX_STEPS = 12


@dataclass(frozen=True, slots=True)
class EvalSettings:
    """How every case of an evaluation runs.

    ``temperature`` overrides a profile's (and is left out for reasoning models);
    ``max_retries`` is each model call's retry budget (``None``: the adapter's).
    ``env`` is where secrets to scrub from cassettes are looked up (default: the process
    environment).
    """

    protocol: Literal["text", "native"] = "text"
    boxing: Literal["opaque", "json"] = "opaque"
    few_shot: bool = True
    temperature: float | None = None
    max_retries: int | None = None
    mode: RunMode = "live"
    cassette_dir: Path | None = None
    env: Mapping[str, str] | None = field(default=None, repr=False)


@dataclass(frozen=True, slots=True)
class CaseResult:
    """One case on one model: the verdict, why, and what the run did."""

    case: PromptCase
    model: str
    settings: EvalSettings
    failures: tuple[str, ...]
    stopped_by: str
    detail: str = ""
    answer: str | None = None
    calls: tuple[CallRecord, ...] = ()
    steps: int = 0
    usage: Usage = field(default_factory=Usage)
    duration: float = 0.0
    messages: tuple[Message, ...] = ()
    transcript: str = ""
    system_prompt: str = ""
    uses_relay: bool = False
    cassette: Path | None = None
    notes: tuple[str, ...] = ()
    setup_failed: bool = False
    """The run could not start: its toolset failed, its model could not be built, or
    its cassette could not be read; or its recording could not be written (the CLI's
    exit status is then 2)."""

    @property
    def passed(self) -> bool:
        """True when the run kept every expectation of its case."""
        return not self.failures

    @property
    @deprecated(
        "CaseResult.iterations is CaseResult.steps now; the old name goes in the next release"
    )
    def iterations(self) -> int:
        """``steps``, under its old name (for one release)."""
        return self.steps


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "model"


def cassette_path(
    case: PromptCase, model: str, settings: EvalSettings, *, uses_relay: bool = True
) -> Path:
    """Where ``case``'s recording on ``model`` under ``settings`` lives.

    >>> from agents.evals.cases import parse_case
    >>> case = parse_case("Hi.", path="prompts/case1.md")
    >>> cassette_path(case, "openai:gpt-4o", EvalSettings()).as_posix()
    'prompts/cassettes/case1/openai-gpt-4o.text.opaque.few-shot.json'
    """
    if settings.cassette_dir is not None:
        root = settings.cassette_dir
    elif case.path is not None:
        root = case.path.parent / "cassettes"
    else:
        root = Path("cassettes")
    parts = [_slug(model), settings.protocol]
    if uses_relay:
        parts += [settings.boxing, "few-shot" if settings.few_shot else "zero-shot"]
    return root / _slug(case.id) / (".".join(parts) + ".json")


class _ArgsRecorder(ToolHook):
    """Keeps each call's arguments as the model wrote them (it runs before the relay)."""

    def __init__(self) -> None:
        self.args: dict[str, dict[str, object]] = {}

    def before_tool_call(self, ctx: ExecutionContext, call: ToolCall) -> None:
        self.args.setdefault(call.id, dict(call.args))


def _calls(result: AgentResult[Any], written: Mapping[str, dict[str, object]]) -> list[CallRecord]:
    records: list[CallRecord] = []
    for step in result.steps:
        for chain_result in step.tool_results:
            shown = {observation.id: observation for observation in chain_result.observations}
            raw = chain_result.raw
            for index, call in enumerate(raw.calls):
                error = raw.errors[index] if index < len(raw.errors) else None
                observation = shown.get(call.id)
                if observation is not None:
                    text = observation.text
                elif error is not None:
                    text = f"Error: {error.message}"
                else:
                    text = ""
                records.append(
                    CallRecord(
                        call.name,
                        written.get(call.id, dict(call.args)),
                        text,
                        error.kind if error is not None else None,
                        call.id,
                    )
                )
    return records


def _chain(case: PromptCase, settings: EvalSettings, toolset: Toolset) -> ToolChain:
    chain: ToolChain
    if settings.protocol == "native" or case.calls == "json":
        chain = JSONToolChain()
    else:
        chain = YAMLToolChain()
    for tool in toolset.tools:
        chain.register_tool(tool)
    return chain


def _failed(case: PromptCase, model: str, settings: EvalSettings, why: str) -> CaseResult:
    return CaseResult(case, model, settings, (why,), "error", detail=why, setup_failed=True)


async def run_case(
    case: PromptCase, target: ModelTarget | Model, settings: EvalSettings
) -> CaseResult:
    """Run ``case`` once on ``target`` and judge it; never raises for a model's failure
    (a failed setup or call is a failed result saying why)."""
    if not isinstance(target, ModelTarget):
        target = ModelTarget.of(target)
    started = time.perf_counter()
    try:
        toolset = resolve_toolset(case.toolset)(
            ToolsetOptions(boxing=settings.boxing, few_shot=settings.few_shot, seed=case.id)
        )
    except ToolsetError as error:
        return _failed(case, target.name, settings, f"toolset: {error}")
    path = cassette_path(case, target.name, settings, uses_relay=toolset.uses_relay)
    secrets = secret_values(settings.env)
    remember_secret(*secrets)  # blanked in this result's texts, the reports and the logs
    notes: list[str] = []
    cassette: Cassette | None = None
    try:
        if settings.mode == "replay":
            cassette = Cassette.load(path, secrets=secrets)
            model: Model = CassetteModel(target.name, cassette, mode="replay")
        elif settings.mode == "record":
            cassette = Cassette(path, secrets=secrets)
            model = CassetteModel(target.build(), cassette, mode="record")
        else:
            model = target.build()
    except (ModelError, CassetteError) as error:
        return _failed(case, target.name, settings, f"the model could not be set up: {error}")
    temperature = settings.temperature if settings.temperature is not None else target.temperature
    if temperature is not None and target.reasoning:
        notes.append(f"temperature {temperature:g} ignored: {target.name} is a reasoning model")
        temperature = None
    options = GenerateOptions(temperature=temperature, max_retries=settings.max_retries)
    fmt: TextFormat = MarkdownFormat() if case.text_format == "markdown" else XMLFormat()
    limits = Limits(max_steps=case.max_steps or DEFAULT_MAX_STEPS)
    today = case.today or toolset.today
    agent: ReActAgent[str] | ToolCallingAgent[str]
    agent_class = ToolCallingAgent if settings.protocol == "native" else ReActAgent
    agent = agent_class(
        model,
        tool_chain=_chain(case, settings, toolset),
        text_format=fmt,
        behavior=toolset.behavior,
        critical_rules=toolset.critical_rules,
        extensions=toolset.extensions,
        options=options,
        limits=limits,
        clock=lambda: today,
        name=case.id,
    )
    recorder = _ArgsRecorder()
    ctx = ExecutionContext(limits=limits, name=case.id)
    ctx.hooks.add(recorder)
    unsaved = ""
    try:
        result = await agent.run(case.prompt, ctx=ctx)
    finally:
        if cassette is not None and settings.mode == "record":
            try:
                cassette.save()
            except CassetteError as error:  # the run is judged; the recording is lost
                unsaved = f"the cassette could not be written: {error}"
        await _close(model)
    calls = _calls(result, recorder.args)
    detail = result.limit or result.error or result.paused or ""
    answer = None if result.answer is None else str(result.answer)
    failures = validate(case, calls, stopped_by=result.stopped_by, answer=answer, detail=detail)
    if unsaved:
        failures = [*failures, unsaved]
    system = result.messages[0].text_content() if result.messages else ""
    # Judged on what the model wrote; kept (and so reported) with every secret we sent
    # blanked: a reply or an error may repeat the key.
    return CaseResult(
        case=case,
        model=target.name,
        settings=settings,
        failures=tuple(redact(failure) for failure in failures),
        stopped_by=result.stopped_by,
        detail=redact(detail),
        answer=None if answer is None else redact(answer),
        calls=tuple(_redacted_call(call) for call in calls),
        steps=len(result.steps),
        usage=result.usage,
        duration=time.perf_counter() - started,
        messages=tuple(_redacted_message(message) for message in result.messages),
        transcript=redact(result.transcript()),
        system_prompt=redact(system),
        uses_relay=toolset.uses_relay,
        cassette=path if settings.mode != "live" else None,
        notes=tuple(notes),
        setup_failed=bool(unsaved),
    )


def _redacted_call(call: CallRecord) -> CallRecord:
    args = cast("dict[str, object]", redact_data(dict(call.args)))
    return dataclasses.replace(call, args=args, result=redact(call.result))


def _redacted_message(message: Message) -> Message:
    content = tuple(
        TextContent(redact(part.text)) if isinstance(part, TextContent) else part
        for part in message.content
    )
    calls = tuple(
        dataclasses.replace(call, arguments=redact(call.arguments)) for call in message.tool_calls
    )
    return dataclasses.replace(message, content=content, tool_calls=calls)


async def _close(model: object) -> None:
    inner = model.inner if isinstance(model, CassetteModel) else model
    close: object = getattr(inner, "aclose", None)
    if callable(close):
        close = cast("Callable[[], Awaitable[object]]", close)
        with contextlib.suppress(Exception):  # closing must not turn a verdict into a crash
            await close()


async def run_cases(
    cases: Sequence[PromptCase],
    targets: Sequence[ModelTarget | Model],
    settings: EvalSettings,
    *,
    concurrency: int = 4,
    on_result: Callable[[CaseResult], None] | None = None,
) -> list[CaseResult]:
    """Every case on every target, at most ``concurrency`` runs at a time; the results
    in matrix order (target by target, case by case) whatever order they finish in.

    ``on_result`` is called as each run finishes (a progress bar).
    """
    if concurrency < 1:
        raise AgentValueError(f"concurrency must be at least 1, got {concurrency}")
    gate = asyncio.Semaphore(concurrency)
    plan = [(target, case) for target in targets for case in cases]

    async def one(target: ModelTarget | Model, case: PromptCase) -> CaseResult:
        async with gate:
            result = await run_case(case, target, settings)
        if on_result is not None:
            on_result(result)
        return result

    return list(await asyncio.gather(*(one(target, case) for target, case in plan)))


if TYPE_CHECKING:  # the old name, for one release: typed as what it is; it warns
    DEFAULT_MAX_ITERATIONS = DEFAULT_MAX_STEPS

__getattr__ = renamed_names(__name__, {"DEFAULT_MAX_ITERATIONS": "DEFAULT_MAX_STEPS"})
