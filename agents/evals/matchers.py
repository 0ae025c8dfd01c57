"""Matchers a prompt case checks tool arguments, tool results and answers with.

Each check returns ``None`` (or an empty list) when it holds, else the reason it does
not, worded for a report: ``'expected "123", got "999"'``.

Values (tool arguments), written in a case file as a plain value or a one-key mapping:

- a plain value, or ``{equals: value}``: deep equality;
- ``{subset: {...}}``: a mapping holding at least these keys, each matching as a subset
  in turn (lists: every expected item matches some actual item);
- ``{regex: pattern}``: ``re.search`` on the value (a non-string is matched as JSON);
- ``{schema: {...}}``: valid against a JSON Schema (``jsonschema``, the schema's own
  draft or 2020-12; the schema itself is checked when the case is loaded).

Texts (a tool's result as the model saw it, the final answer): `TextCheck` with
``contains``, ``not_contains`` and ``regex``. Answers also take ``model`` (a pydantic
model the answer must parse into, as JSON) and ``predicate`` (a function named by its
import path); see `AnswerCheck`.

>>> value_matcher({"regex": "^[0-9]+$"}, "args.video_id").check("123") is None
True
>>> value_matcher("123", "args.video_id").check("999")
"expected '123', got '999'"
>>> value_matcher({"subset": {"a": 1}}, "args").check({"a": 1, "b": 2}) is None
True
>>> TextCheck(contains=("4242",)).check("The last number is 4242.")
[]
"""

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

import jsonschema
import jsonschema.exceptions
import jsonschema.protocols
import jsonschema.validators
from pydantic import BaseModel, ValidationError

from agents._errors import AgentError

__all__ = [
    "AnswerCheck",
    "Equals",
    "MatcherSpecError",
    "Regex",
    "SchemaValid",
    "Subset",
    "TextCheck",
    "ValueMatcher",
    "import_object",
    "value_matcher",
]

_MATCHER_KEYS = ("equals", "subset", "regex", "schema")
_SHOWN = 120  # characters of a value shown in a failure


class MatcherSpecError(AgentError, ValueError):
    """A matcher written wrongly in a case file; ``where`` names the key (``args.url``)."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where}: {message}")
        self.where = where
        self.message = message


class ValueMatcher(Protocol):
    """Checks one value: ``None`` when it matches, else why not."""

    def check(self, value: object) -> str | None: ...

    def describe(self) -> str:
        """What it expects, for reports (``equals '123'``)."""
        ...


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


def _as_text(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


@dataclass(frozen=True, slots=True)
class Equals:
    """Deep equality (``1 == 1.0``, as in Python; ``True`` is not ``1`` here).

    >>> Equals({"a": [1, 2]}).check({"a": [1, 2]}) is None
    True
    >>> Equals(1).check(True)
    'expected 1, got True'
    """

    expected: object

    def check(self, value: object) -> str | None:
        if _equal(self.expected, value):
            return None
        return f"expected {_show(self.expected)}, got {_show(value)}"

    def describe(self) -> str:
        return f"equals {_show(self.expected)}"


def _equal(expected: object, actual: object) -> bool:
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(expected) is type(actual) and expected == actual
    if isinstance(expected, Mapping) and isinstance(actual, Mapping):
        want = cast("Mapping[object, object]", expected)
        got = cast("Mapping[object, object]", actual)
        return want.keys() == got.keys() and all(_equal(want[k], got[k]) for k in want)
    if isinstance(expected, list | tuple) and isinstance(actual, list | tuple):
        want_items = cast("Sequence[object]", expected)
        got_items = cast("Sequence[object]", actual)
        return len(want_items) == len(got_items) and all(
            _equal(w, g) for w, g in zip(want_items, got_items, strict=True)
        )
    return expected == actual


@dataclass(frozen=True, slots=True)
class Subset:
    """The value holds at least what ``expected`` holds (recursively).

    >>> Subset({"file_name": "transcript.txt"}).check({"file_name": "a.txt", "x": 1})
    "at file_name: expected 'transcript.txt', got 'a.txt'"
    >>> Subset([2]).check([1, 2, 3]) is None
    True
    """

    expected: object

    def check(self, value: object) -> str | None:
        return _subset(self.expected, value, "")

    def describe(self) -> str:
        return f"holds {_show(self.expected)}"


def _subset(expected: object, actual: object, path: str) -> str | None:
    where = f"at {path}: " if path else ""
    if isinstance(expected, Mapping):
        if not isinstance(actual, Mapping):
            return f"{where}expected a mapping, got {_show(actual)}"
        want = cast("Mapping[object, object]", expected)
        got = cast("Mapping[object, object]", actual)
        for key, item in want.items():
            inner = f"{path}.{key}" if path else str(key)
            if key not in got:
                return f"at {inner}: missing"
            problem = _subset(item, got[key], inner)
            if problem is not None:
                return problem
        return None
    if isinstance(expected, list | tuple):
        if not isinstance(actual, list | tuple):
            return f"{where}expected a list, got {_show(actual)}"
        got_items = cast("Sequence[object]", actual)
        for item in cast("Sequence[object]", expected):
            if all(_subset(item, candidate, "") is not None for candidate in got_items):
                return f"{where}no item matches {_show(item)}"
        return None
    return (
        None
        if _equal(expected, actual)
        else f"{where}expected {_show(expected)}, got {_show(actual)}"
    )


@dataclass(frozen=True, slots=True)
class Regex:
    """``re.search`` on the value; a non-string value is searched as its JSON text.

    >>> Regex(re.compile("internal://")).check(42)
    '42 does not match /internal:///'
    """

    pattern: re.Pattern[str]

    def check(self, value: object) -> str | None:
        if self.pattern.search(_as_text(value)):
            return None
        return f"{_show(value)} does not match /{self.pattern.pattern}/"

    def describe(self) -> str:
        return f"matches /{self.pattern.pattern}/"


@dataclass(frozen=True, slots=True)
class SchemaValid:
    """Valid against a JSON Schema; build it with `SchemaValid.of` (checks the schema).

    >>> SchemaValid.of({"type": "integer", "minimum": 0}).check(-1)
    'not valid against the schema: -1 is less than the minimum of 0'
    """

    schema: Mapping[str, object]
    validator: Any = field(repr=False, compare=False)  # jsonschema's Validator instance

    @classmethod
    def of(cls, schema: Mapping[str, object]) -> SchemaValid:
        """A matcher for ``schema``; ``jsonschema.SchemaError`` when it is no schema."""
        validator_class = jsonschema.validators.validator_for(
            schema, default=jsonschema.Draft202012Validator
        )
        validator_class.check_schema(dict(schema))
        return cls(schema, validator_class(dict(schema)))

    def check(self, value: object) -> str | None:
        validator: jsonschema.protocols.Validator = self.validator
        error = next(iter(validator.iter_errors(cast(Any, value))), None)
        if error is None:
            return None
        where = "/".join(str(part) for part in error.absolute_path)
        at = f" at /{where}" if where else ""
        return f"not valid against the schema{at}: {error.message}"

    def describe(self) -> str:
        return f"valid against {_show(dict(self.schema))}"


def value_matcher(spec: object, where: str) -> ValueMatcher:
    """The matcher a case file's ``spec`` describes (see the module text).

    ``MatcherSpecError`` naming ``where`` when the spec is malformed.

    >>> value_matcher({"schema": {"type": "nope"}}, "args.x")
    Traceback (most recent call last):
    ...
    agents.evals.matchers.MatcherSpecError: args.x: schema: not a valid JSON Schema: ...
    """
    expected: object = spec
    if not (isinstance(spec, Mapping) and len(cast("Mapping[object, object]", spec)) == 1):
        return Equals(expected)
    [(key, value)] = cast("Mapping[object, object]", spec).items()
    if key not in _MATCHER_KEYS:
        return Equals(expected)  # a one-key mapping that is the expected value itself
    if key == "equals":
        return Equals(value)
    if key == "subset":
        return Subset(value)
    if key == "regex":
        return Regex(compile_regex(value, f"{where}.regex"))
    if not isinstance(value, Mapping):
        raise MatcherSpecError(where, f"schema: expected a mapping, got {type(value).__name__}")
    try:
        return SchemaValid.of(cast("Mapping[str, object]", value))
    except jsonschema.exceptions.SchemaError as error:
        raise MatcherSpecError(where, f"schema: not a valid JSON Schema: {error.message}") from None


def compile_regex(pattern: object, where: str) -> re.Pattern[str]:
    """``pattern`` compiled; `MatcherSpecError` naming ``where`` when it is not one.

    Patterns come from case files, which their authors trust like code (Python's
    ``re`` backtracks: keep patterns simple).
    """
    if not isinstance(pattern, str):
        raise MatcherSpecError(where, f"expected a string, got {type(pattern).__name__}")
    try:
        return re.compile(pattern)
    except re.error as error:
        raise MatcherSpecError(where, f"not a valid regular expression: {error}") from None


def _strings(value: object, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(
        isinstance(item, str) for item in cast("list[object]", value)
    ):
        return tuple(cast("list[str]", value))
    raise MatcherSpecError(where, "expected a string or a list of strings")


@dataclass(frozen=True, slots=True)
class TextCheck:
    """Checks on a text: substrings it must and must not hold, patterns it must match.

    >>> check = TextCheck(contains=("AA102",), not_contains=("internal://",))
    >>> check.check("moved to AA102")
    []
    >>> check.check("see internal://abc")
    ["does not contain 'AA102'", "contains 'internal://'"]
    """

    contains: tuple[str, ...] = ()
    not_contains: tuple[str, ...] = ()
    regex: tuple[re.Pattern[str], ...] = ()

    @classmethod
    def from_spec(cls, spec: Mapping[str, object], where: str) -> TextCheck:
        """From a case file mapping with the keys ``contains``, ``not_contains``, ``regex``."""
        return cls(
            _strings(spec["contains"], f"{where}.contains") if "contains" in spec else (),
            _strings(spec["not_contains"], f"{where}.not_contains")
            if "not_contains" in spec
            else (),
            tuple(
                compile_regex(p, f"{where}.regex")
                for p in _strings(spec["regex"], f"{where}.regex")
            )
            if "regex" in spec
            else (),
        )

    def check(self, text: str) -> list[str]:
        problems = [f"does not contain {_show(s)}" for s in self.contains if s not in text]
        problems += [f"contains {_show(s)}" for s in self.not_contains if s in text]
        problems += [f"does not match /{p.pattern}/" for p in self.regex if not p.search(text)]
        return problems


Predicate = Callable[[str], object]
"""Takes the answer; ``True`` or ``None`` passes, ``False`` fails, a string fails and
says why."""


@dataclass(frozen=True, slots=True)
class AnswerCheck:
    """Checks on the final answer: text checks, a typed model and a predicate.

    ``model`` is a pydantic model the answer must parse into as JSON (the whole answer,
    else its first fenced or ``{…}`` block); ``predicate`` a function (`Predicate`).

    >>> from pydantic import BaseModel
    >>> class Price(BaseModel):
    ...     amount: int
    >>> AnswerCheck(model=Price).check('The price: {"amount": 12}')
    []
    >>> AnswerCheck(model=Price).check('{"amount": "twelve"}')[0][:45]
    'the answer is no valid Price: amount: Input s'
    """

    text: TextCheck = TextCheck()
    model: type[BaseModel] | None = None
    predicate: Predicate | None = None
    predicate_name: str = ""

    def check(self, answer: str) -> list[str]:
        problems = [f"the answer {problem}" for problem in self.text.check(answer)]
        if self.model is not None:
            problem = _typed(self.model, answer)
            if problem is not None:
                problems.append(problem)
        if self.predicate is not None:
            problem = _predicate(self.predicate, self.predicate_name, answer)
            if problem is not None:
                problems.append(problem)
        return problems


_FENCED = re.compile(r"```(?:json)?\s*\n(.*?)\n\s*```", re.DOTALL)


def _typed(model: type[BaseModel], answer: str) -> str | None:
    candidates = [answer.strip()]
    candidates += [found.group(1) for found in _FENCED.finditer(answer)]
    start, end = answer.find("{"), answer.rfind("}")
    if 0 <= start < end:
        candidates.append(answer[start : end + 1])
    first: ValidationError | None = None
    for candidate in candidates:
        try:
            model.model_validate_json(candidate)
            return None
        except ValidationError as error:
            first = first or error
    assert first is not None
    details = "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or '(root)'}: {e['msg']}" for e in first.errors()[:3]
    )
    return f"the answer is no valid {model.__name__}: {details}"


def _predicate(predicate: Predicate, name: str, answer: str) -> str | None:
    label = name or getattr(predicate, "__name__", "predicate")
    try:
        verdict = predicate(answer)
    except Exception as error:
        return f"predicate {label} raised {type(error).__name__}: {error}"
    if verdict is True or verdict is None:
        return None
    if isinstance(verdict, str):
        return f"predicate {label}: {verdict}"
    return f"predicate {label} rejected the answer"


def import_object(path: object, where: str) -> object:
    """The object an import path names: ``package.module:name`` or ``package.module.name``.

    Case files name their own models and predicates this way; importing runs that
    module's code, so load case files you trust, as you would run their code.

    >>> import_object("json:dumps", "answer.predicate").__name__
    'dumps'
    >>> import_object("json.nothing_here", "answer.predicate")
    Traceback (most recent call last):
    ...
    agents.evals.matchers.MatcherSpecError: answer.predicate: json has no attribute 'nothing_here'
    """
    if not isinstance(path, str) or not path.strip():
        raise MatcherSpecError(where, "expected an import path such as package.module:name")
    text = path.strip()
    module_name, _, attribute = text.partition(":") if ":" in text else text.rpartition(".")
    if not module_name or not attribute:
        raise MatcherSpecError(where, f"{text!r} is not of the form package.module:name")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise MatcherSpecError(where, f"cannot import {module_name}: {error}") from None
    found: object = module
    for part in attribute.split("."):
        if not hasattr(found, part):
            raise MatcherSpecError(where, f"{module_name} has no attribute {attribute!r}")
        found = getattr(found, part)
    return found
