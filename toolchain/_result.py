"""What tools return and what a chain hands back to the loop: results, errors, and the
calls it holds for a person's decision (`ApprovalRequest`, decided by an `Approval`:
their machinery is ``toolchain._approvals``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MemberDescriptorType
from typing import Any, Generic, Literal, TypeVar, cast, get_origin

from toolchain._content import ContentPart, TextContent
from toolchain._errors import ToolchainLookupError, ToolchainTypeError
from toolchain._redact import redact

__all__ = [
    "Approval",
    "ApprovalRequest",
    "CallObservation",
    "ErrorKind",
    "RawToolCallResult",
    "RawToolChainResult",
    "Risk",
    "ToolCall",
    "ToolCallError",
    "ToolChainResult",
    "ToolResult",
]

OutputT = TypeVar("OutputT", covariant=True)
T = TypeVar("T")
C = TypeVar("C", bound=type)


class _Factory:
    """The default a field made by a factory shows in ``__init__``'s signature."""

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _Factory()


def slot_init(cls: C) -> C:
    """``cls`` (a frozen, slotted dataclass) with an ``__init__`` that sets each field
    through its slot's descriptor: the same parameters, defaults and ``__post_init__``
    as the generated one, which calls ``object.__setattr__`` per field instead. A chain
    builds several of these per call: one call's ``execute`` runs 10% fewer
    instructions (177,611 -> 160,325, valgrind), frozen as before.

    >>> @slot_init
    ... @dataclass(frozen=True, slots=True)
    ... class Point:
    ...     x: int
    ...     y: int = 0
    >>> Point(1), Point(1, y=2) == Point(1, 2)
    (Point(x=1, y=0), True)
    """
    fields = dataclasses.fields(cls)
    scope: dict[str, object] = {"_MISSING": _FACTORY}
    params: list[str] = []
    body: list[str] = []
    for each in fields:
        name = each.name
        # Only what the generated __init__ would take the same way: keyword-only
        # fields and fields left out of __init__ keep it.
        if not each.init or each.kw_only is True:
            return cls
        scope[f"_set_{name}"] = cls.__dict__[name].__set__
        if each.default is not dataclasses.MISSING:
            scope[f"_default_{name}"] = each.default
            params.append(f"{name}=_default_{name}")
        elif each.default_factory is not dataclasses.MISSING:
            scope[f"_factory_{name}"] = each.default_factory
            params.append(f"{name}=_MISSING")
            body.append(f"    if {name} is _MISSING: {name} = _factory_{name}()")
        else:
            params.append(name)
        body.append(f"    _set_{name}(self, {name})")
    if hasattr(cls, "__post_init__"):
        body.append("    self.__post_init__()")
    source = f"def __init__(self, {', '.join(params)}):\n" + "\n".join(body)
    exec(source, scope)  # as dataclasses makes __init__, from our own text only
    made = cast("Any", scope["__init__"])
    made.__qualname__ = f"{cls.__qualname__}.__init__"
    made.__annotations__ = cls.__dict__["__init__"].__annotations__  # as help() shows it
    cls.__init__ = made  # type: ignore[misc]  # the same signature, built faster
    return cls


@dataclass(frozen=True)  # no slots: Cls[T](...) must work (sets __orig_class__)
class ToolResult(Generic[OutputT]):
    """A tool's raw, typed output. Tools never format anything; chains do.

    ``text`` is the structured value (a dict, a model, a string …) the chain serialises
    as JSON or YAML; ``media`` are images, audio or files sent beside the observation;
    ``instructions`` is follow-up guidance shown to the model with the result.

    >>> ToolResult({"temp_c": 21}, instructions="Quote the temperature.").text
    {'temp_c': 21}
    """

    text: OutputT
    media: Sequence[ContentPart] = ()
    instructions: str = ""

    def __post_init__(self) -> None:
        # Tools are user code: ``instructions=None`` or a list of media must not break
        # the assembly of every other call's observation later on. The common case (a
        # str and a tuple) costs one type check each.
        if type(self.instructions) is not str:
            instructions = cast(object, self.instructions)  # whatever the tool passed
            if instructions is not None:
                raise ToolchainTypeError(
                    f"ToolResult.instructions must be a string, got {type(instructions).__name__}"
                )
            object.__setattr__(self, "instructions", "")
        if type(self.media) is not tuple:
            media = cast(object, self.media)  # whatever the tool passed
            if isinstance(media, str | bytes) or not isinstance(media, Sequence):
                raise ToolchainTypeError(
                    f"ToolResult.media must be a sequence of content parts, "
                    f"got {type(media).__name__}"
                )
            object.__setattr__(self, "media", tuple(self.media))


@slot_init
@dataclass(frozen=True, slots=True)
class ToolCall:
    """One call: a tool name, its raw arguments and an id.

    ``id`` is the id a native tool-calling API gave the call, or one the chain
    assigned (``call_1``, ``call_2`` … in the action) when it had none.

    ``rejected`` marks a call that must not run (its native arguments were not JSON,
    or its tool is not active this step): the chain answers it with that error, under
    its own name and id, like any other failed call.

    >>> ToolCall("get_weather", {"city": "Paris"}).name
    'get_weather'
    """

    name: str
    # `lambda: {}`, not `dict`: the empty dict is then typed by the field.
    args: Mapping[str, object] = field(default_factory=lambda: {})
    id: str = ""
    rejected: ToolCallError | None = None


ErrorKind = Literal[
    "parse",
    "unknown_tool",
    "invalid_arguments",
    "tool_error",
    "timeout",
    "cancelled",
    "output_error",
    "hook_error",
    "refused",
    "limit",
    "held",
]
"""Why a call failed. ``held``: it has not run yet, it waits for a person's decision
(``ToolChainResult.pending``); resuming decides it."""


@slot_init
@dataclass(frozen=True, slots=True)
class ToolCallError:
    """Why one call failed, for the program; ``message`` is what the model was shown.

    The message is redacted as the error is made (`toolchain._redact.redact`): a key in
    what a tool raised never reaches the model, a log, a trace or a span through it.
    ``exception`` is the exception itself, as raised, for the program to inspect; its
    own text is not changed.

    >>> ToolCallError("unknown_tool", "unknown tool 'wether'").kind
    'unknown_tool'
    >>> ToolCallError("tool_error", "lookup failed: bad key sk-proj-0123456789abcdefXYZ").message
    'lookup failed: bad key [REDACTED]'
    """

    kind: ErrorKind
    message: str
    exception: BaseException | None = None

    def __post_init__(self) -> None:
        # One place every failure passes, whatever made it (a chain, a hook, a dialect,
        # an MCP server): a frozen dataclass sets its own field this way.
        object.__setattr__(self, "message", redact(self.message))


@slot_init
@dataclass(frozen=True, slots=True)
class RawToolCallResult:
    """A successful call: its tool's name, its raw typed ``output`` and the whole result.

    ``output`` is the tool's ``ToolResult.text``, as the tool returned it (gent's
    ``RawToolCallResult.Output``); ``result`` keeps the ``ToolResult`` with its media
    and instructions.

    >>> raw = RawToolCallResult("get_weather", {"temp_c": 21}, ToolResult({"temp_c": 21}))
    >>> raw.output
    {'temp_c': 21}
    """

    name: str
    output: object
    result: ToolResult[object]
    id: str = ""


@slot_init
@dataclass(frozen=True, slots=True)
class RawToolChainResult:
    """Everything a chain did, unformatted. ``results[i]`` / ``errors[i]`` match ``calls[i]``.

    >>> raw = RawToolChainResult(calls=(ToolCall("x"),), results=(None,), errors=(None,))
    >>> raw.ok
    True
    """

    calls: tuple[ToolCall, ...] = ()
    results: tuple[RawToolCallResult | None, ...] = ()
    errors: tuple[ToolCallError | None, ...] = ()

    @property
    def ok(self) -> bool:
        """True when no call failed."""
        return all(error is None for error in self.errors)

    def output(self, index: int, expected: type[T]) -> T:
        """Call ``index``'s raw output, checked at run time to be an ``expected``.

        Raises ``LookupError`` when that call failed (its ``ToolCallError`` message
        included) and ``TypeError`` when the output is of another type. For a generic
        type such as ``dict[str, int]`` only the origin (``dict``) is checked.

        >>> raw = RawToolChainResult(
        ...     calls=(ToolCall("add"),),
        ...     results=(RawToolCallResult("add", 5, ToolResult(5)),),
        ...     errors=(None,),
        ... )
        >>> raw.output(0, int) + 1
        6
        """
        found = self.results[index]
        if found is None:
            error = self.errors[index]
            why = f": {error.kind}: {error.message}" if error is not None else ""
            raise ToolchainLookupError(
                f"call {index} ({self.calls[index].name}) has no output{why}"
            )
        check: Any = get_origin(expected) or expected
        if not isinstance(found.output, check):
            raise ToolchainTypeError(
                f"call {index} ({found.name}) returned {type(found.output).__name__}, "
                f"not {getattr(expected, '__name__', expected)}"
            )
        return cast(T, found.output)


Risk = Literal["safe", "moderate", "destructive"]
"""How careful to be with a tool (tool discovery's ``ToolInfo.risk``)."""


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    """A call waiting for a decision: what would run, with which arguments, from where.

    - ``call_id``: the call's id (a composite's sub-call: ``<id>/<index>``); the key of
      its decision in ``resume(result, {call_id: Approval.granted()})``.
    - ``tool``, ``args``: the tool and its validated arguments, as plain data: what runs
      once approved, exactly.
    - ``risk``: tool discovery's risk level of the tool (``"safe"`` otherwise).
    - ``via``: the tools the call was made inside, outermost first: the sub-agents
      (``def_agent``) and the composite tool it came through; ``()`` for a call the
      run's own model made.
    - ``digest``: SHA-256 of the arguments (``args_digest``); ``run_id``: the run it was
      made in. A decision made with `approve` / `deny` is bound to both.
    - ``seal``: an HMAC of the rest, set when the call is held (see `Seal`).

    >>> request = ApprovalRequest("call_1", "publish_page", {"page_id": "p1"}, via=("cms",))
    >>> request.via, request.risk
    (('cms',), 'safe')
    """

    call_id: str
    tool: str
    args: Mapping[str, object]
    risk: Risk = "safe"
    via: tuple[str, ...] = ()
    digest: str = ""
    run_id: str = ""
    seal: str = field(default="", repr=False)

    def approve(self, reason: str = "") -> Approval:
        """``Approval.granted(reason)``, bound to this call: refused if given for another
        call, another run, or other arguments.

        >>> ApprovalRequest("call_1", "t", {}, digest="d1", run_id="r1").approve().digest
        'd1'
        """
        return Approval(True, reason, self.call_id, self.run_id, self.digest)

    def deny(self, reason: str = "") -> Approval:
        """``Approval.denied(reason)``, bound to this call (see `approve`)."""
        return Approval(False, reason, self.call_id, self.run_id, self.digest)


@dataclass(frozen=True, slots=True)
class Approval:
    """A person's decision on one call: ``Approval.granted()`` or ``Approval.denied(reason)``.

    A denial's ``reason`` is what the model reads as the call's result. ``call_id``,
    ``run_id`` and ``digest`` bind a decision to one call (`ApprovalRequest.approve`);
    empty, it applies to the call it is given for. ``approved`` must be a real ``bool``:
    ``Approval("false")`` is a ``TypeError``, never an approval.

    >>> Approval.denied("publishing waits for legal review").reason
    'publishing waits for legal review'
    >>> Approval("false")
    Traceback (most recent call last):
    ...
    toolchain._errors.ToolchainTypeError: Approval.approved must be True or False, not str
    """

    approved: bool
    reason: str = ""
    call_id: str = ""
    run_id: str = ""
    digest: str = ""

    def __post_init__(self) -> None:
        # A decision may come from a form or a message: "false" is truthy, so only a
        # real bool may approve.
        approved: object = self.approved
        if type(approved) is not bool:
            raise ToolchainTypeError(
                f"Approval.approved must be True or False, not {type(approved).__name__}"
            )
        for name in ("reason", "call_id", "run_id", "digest"):
            value: object = getattr(self, name)
            if not isinstance(value, str):
                raise ToolchainTypeError(
                    f"Approval.{name} must be a string, not {type(value).__name__}"
                )

    @classmethod
    def granted(cls, reason: str = "") -> Approval:
        return cls(True, reason)

    @classmethod
    def denied(cls, reason: str = "") -> Approval:
        return cls(False, reason)


@slot_init
@dataclass(frozen=True, slots=True)
class CallObservation:
    """One call's share of an observation: what a native tool-calling loop sends back
    as that call's own tool message.

    ``text`` is the serialised output (JSON or YAML, as the chain writes it), or
    ``Error: …`` when the call failed (then ``error`` is set).

    >>> CallObservation("call_1", "add", "5").text
    '5'
    """

    id: str
    name: str
    text: str
    media: tuple[ContentPart, ...] = ()
    instructions: str = ""
    error: ToolCallError | None = None


@slot_init
@dataclass(frozen=True, slots=True)
class ToolChainResult:
    """The observation for the model (``text`` + ``media``) and the ``raw`` results.

    ``text`` is the whole observation, already wrapped by the format's
    ``wrap_observation``; ``media`` the calls' attachments in order, numbered as the
    text says; ``observations`` the same per call. A chain writing with ``XMLFormat``
    or ``MarkdownFormat`` writes ``text`` when it is first read (a native agent sends
    the per-call observations and never reads it); it reads the same either way.

    >>> ToolChainResult("<observation>…</observation>").as_content_parts()
    (TextContent(text='<observation>…</observation>'),)
    """

    text: str = ""
    media: tuple[ContentPart, ...] = ()
    raw: RawToolChainResult = field(default_factory=RawToolChainResult)
    observations: tuple[CallObservation, ...] = ()
    """One entry per call, in call order (see ``CallObservation``)."""
    pending: tuple[ApprovalRequest, ...] = ()
    """The calls held for a person's decision (``Tool.requires_approval``), sealed; each
    stands in ``raw.errors`` as a ``held`` error until ``ToolChainBase.resume`` decides
    it."""

    def as_content_parts(self) -> tuple[ContentPart, ...]:
        """The observation as one message's content: text first, then media."""
        text = self.text  # read once: see _text
        return (TextContent(text), *self.media) if text else self.media


class _Later:
    """A `ToolChainResult`'s text not written yet: ``write()`` writes it."""

    __slots__ = ("write",)

    def __init__(self, write: Callable[[], str]) -> None:
        self.write = write


_TEXT_SLOT: MemberDescriptorType = ToolChainResult.__dict__["text"]
_read_slot = _TEXT_SLOT.__get__
_write_slot = _TEXT_SLOT.__set__


def _text(result: ToolChainResult) -> str:
    """``ToolChainResult.text``: the text in the field's slot, written there on its
    first read when the result was made with its text to come (`text_on_read`).

    Every way of reading a field goes through here (attribute access, ``==``,
    ``repr``, pickling and copying, ``dataclasses.replace`` / ``asdict``), so a
    result made either way reads, compares and copies the same. A property, not a
    descriptor class: a read costs one call of this function (``as_content_parts``
    reads it once).
    """
    text: object = _read_slot(result)
    if type(text) is _Later:
        text = text.write()
        _write_slot(result, text)  # two readers at once write the same text
    return cast(str, text)


ToolChainResult.text = property(_text, _write_slot, _TEXT_SLOT.__delete__)  # type: ignore[assignment,misc]  # the field, read through _text


def text_on_read(
    write: Callable[[], str],
    media: tuple[ContentPart, ...],
    raw: RawToolChainResult,
    observations: tuple[CallObservation, ...],
) -> ToolChainResult:
    """``ToolChainResult(write(), media, raw, observations)``, with ``write()`` called
    on the first read of ``text``, not now: a native agent reads each call's own
    observation, never the whole action's text. ``write`` must give the same text
    whenever it is called (it may be called by two threads at once) and not fail.

    >>> result = text_on_read(lambda: "<observation/>", (), RawToolChainResult(), ())
    >>> result.text, result == ToolChainResult("<observation/>")
    ('<observation/>', True)
    """
    result = ToolChainResult("", media, raw, observations)
    _write_slot(result, _Later(write))
    return result
