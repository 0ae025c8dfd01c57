"""How DBOS stores a durable run's values: JSON documents, bounded, never a pickle.

DBOS hands its serializer every value it writes for a workflow: the inputs, each step's
output, events and messages, the result, and the exception of a step or a workflow that
failed. `RecordSerializer` writes each as one JSON document, ``{"v": value}`` or
``{"error": {"kind": ..., "message": ...}}``, and reads them back as plain data:

- a value the record format encoded (``msgspec.Raw``, or a `Recorded` that also
  carries the live value for the process that made it) is written as it is; other plain
  data (approval events and decisions, a user's own events) is encoded here;
- a document over `MAX_RECORD_BYTES` is refused with a `RecordError` before DBOS sends
  it to the database: SQLite and Postgres refuse about 1 GB, and their error quotes the
  SQL with the value's first bytes;
- an exception is written as its class and its message (redacted); read back, ours and
  the model adapters' come back as their own class, any other as `DurableError`;
- nothing is logged (DBOS's own serializer logs a value it cannot pickle whole, at
  ERROR: a conversation, keys and card numbers in it).

DBOS reads each row with the serializer the row names, and reads a row named
``py_pickle`` with ``pickle.loads`` whatever serializer it was given: whoever can write
the database could run code in a process that reads it. `refuse_pickles` replaces that
reader in this process with one that raises `RecordError`; ``launch`` and `client`
call it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import msgspec
from dbos import DBOSClient, DBOSConfig, Serializer

# DBOS exposes its pickle reader only in this private module (see refuse_pickles).
from dbos import _serialization as dbos_serialization  # pyright: ignore[reportPrivateUsage]

from agents._errors import AgentTypeError
from agents.durable._errors import DurableError, RecordError, ReplayError
from agents.models import (
    ModelCallError,
    ModelConfigError,
    ModelError,
    ModelTimeoutError,
    ScriptExhaustedError,
    UnsupportedContentError,
)
from toolchain.runtime import redact

__all__ = [
    "MAX_RECORD_BYTES",
    "RecordSerializer",
    "Recorded",
    "check_client",
    "client",
    "record_settings",
    "refuse_pickles",
]

MAX_RECORD_BYTES: Final = 512 * 1024 * 1024
"""The largest value written to the run database in one piece (a step's output, the
run's result): 512 MiB of JSON, half of what SQLite (by default) and Postgres take."""

FORMAT_NAME: Final = "gent_json"
"""The name DBOS writes beside each value (its ``serialization`` column)."""


class Recorded:
    """A value made live in this process and the JSON it is recorded as: DBOS writes
    ``record`` and hands ``live`` back to the code that made it (a replay, in another
    process, reads the record). Not a tuple nor a dataclass: msgspec would encode those
    itself, where it must ask `_record_of`."""

    __slots__ = ("live", "record")

    def __init__(self, live: object, record: msgspec.Raw) -> None:
        self.live = live
        self.record = record


class _Failure(msgspec.Struct, frozen=True, omit_defaults=True):
    kind: str
    message: str
    status_code: int | None = None


class _Document(msgspec.Struct, frozen=True, omit_defaults=True):
    v: Any = None
    error: _Failure | None = None


def _record_of(value: object) -> msgspec.Raw:
    if isinstance(value, Recorded):
        return value.record
    raise NotImplementedError  # msgspec then raises TypeError: not plain data


_ENCODER: Final = msgspec.json.Encoder(enc_hook=_record_of)
_DECODER: Final = msgspec.json.Decoder(_Document)

_OURS: Final[Mapping[str, type[Exception]]] = {
    f"{kind.__module__}.{kind.__qualname__}": kind
    for kind in (
        DurableError,
        RecordError,
        ReplayError,
        ModelError,
        ModelConfigError,
        UnsupportedContentError,
        ScriptExhaustedError,
    )
}
"""The errors read back as their own class: a closed list, so a record can name no
other class to build."""
_CALL_ERRORS: Final[Mapping[str, type[ModelCallError]]] = {
    f"{kind.__module__}.{kind.__qualname__}": kind for kind in (ModelCallError, ModelTimeoutError)
}
"""The same for failed model calls, read back with their HTTP status."""


class RecordSerializer(Serializer):
    """DBOS's serializer for durable runs (see the module's docstring).

    >>> serializer = RecordSerializer()
    >>> serializer.deserialize(serializer.serialize({"approved": True}))
    {'approved': True}
    """

    def name(self) -> str:
        return FORMAT_NAME

    def serialize(self, data: Any) -> str:
        if isinstance(data, BaseException):
            document = _ENCODER.encode(_Document(error=_failure(data)))
        else:
            try:
                document = _ENCODER.encode(_Document(data))
            except (TypeError, ValueError, OverflowError, RecursionError) as error:
                # msgspec's messages name the type at fault, never a value.
                raise RecordError(f"a durable run records plain JSON data: {error}") from None
        if len(document) > MAX_RECORD_BYTES:
            raise RecordError(
                f"a value of {len(document):,} bytes cannot be recorded: a durable run "
                f"records at most {MAX_RECORD_BYTES:,} bytes in one piece"
            )
        return document.decode()

    def deserialize(self, serialized_data: str) -> Any:
        try:
            document = _DECODER.decode(serialized_data)
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
            raise RecordError(
                "a value in the run database is not a JSON document of agents.durable's "
                "record format"
            ) from None
        if document.error is not None:
            return _exception(document.error)
        return document.v


def _failure(error: BaseException) -> _Failure:
    kind = type(error)
    name = f"{kind.__module__}.{kind.__qualname__}"
    if isinstance(error, DurableError):
        name = name if error.kind == kind.__name__ else error.kind
        return _Failure(name, error.message)
    status = getattr(error, "status_code", None)
    return _Failure(name, redact(str(error)), status if isinstance(status, int) else None)


def _exception(failure: _Failure) -> Exception:
    call_error = _CALL_ERRORS.get(failure.kind)
    if call_error is not None:
        return call_error(failure.message, status_code=failure.status_code)
    kind = _OURS.get(failure.kind)
    if kind is None:
        return DurableError(failure.message, kind=failure.kind.rpartition(".")[2])
    return kind(failure.message)


class _NoPickle(dbos_serialization.DefaultSerializer):
    """DBOS's reader of ``py_pickle`` rows, refusing them."""

    def serialize(self, data: Any) -> str:
        # DBOS writes with a row's own serializer (a workflow refused below is marked
        # ERROR in its own format): write JSON, which this reader refuses in turn.
        return RecordSerializer().serialize(data)

    def deserialize(self, serialized_data: str) -> Any:
        raise RecordError(
            "a value in the run database is a Python pickle (DBOS's 'py_pickle'), and "
            "agents.durable never unpickles: loading a pickle runs whatever code it "
            "names. agents.durable writes JSON only, so this value was written by "
            "something else: check who can write the run database"
        )


def refuse_pickles() -> None:
    """Make DBOS in this process refuse, instead of unpickle, a value stored as a pickle.

    >>> refuse_pickles()
    >>> from dbos._serialization import deserialize_value
    >>> deserialize_value("gASVAAAAAA==", "py_pickle", RecordSerializer())
    Traceback (most recent call last):
    ...
    agents.durable._errors.RecordError: a value in the run database is a Python pickle ...
    """
    # DBOS looks its pickle reader up by this module attribute on every read (3.4).
    if not isinstance(dbos_serialization.DBOSDefaultSerializer, _NoPickle):
        dbos_serialization.DBOSDefaultSerializer = _NoPickle()


def record_settings(config: DBOSConfig | None) -> DBOSConfig:
    """The DBOS settings durable runs need, over ``config``'s: this serializer, and SQL
    parameters left out of database errors (an error would quote a recorded value)."""
    given: DBOSConfig = config or {}
    if given.get("serializer") is not None:
        raise AgentTypeError(
            "launch() sets DBOS's serializer itself: durable runs record plain JSON "
            "(agents.durable.RecordSerializer); remove serializer= from config"
        )
    refuse_pickles()
    engine = {"hide_parameters": True, **(given.get("db_engine_kwargs") or {})}
    return {"serializer": RecordSerializer(), "db_engine_kwargs": engine}


def client(database_url: str, **options: Any) -> DBOSClient:
    """A ``DBOSClient`` on a run database, reading and writing durable runs' records:
    for ``pending`` / ``decide`` / ``retrieve`` from a process that runs no workflows.

    ``options`` go to ``DBOSClient`` (``application_name=`` …). Call ``destroy()`` on it
    when done.

    Example::

        web = client("postgresql://…/runs")
        waiting = await pending("ticket-42", client=web)
    """
    refuse_pickles()
    return DBOSClient(system_database_url=database_url, serializer=RecordSerializer(), **options)


def check_client(given: DBOSClient) -> DBOSClient:
    """``given`` if it reads this record format; a ``TypeError`` saying how to build one
    otherwise (a plain ``DBOSClient`` writes pickles, which a run refuses)."""
    # DBOSClient keeps the serializer it was built with here, and has no accessor (3.4).
    used = getattr(given, "_serializer", None)
    if not isinstance(used, RecordSerializer):
        raise AgentTypeError(
            "this DBOSClient does not use durable runs' record format: build it with "
            "agents.durable.client(database_url)"
        )
    return given
