"""The record format: what a durable run writes to its database, as plain JSON data.

Nothing recorded depends on where a class is defined, and reading a record back runs
no code: every value is written as JSON through the wire types below (msgspec
Structs), and read back by validating the JSON against them. A tool's output is
written as plain data (``toolchain.to_builtins``, as its observation is written) and
loaded back into the tool's ``output_type``; a run's answer into its termination's
type; messages and media in the conversation's own JSON form
(``agents.models._conversation``). A value that no longer loads into its type (the type
changed since it was recorded) stays the plain data it was recorded as, with a warning.

What a run records, in this order:

- the workflow's inputs (`encode_inputs`): the task, the history, the extension state;
- its first step, ``start`` (`encode_start`): the date its prompts show, the seed its
  stored values' ids derive from, and what reads the record (`reader_of`: the agent's
  class, its chain's and its text format's), checked when the run is replayed;
- each model call's response (`encode_response`), each tool call's outcome
  (`encode_outcome`), and the run's ``AgentResult`` (`encode_result`).

Encoding makes JSON bytes (``msgspec.Raw``) the serializer writes as they are; its
envelope and the size limit are ``_serializer``'s; the errors, ``_errors``'s.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, TypeVar, cast

import msgspec
import pydantic

from agents.durable._errors import RecordError
from agents.models import Message, ModelResponse, ToolCallRequest, Usage
from agents.models._conversation import (
    WireCall,
    WireMessage,
    WirePart,
    message_from_wire,
    message_to_wire,
    part_from_wire,
    part_to_wire,
)
from agents.result import AgentResult, Savings, StepResult, StopKind
from agents.terminations import Termination, TextTermination, TypedTermination
from toolchain import (
    ApprovalRequest,
    CallObservation,
    ContentPart,
    ElicitationRequest,
    ErrorKind,
    RawToolCallResult,
    RawToolChainResult,
    ToolCall,
    ToolCallError,
    ToolChainResult,
    ToolResult,
    to_builtins,
)
from toolchain.runtime import logger

if TYPE_CHECKING:
    from toolchain.discovery import Risk

__all__ = [
    "FORMAT",
    "Start",
    "answer_type_of",
    "decode_inputs",
    "decode_outcome",
    "decode_response",
    "decode_result",
    "decode_start",
    "encode_inputs",
    "encode_outcome",
    "encode_response",
    "encode_result",
    "encode_start",
    "load_as",
    "reader_of",
]

FORMAT: Final = 1
"""The version of this record format, written in each run's ``start`` step."""

_log = logger("agents.durable")
T = TypeVar("T")


# -- the wire types ------------------------------------------------------------------------


class _Usage(msgspec.Struct, frozen=True, omit_defaults=True):
    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0


class _Response(msgspec.Struct, frozen=True, omit_defaults=True):
    text: str
    stop_reason: str
    usage: _Usage
    model: str
    tool_calls: tuple[WireCall, ...] = ()


class _Error(msgspec.Struct, frozen=True):
    kind: ErrorKind
    message: str


class _Output(msgspec.Struct, frozen=True, omit_defaults=True):
    """A ``ToolResult``: its ``text`` (the tool's output) as plain data."""

    output: Any = None
    media: tuple[WirePart, ...] = ()
    instructions: str = ""


class _Outcome(msgspec.Struct, frozen=True, omit_defaults=True):
    """A tool call's outcome: its result, or its error (the exception behind an error
    stays in the process that ran the call)."""

    result: _Output | None = None
    error: _Error | None = None


class _Start(msgspec.Struct, frozen=True):
    format: int
    today: str
    seed: str
    reader: dict[str, str]


class _Inputs(msgspec.Struct, frozen=True, omit_defaults=True):
    task: str | tuple[WirePart, ...]
    history: tuple[WireMessage, ...] = ()
    extension_state: dict[str, Any] | None = None


class _Call(msgspec.Struct, frozen=True, omit_defaults=True):
    name: str
    args: dict[str, Any]
    id: str = ""
    rejected: _Error | None = None


class _Raw(msgspec.Struct, frozen=True, omit_defaults=True):
    name: str
    result: _Output
    id: str = ""


class _Observation(msgspec.Struct, frozen=True, omit_defaults=True):
    id: str
    name: str
    text: str
    media: tuple[WirePart, ...] = ()
    instructions: str = ""
    error: _Error | None = None


class _ChainResult(msgspec.Struct, frozen=True, omit_defaults=True):
    text: str = ""
    media: tuple[WirePart, ...] = ()
    calls: tuple[_Call, ...] = ()
    results: tuple[_Raw | None, ...] = ()
    errors: tuple[_Error | None, ...] = ()
    observations: tuple[_Observation, ...] = ()


class _Step(msgspec.Struct, frozen=True, omit_defaults=True):
    index: int
    output: str
    sections: dict[str, list[str]]
    tool_results: tuple[_ChainResult, ...] = ()
    feedback: str = ""
    usage: _Usage = _Usage()
    duration: float = 0.0
    tool_calls: tuple[WireCall, ...] = ()


class _Savings(msgspec.Struct, frozen=True):
    kept_out: int
    cost: int


class _Held(msgspec.Struct, frozen=True, omit_defaults=True):
    """A held call of a paused run (``AgentResult.pending``), seal included."""

    call_id: str
    tool: str
    args: dict[str, Any]
    risk: str = "safe"
    via: tuple[str, ...] = ()
    digest: str = ""
    run_id: str = ""
    seal: str = ""
    question: bool = False
    """An MCP server's question (an ``ElicitationRequest``), with its message and schema."""
    message: str = ""
    schema: dict[str, Any] = msgspec.field(default_factory=dict[str, Any])


class _Result(msgspec.Struct, frozen=True, omit_defaults=True):
    runnable: str
    stopped_by: StopKind
    answer: Any = None
    # Recorded as "iterations", the name before steps: records of runs in flight when
    # the release changes must read back.
    steps: tuple[_Step, ...] = msgspec.field(default=(), name="iterations")
    messages: tuple[WireMessage, ...] = ()
    stats: dict[str, int] = {}
    usage: _Usage = _Usage()
    limit: str | None = None
    error: str | None = None
    paused: str | None = None
    extension_state: dict[str, Any] = {}
    savings: dict[str, _Savings] = {}
    pending: tuple[_Held, ...] = ()


_ENCODER: Final = msgspec.json.Encoder()


def _encoded(value: object) -> msgspec.Raw:
    return msgspec.Raw(_ENCODER.encode(value))


def _read(plain: object, wire: type[T], what: str) -> T:
    """``plain`` (what the serializer read) validated into ``wire``; a `RecordError`
    naming the record and where it is wrong otherwise (never its content)."""
    try:
        return msgspec.convert(plain, wire)
    except (msgspec.ValidationError, ValueError, RecursionError) as error:
        where = str(error).rpartition(" - at ")[2] if " - at " in str(error) else "$"
        raise RecordError(
            f"the recorded {what} is not in the form agents.durable writes (at {where}); "
            "it was not written by this library's record format"
        ) from None


# -- the start of a run --------------------------------------------------------------------


class Start(typing.NamedTuple):
    """What a run records first: its date, its seed, and what reads its record."""

    today: dt.date
    seed: bytes
    reader: Mapping[str, str]


def encode_start(start: Start) -> msgspec.Raw:
    wire = _Start(FORMAT, start.today.isoformat(), start.seed.hex(), dict(start.reader))
    return _encoded(wire)


def decode_start(plain: object) -> Start:
    wire = _read(plain, _Start, "start of the run")
    if wire.format != FORMAT:
        raise RecordError(
            f"the run was recorded in record format {wire.format}; this version of "
            f"agents.durable reads format {FORMAT}: finish it with the version that started it"
        )
    try:
        return Start(dt.date.fromisoformat(wire.today), bytes.fromhex(wire.seed), wire.reader)
    except ValueError:
        raise RecordError("the recorded start of the run holds no valid date or seed") from None


def reader_of(agent: object) -> dict[str, str]:
    """What reads an agent's record on replay: a recorded reply means what these make of
    it (a ReAct reply's ``<action>`` text is an answer to a native agent)."""
    shape = {"agent": type(agent).__qualname__}
    for part in ("tool_chain", "text_format"):
        found = getattr(agent, part, None)
        if found is not None:
            shape[part] = type(found).__qualname__
    return shape


# -- the workflow's inputs -----------------------------------------------------------------


def encode_inputs(
    task: str | Sequence[ContentPart],
    history: Sequence[Message],
    extension_state: Mapping[str, object] | None,
) -> msgspec.Raw:
    wire = _Inputs(
        task if isinstance(task, str) else tuple(part_to_wire(part) for part in task),
        tuple(message_to_wire(message) for message in history),
        None if extension_state is None else _plain_state(extension_state),
    )
    return _encoded(wire)


def decode_inputs(
    plain: object,
) -> tuple[str | tuple[ContentPart, ...], tuple[Message, ...], dict[str, object] | None]:
    wire = _read(plain, _Inputs, "inputs of the run")
    try:
        task = (
            wire.task
            if isinstance(wire.task, str)
            else tuple(part_from_wire(part) for part in wire.task)
        )
        history = tuple(message_from_wire(message) for message in wire.history)
    except ValueError:  # a media part with both (or neither of) data and url
        raise RecordError("the recorded inputs of the run hold an invalid media part") from None
    return task, history, wire.extension_state


def _plain_state(state: Mapping[str, object]) -> dict[str, Any]:
    return {str(name): _plain(value, f"extension_state[{name!r}]") for name, value in state.items()}


def _plain(value: object, what: str) -> object:
    """``value`` as plain data, or a `RecordError` naming ``what`` and its type (not its
    content: the error reaches DBOS's log of the workflow's failure)."""
    try:
        return to_builtins(value)
    except TypeError:  # OutputError, whose message may quote part of the value
        raise RecordError(
            f"{what} cannot be recorded: it is a {type(value).__name__} holding something "
            "other than plain JSON data (dicts, lists, strings, numbers, booleans, None; "
            "dataclasses, pydantic models and dates are converted)"
        ) from None


# -- model responses -----------------------------------------------------------------------


def _usage(usage: Usage) -> _Usage:
    return _Usage(usage.input_tokens, usage.output_tokens, usage.cached_input_tokens)


def _calls(calls: Sequence[ToolCallRequest]) -> tuple[WireCall, ...]:
    return tuple(WireCall(call.id, call.name, call.arguments) for call in calls)


def _requests(calls: Sequence[WireCall]) -> tuple[ToolCallRequest, ...]:
    return tuple(ToolCallRequest(call.id, call.name, call.arguments) for call in calls)


def encode_response(response: ModelResponse) -> msgspec.Raw:
    wire = _Response(
        response.text,
        response.stop_reason,
        _usage(response.usage),
        response.model,
        _calls(response.tool_calls),
    )
    return _encoded(wire)


def decode_response(plain: object) -> ModelResponse:
    wire = _read(plain, _Response, "model response")
    usage = Usage(**msgspec.structs.asdict(wire.usage))
    return ModelResponse(wire.text, wire.stop_reason, usage, wire.model, _requests(wire.tool_calls))


# -- tool outcomes -------------------------------------------------------------------------


def _output(result: ToolResult[object]) -> _Output:
    """Raises ``OutputError`` (a ``TypeError``) when the output is not plain data."""
    media = tuple(part_to_wire(part) for part in result.media)
    return _Output(to_builtins(result.text), media, result.instructions)


def _result(wire: _Output, output_type: object, tool: str) -> ToolResult[object]:
    media = tuple(part_from_wire(part) for part in wire.media)
    return ToolResult(load_as(wire.output, output_type, tool), media, wire.instructions)


def _error(error: ToolCallError) -> _Error:
    return _Error(error.kind, error.message)


def _call_error(wire: _Error) -> ToolCallError:
    return ToolCallError(wire.kind, wire.message)


def encode_outcome(result: ToolResult[object] | None, error: ToolCallError | None) -> msgspec.Raw:
    """A call's outcome as JSON; ``OutputError`` when its output is not plain data."""
    if error is not None or result is None:
        failed = error or ToolCallError("tool_error", "the tool returned nothing")
        return _encoded(_Outcome(error=_error(failed)))
    return _encoded(_Outcome(result=_output(result)))


def decode_outcome(
    plain: object, output_type: object, tool: str
) -> tuple[ToolResult[object] | None, ToolCallError | None]:
    wire = _read(plain, _Outcome, f"outcome of a {tool} call")
    if wire.result is not None:
        try:
            return _result(wire.result, output_type, tool), None
        except ValueError:
            raise RecordError(
                f"the recorded outcome of a {tool} call holds an invalid media part"
            ) from None
    if wire.error is not None:
        return None, _call_error(wire.error)
    raise RecordError(f"the recorded outcome of a {tool} call holds neither a result nor an error")


def load_as(plain: object, output_type: object, tool: str) -> object:
    """``plain`` loaded into ``output_type`` (a tool's output, a run's answer): msgspec
    reverses what ``to_builtins`` wrote (dataclasses, Structs, dates, bytes as base64),
    pydantic what holds a pydantic model. A value that loads into neither stays plain
    data, with a warning naming the tool and the type, not the value."""
    if plain is None or output_type is Any or output_type is object:
        return plain  # None: no answer (the run stopped otherwise), or a tool that said so
    try:
        return msgspec.convert(plain, output_type)
    except (msgspec.ValidationError, TypeError):
        pass
    adapter = _adapter(output_type)
    if adapter is not None:
        try:
            return adapter.validate_python(plain)
        except pydantic.ValidationError:
            pass
    _log.warning(
        "a recorded output of %s does not load into %s (the type changed since it was "
        "recorded?): it is replayed as the plain data it was recorded as",
        tool,
        getattr(output_type, "__qualname__", repr(output_type)),
    )
    return plain


def _adapter(tp: object) -> pydantic.TypeAdapter[Any] | None:
    try:
        return _cached_adapter(tp)
    except TypeError:  # an unhashable type (Annotated metadata): build it each time
        return _new_adapter(tp)


@functools.lru_cache(maxsize=256)
def _cached_adapter(tp: object) -> pydantic.TypeAdapter[Any] | None:
    return _new_adapter(tp)


def _new_adapter(tp: Any) -> pydantic.TypeAdapter[Any] | None:  # any annotation
    try:
        return pydantic.TypeAdapter(tp)
    except (pydantic.PydanticSchemaGenerationError, pydantic.PydanticUserError, TypeError):
        return None


# -- the run's result ----------------------------------------------------------------------


def encode_result(runnable: str, result: AgentResult[Any]) -> msgspec.Raw:
    """The run's ``AgentResult`` as JSON; `RecordError` when a part of it is not plain
    data (its answer, a tool's output, the extension state), named without its value."""
    wire = _Result(
        runnable,
        result.stopped_by,
        _plain(result.answer, "the run's answer"),
        tuple(_step(step) for step in result.steps),
        tuple(message_to_wire(message) for message in result.messages),
        dict(result.stats),
        _usage(result.usage),
        result.limit,
        result.error,
        result.paused,
        _plain_state(result.extension_state),
        {name: _Savings(saved.kept_out, saved.cost) for name, saved in result.savings.items()},
        tuple(_held(held) for held in result.pending),
    )
    return _encoded(wire)


def _step(step: StepResult) -> _Step:
    return _Step(
        step.index,
        step.output,
        {name: list(found) for name, found in step.sections.items()},
        tuple(_chain_result(result) for result in step.tool_results),
        step.feedback,
        _usage(step.usage),
        step.duration,
        _calls(step.tool_calls),
    )


def _chain_result(result: ToolChainResult) -> _ChainResult:
    raw = result.raw
    return _ChainResult(
        result.text,
        tuple(part_to_wire(part) for part in result.media),
        tuple(_call(call) for call in raw.calls),
        tuple(None if found is None else _raw(found) for found in raw.results),
        tuple(None if error is None else _error(error) for error in raw.errors),
        tuple(_observation(seen) for seen in result.observations),
    )


def _call(call: ToolCall) -> _Call:
    rejected = None if call.rejected is None else _error(call.rejected)
    return _Call(call.name, dict(_plain_args(call.args)), call.id, rejected)


def _plain_args(args: Mapping[str, object]) -> Mapping[str, object]:
    """A call's arguments as plain data (they came from the model as JSON already)."""
    try:
        plain = to_builtins(args)
    except TypeError:  # a hook put something else in: record how it reads
        return {name: repr(value) for name, value in args.items()}
    return typing.cast("Mapping[str, object]", plain)


def _raw(found: RawToolCallResult) -> _Raw:
    media = tuple(part_to_wire(part) for part in found.result.media)
    output = _plain(found.result.text, f"an output of {found.name} in the run's result")
    return _Raw(found.name, _Output(output, media, found.result.instructions), found.id)


def _observation(seen: CallObservation) -> _Observation:
    return _Observation(
        seen.id,
        seen.name,
        seen.text,
        tuple(part_to_wire(part) for part in seen.media),
        seen.instructions,
        None if seen.error is None else _error(seen.error),
    )


Reader = Callable[[str], object]
"""A tool's output type by the tool's name (``Any`` for a tool not known here)."""


def decode_result(
    plain: object, types_of: Callable[[str], tuple[Reader, object]]
) -> tuple[str, AgentResult[Any]]:
    """The runnable's name and the ``AgentResult`` recorded as the workflow's result;
    ``types_of(name)`` gives that runnable's tools' output types and its answer type."""
    wire = _read(plain, _Result, "result of the run")
    output_types, answer_type = types_of(wire.runnable)
    try:
        result: AgentResult[Any] = AgentResult(
            load_as(wire.answer, answer_type, "the run's answer"),
            wire.stopped_by,
            tuple(_from_step(step, output_types) for step in wire.steps),
            tuple(message_from_wire(message) for message in wire.messages),
            wire.stats,
            Usage(**msgspec.structs.asdict(wire.usage)),
            wire.limit,
            wire.error,
            wire.paused,
            wire.extension_state,
            {name: Savings(saved.kept_out, saved.cost) for name, saved in wire.savings.items()},
            tuple(_from_held(held) for held in wire.pending),
        )
    except ValueError:
        raise RecordError("the recorded result of the run holds an invalid media part") from None
    return wire.runnable, result


def _held(held: ApprovalRequest) -> _Held:
    args = cast("dict[str, Any]", _plain(dict(held.args), "a held call's arguments"))
    message, schema = "", {}
    if isinstance(held, ElicitationRequest):
        message = held.message
        schema = cast("dict[str, Any]", _plain(dict(held.schema), "a question's schema"))
    return _Held(
        held.call_id,
        held.tool,
        args,
        held.risk,
        held.via,
        held.digest,
        held.run_id,
        held.seal,
        isinstance(held, ElicitationRequest),
        message,
        schema,
    )


def _from_held(wire: _Held) -> ApprovalRequest:
    risk: Risk = "destructive"
    if wire.risk in ("safe", "moderate"):
        risk = cast("Risk", wire.risk)
    held = ApprovalRequest(
        wire.call_id,
        wire.tool,
        wire.args,
        risk,
        wire.via,
        wire.digest,
        wire.run_id,
        wire.seal,
    )
    if not wire.question:
        return held
    # The same fields (the seal covers them), and what the server asked.
    return ElicitationRequest(
        **{field.name: getattr(held, field.name) for field in dataclasses.fields(held)},
        message=wire.message,
        schema=wire.schema,
    )


def _from_step(wire: _Step, output_types: Reader) -> StepResult:
    return StepResult(
        wire.index,
        wire.output,
        wire.sections,
        tuple(_from_chain_result(result, output_types) for result in wire.tool_results),
        wire.feedback,
        Usage(**msgspec.structs.asdict(wire.usage)),
        wire.duration,
        _requests(wire.tool_calls),
    )


def _from_chain_result(wire: _ChainResult, output_types: Reader) -> ToolChainResult:
    results: list[RawToolCallResult | None] = []
    for found in wire.results:
        if found is None:
            results.append(None)
            continue
        result = _result(found.result, output_types(found.name), found.name)
        results.append(RawToolCallResult(found.name, result.text, result, found.id))
    raw = RawToolChainResult(
        tuple(_from_call(call) for call in wire.calls),
        tuple(results),
        tuple(None if error is None else _call_error(error) for error in wire.errors),
    )
    return ToolChainResult(
        wire.text,
        tuple(part_from_wire(part) for part in wire.media),
        raw,
        tuple(_from_observation(seen) for seen in wire.observations),
    )


def _from_call(wire: _Call) -> ToolCall:
    rejected = None if wire.rejected is None else _call_error(wire.rejected)
    return ToolCall(wire.name, wire.args, wire.id, rejected)


def _from_observation(wire: _Observation) -> CallObservation:
    return CallObservation(
        wire.id,
        wire.name,
        wire.text,
        tuple(part_from_wire(part) for part in wire.media),
        wire.instructions,
        None if wire.error is None else _call_error(wire.error),
    )


def answer_type_of(termination: Termination[Any]) -> object:
    """The type a termination's answers have (``Any`` when it does not say)."""
    if isinstance(termination, TextTermination):
        return str
    if isinstance(termination, TypedTermination):
        return termination.model
    try:
        hinted: object = typing.get_type_hints(type(termination).parse_section).get("return")
    except Exception:  # a user's termination whose hints do not resolve: load it plain
        return Any
    return Any if hinted is None or isinstance(hinted, TypeVar) else hinted
