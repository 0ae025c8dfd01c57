"""Prompt cases: a Markdown prompt with YAML frontmatter saying what a good run does.

The tool-context-relay PoC's case files load unchanged::

    ---
    id: case3
    tool_calls:                       # in order; a repeated tool_name is a repeated call
      - tool_name: yt_transcribe
        opaque_id_result: true        # its result must be an internal:// reference
      - tool_name: deep_check
        opaque_id_input: true         # an argument must be a reference returned earlier
      - tool_name: internal_resource_read_slice
        allow_multiple: true          # counts, any order; may run more often than listed
    forbidden_tools: [internal_resource_read]
    ---
    Generate a transcript of the YouTube video with video_id='123' ...

Beyond those keys (all optional):

- ``description``; ``toolset`` (``relay``, the default: the PoC's simulated tools under
  a ``ContextRelay``; ``airline``: the demo's SkyWings tools; or ``package.module:factory``,
  see `agents.evals.toolsets`);
- ``order``: ``in_order`` (the expected tools' calls, in exactly the listed sequence)
  or ``any_order`` (counts only); without it, ``any_order`` as soon as an entry has
  ``allow_multiple``, as in the PoC;
- per ``tool_calls`` entry: ``args`` (argument name -> matcher, see
  `agents.evals.matchers`), ``args_schema`` (a JSON Schema for all the arguments),
  ``result`` (``contains`` / ``not_contains`` / ``regex`` on the result the model saw);
- ``call_counts``: tool name (``"*"``: every call) -> a count, or ``{min: n, max: m}``;
- ``answer``: ``contains``, ``not_contains``, ``regex``, ``model`` (a pydantic model by
  import path), ``predicate`` (a function by import path);
- ``expect_internal_resolve`` (the PoC's): true -> a reader tool must open an earlier
  reference; false -> no reader tool that ``tool_calls`` does not list may run;
- ``stopped_by`` (default ``answer``), ``max_steps`` (``max_iterations`` until this
  release), ``today`` (the date the
  system prompt shows; fixed so that recordings replay), ``text_format``
  (``xml``/``markdown``) and ``calls`` (``json``/``yaml``) for the text protocol.

A file without frontmatter is a plain prompt: it runs, and nothing is checked but that
the run ends with an answer. Frontmatter is read with PyYAML's safe loader, at most
64 KiB of it in a file of at most 1 MiB, without aliases or duplicate keys. Every
mistake raises `CaseFileError` naming the file and the key.

>>> case = parse_case("---\\nid: 1\\nforbidden_tools: [internal_resource_read]\\n---\\nHi.")
>>> case.id, case.prompt, sorted(case.forbidden_tools)
('case1', 'Hi.', ['internal_resource_read'])
"""

from __future__ import annotations

import datetime as dt
import glob
import stat
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Literal, cast

from pydantic import BaseModel
from typing_extensions import deprecated

from agents._errors import AgentError, AgentValueError
from agents.evals._frontmatter import (
    MAX_FILE_BYTES,
    MAX_FRONTMATTER_CHARS,
    FrontmatterError,
    boolean,
    choice,
    count,
    date,
    kind_of,
    known_keys,
    listed,
    load_yaml,
    mapping,
    names,
    optional_boolean,
    split,
    string,
)
from agents.evals.matchers import (
    AnswerCheck,
    MatcherSpecError,
    Predicate,
    SchemaValid,
    TextCheck,
    ValueMatcher,
    import_object,
    value_matcher,
)
from agents.evals.toolsets import ToolsetError, resolve_toolset

__all__ = [
    "CallExpectation",
    "CaseFileError",
    "CountBound",
    "PromptCase",
    "expand_case_paths",
    "load_case",
    "load_cases",
    "parse_case",
]


Order = Literal["in_order", "any_order"]

_TOP_KEYS: Final = (
    "id",
    "description",
    "toolset",
    "tool_calls",
    "forbidden_tools",
    "order",
    "call_counts",
    "answer",
    "expect_internal_resolve",
    "stopped_by",
    "max_steps",
    "max_iterations",  # max_steps's old name, for one release
    "today",
    "text_format",
    "calls",
)
_ENTRY_KEYS: Final = (
    "tool_name",
    "allow_multiple",
    "opaque_id_input",
    "opaque_id_result",
    "args",
    "args_schema",
    "result",
)
_TEXT_KEYS: Final = ("contains", "not_contains", "regex")
_ANSWER_KEYS: Final = (*_TEXT_KEYS, "model", "predicate")
_STOPS: Final = ("answer", "limit", "cancelled", "paused", "error")
_FOLDER_NAMES: Final = frozenset({"", ".", ".."})
"""Ids a case cannot have: its recordings are kept in a folder named by its id."""


class CaseFileError(AgentError, ValueError):
    """A case file that cannot be used: ``path``, the ``key`` at fault, and why.

    >>> str(CaseFileError("prompts/case1.md", "tool_calls[0].tool_name", "missing"))
    'prompts/case1.md: tool_calls[0].tool_name: missing'
    """

    def __init__(self, path: str, key: str, message: str) -> None:
        super().__init__(f"{path}: {key}: {message}" if key else f"{path}: {message}")
        self.path = path
        self.key = key
        self.message = message


@dataclass(frozen=True, slots=True)
class CountBound:
    """How many calls are allowed: ``min`` to ``max`` (``None``: unbounded above).

    >>> CountBound(1, 2).check(3)
    'expected at most 2, got 3'
    """

    min: int = 0
    max: int | None = None

    def check(self, count: int) -> str | None:
        if count < self.min:
            return f"expected at least {self.min}, got {count}"
        if self.max is not None and count > self.max:
            return f"expected at most {self.max}, got {count}"
        return None


@dataclass(frozen=True, slots=True)
class CallExpectation:
    """One entry of ``tool_calls``: a call the run must make, and what it must hold."""

    tool_name: str
    allow_multiple: bool = False
    opaque_id_input: bool = False
    opaque_id_result: bool = False
    args: Mapping[str, ValueMatcher] = field(default_factory=lambda: {})
    args_schema: ValueMatcher | None = None
    result: TextCheck | None = None


@dataclass(frozen=True, slots=True)
class PromptCase:
    """A prompt and the expectations of its frontmatter (see the module text)."""

    id: str
    prompt: str
    path: Path | None = None
    description: str = ""
    toolset: str = "relay"
    tool_calls: tuple[CallExpectation, ...] = ()
    forbidden_tools: frozenset[str] = frozenset()
    order: Order | None = None
    call_counts: Mapping[str, CountBound] = field(default_factory=lambda: {})
    answer: AnswerCheck | None = None
    expect_internal_resolve: bool | None = None
    stopped_by: str = "answer"
    max_steps: int | None = None
    today: dt.date | None = None
    text_format: Literal["xml", "markdown"] | None = None
    calls: Literal["json", "yaml"] | None = None
    has_frontmatter: bool = False

    @property
    @deprecated(
        "PromptCase.max_iterations is PromptCase.max_steps now; "
        "the old name goes in the next release"
    )
    def max_iterations(self) -> int | None:
        """``max_steps``, under its old name (for one release)."""
        return self.max_steps

    def __post_init__(self) -> None:
        if self.id in _FOLDER_NAMES:
            raise AgentValueError(f"{self.id!r} cannot be a case id: it names a folder")

    @property
    def effective_order(self) -> Order:
        """``order`` as given, else the PoC's rule (``any_order`` with ``allow_multiple``)."""
        if self.order is not None:
            return self.order
        return "any_order" if any(e.allow_multiple for e in self.tool_calls) else "in_order"


# -- from YAML to a case -------------------------------------------------------------


def parse_case(text: str, *, path: Path | str | None = None, default_id: str = "") -> PromptCase:
    """The case in ``text`` (a case file's content); `CaseFileError` when it is malformed.

    ``default_id`` is used when the frontmatter has no ``id`` (files use their stem).

    >>> parse_case("---\\ntool_calls: [{tool_name: x, allow_multiple: maybe}]\\n---\\nGo.")
    Traceback (most recent call last):
    ...
    agents.evals.cases.CaseFileError: <text>: tool_calls[0].allow_multiple: expected true or ...
    """
    shown = str(path) if path is not None else "<text>"
    try:
        return _parse(text, Path(path) if path is not None else None, default_id)
    except FrontmatterError as error:
        raise CaseFileError(shown, error.key, error.message) from None
    except MatcherSpecError as error:
        raise CaseFileError(shown, error.where, error.message) from None


def _steps_key(data: Mapping[object, object], path: Path | None) -> str:
    """The key that bounds the case's steps: ``max_steps``, or its old name
    ``max_iterations`` (with a warning, for one release); both is an error."""
    if "max_iterations" not in data:
        return "max_steps"
    if "max_steps" in data:
        raise FrontmatterError(
            "max_iterations", "give max_steps only (max_iterations is its old name)"
        )
    warnings.warn(
        f"{path or '<text>'}: max_iterations is max_steps now; "
        "the old key goes in the next release",
        DeprecationWarning,
        stacklevel=4,  # parse_case's caller
    )
    return "max_iterations"


def _parse(text: str, path: Path | None, default_id: str) -> PromptCase:
    if len(text) > MAX_FILE_BYTES:
        raise FrontmatterError("", f"the file is larger than {MAX_FILE_BYTES} bytes")
    frontmatter, body = split(text)
    if not body:
        raise FrontmatterError("", "the prompt (the text after the frontmatter) is empty")
    fallback = _checked_id(
        _case_id(default_id or (path.stem if path is not None else "prompt")), "id"
    )
    if frontmatter is None:
        return PromptCase(id=fallback, prompt=body, path=path)
    if len(frontmatter) > MAX_FRONTMATTER_CHARS:
        raise FrontmatterError("", f"the frontmatter is longer than {MAX_FRONTMATTER_CHARS}")
    loaded = load_yaml(frontmatter)
    if loaded is None:
        loaded = {}
    if not isinstance(loaded, dict):
        raise FrontmatterError("", f"the frontmatter must be a mapping, got {kind_of(loaded)}")
    data = cast("dict[object, object]", loaded)
    known_keys(data, _TOP_KEYS, "")
    raw_id = data.get("id")
    case_id = _checked_id(_case_id(str(raw_id)), "id") if raw_id not in (None, "") else fallback
    entries = listed(data.get("tool_calls"), "tool_calls")
    toolset = string(data.get("toolset", "relay"), "toolset", required=True)
    steps_key = _steps_key(data, path)
    try:
        resolve_toolset(toolset)  # a name or import path that is no toolset fails here
    except ToolsetError as error:
        raise FrontmatterError("toolset", str(error)) from None
    return PromptCase(
        id=case_id,
        prompt=body,
        path=path,
        description=string(data.get("description", ""), "description"),
        toolset=toolset,
        tool_calls=tuple(_entry(item, f"tool_calls[{i}]") for i, item in enumerate(entries)),
        forbidden_tools=frozenset(names(data.get("forbidden_tools"), "forbidden_tools")),
        order=cast(Order | None, choice(data.get("order"), "order", ("in_order", "any_order"))),
        call_counts=_counts(data.get("call_counts"), "call_counts"),
        answer=_answer(data.get("answer"), "answer"),
        expect_internal_resolve=optional_boolean(
            data.get("expect_internal_resolve"), "expect_internal_resolve"
        ),
        stopped_by=choice(data.get("stopped_by"), "stopped_by", _STOPS) or "answer",
        max_steps=count(data.get(steps_key), steps_key, least=1),
        today=date(data.get("today"), "today"),
        text_format=cast(
            "Literal['xml', 'markdown'] | None",
            choice(data.get("text_format"), "text_format", ("xml", "markdown")),
        ),
        calls=cast(
            "Literal['json', 'yaml'] | None", choice(data.get("calls"), "calls", ("json", "yaml"))
        ),
        has_frontmatter=True,
    )


def _case_id(raw: str) -> str:
    """The PoC's ids: a bare number ``3`` is ``case3``; a path or ``.md`` suffix is dropped."""
    text = raw.strip().replace("\\", "/").rsplit("/", 1)[-1]
    text = text.removesuffix(".md").removesuffix(".txt")
    return f"case{text}" if text.isdigit() else text


def _checked_id(case_id: str, key: str) -> str:
    if case_id in _FOLDER_NAMES:
        raise FrontmatterError(key, f"{case_id!r} cannot be a case id: it names a folder")
    return case_id


def _entry(value: object, key: str) -> CallExpectation:
    data = mapping(value, key)
    known_keys(data, _ENTRY_KEYS, key)
    if "tool_name" not in data:
        raise FrontmatterError(f"{key}.tool_name", "missing: every entry names its tool")
    args_spec = mapping(data.get("args", {}), f"{key}.args")
    args = {
        str(name): value_matcher(spec, f"{key}.args.{name}") for name, spec in args_spec.items()
    }
    schema = data.get("args_schema")
    args_schema = None
    if schema is not None:
        args_schema = value_matcher({"schema": schema}, f"{key}.args_schema")
        assert isinstance(args_schema, SchemaValid)
    result = None
    if "result" in data:
        spec = mapping(data["result"], f"{key}.result")
        known_keys(spec, _TEXT_KEYS, f"{key}.result")
        result = TextCheck.from_spec(cast("dict[str, object]", spec), f"{key}.result")
    return CallExpectation(
        tool_name=string(data["tool_name"], f"{key}.tool_name", required=True),
        allow_multiple=boolean(data.get("allow_multiple", False), f"{key}.allow_multiple"),
        opaque_id_input=boolean(data.get("opaque_id_input", False), f"{key}.opaque_id_input"),
        opaque_id_result=boolean(data.get("opaque_id_result", False), f"{key}.opaque_id_result"),
        args=args,
        args_schema=args_schema,
        result=result,
    )


def _counts(value: object, key: str) -> dict[str, CountBound]:
    bounds: dict[str, CountBound] = {}
    for name, spec in mapping(value if value is not None else {}, key).items():
        where = f"{key}.{name}"
        if isinstance(spec, int) and not isinstance(spec, bool):
            exact = count(spec, where)
            bounds[str(name)] = CountBound(exact or 0, exact)
            continue
        data = mapping(spec, where)
        known_keys(data, ("min", "max"), where)
        low = count(data.get("min"), f"{where}.min") or 0
        high = count(data.get("max"), f"{where}.max")
        if high is not None and high < low:
            raise FrontmatterError(where, f"max ({high}) is below min ({low})")
        bounds[str(name)] = CountBound(low, high)
    return bounds


def _answer(value: object, key: str) -> AnswerCheck | None:
    if value is None:
        return None
    data = mapping(value, key)
    known_keys(data, _ANSWER_KEYS, key)
    text = TextCheck.from_spec({str(k): v for k, v in data.items() if k in _TEXT_KEYS}, key)
    model: type[BaseModel] | None = None
    if "model" in data:
        found = import_object(data["model"], f"{key}.model")
        if not (isinstance(found, type) and issubclass(found, BaseModel)):
            raise FrontmatterError(f"{key}.model", f"{data['model']!r} is not a pydantic model")
        model = found
    predicate: Predicate | None = None
    name = ""
    if "predicate" in data:
        found = import_object(data["predicate"], f"{key}.predicate")
        if not callable(found):
            raise FrontmatterError(f"{key}.predicate", f"{data['predicate']!r} is not callable")
        predicate, name = cast(Predicate, found), str(data["predicate"])
    return AnswerCheck(text, model, predicate, name)


# -- files -----------------------------------------------------------------------------


def load_case(path: Path | str) -> PromptCase:
    """The case in the file at ``path``; `CaseFileError` when it cannot be used."""
    file = Path(path)
    try:
        status = file.stat()
        if not stat.S_ISREG(status.st_mode):  # a FIFO blocks, /dev/zero never ends
            raise CaseFileError(str(file), "", "not a regular file")
        if status.st_size > MAX_FILE_BYTES:
            raise CaseFileError(str(file), "", f"the file is larger than {MAX_FILE_BYTES} bytes")
        with file.open("rb") as stream:
            data = stream.read(MAX_FILE_BYTES + 1)  # bounded even if the file grows meanwhile
        if len(data) > MAX_FILE_BYTES:
            raise CaseFileError(str(file), "", f"the file is larger than {MAX_FILE_BYTES} bytes")
        text = data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")  # as read_text
    except OSError as error:
        raise CaseFileError(str(file), "", f"cannot be read: {error.strerror or error}") from None
    except UnicodeDecodeError as error:
        raise CaseFileError(str(file), "", f"is not UTF-8 text: {error.reason}") from None
    return parse_case(text, path=file)


def expand_case_paths(files: Iterable[str] = (), globs: Iterable[str] = ()) -> list[Path]:
    """``files`` as given, then each glob's matches in sorted order; duplicates once.

    A glob that matches nothing raises `CaseFileError` (a typo should not pass quietly).
    """
    found: list[Path] = [Path(f) for f in files]
    for pattern in globs:
        matches = sorted(glob.glob(pattern, recursive=True))
        if not matches:
            raise CaseFileError(pattern, "", "the pattern matches no file")
        found += [Path(m) for m in matches if Path(m).is_file()]
    unique: dict[Path, None] = {}
    for file in found:
        unique.setdefault(file, None)
    return list(unique)


def load_cases(files: Iterable[str] = (), globs: Iterable[str] = ()) -> list[PromptCase]:
    """Every case of ``files`` and ``globs`` (see `expand_case_paths`), in that order."""
    return [load_case(path) for path in expand_case_paths(files, globs)]
