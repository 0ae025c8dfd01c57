"""Arguments checked against a JSON Schema as an MCP server gave it, with ``jsonschema``.

The schema is shown to the model unchanged (prompt listing and native spec), and
arguments are validated against it before the call leaves this process, so a model's
mistake is answered at once with field-by-field messages it can act on, in the same
shape as the library's own (``city: required field is missing``).

Validation runs on the event loop, so it must take time linear in the arguments:
the server's regular expressions (``pattern``, the keys of ``patternProperties``, and
so ``additionalProperties`` beside them) run on RE2, which never backtracks, not on
Python's ``re`` (``^(a+)+$`` against ``"a" * 28 + "!"`` took ``re`` seconds). A pattern
RE2 cannot compile (a lookahead, a backreference) is not checked here: a warning names
the tool and the pattern once, and the server checks it. ``unevaluatedProperties``
is left to the server in a schema that also has ``patternProperties`` (jsonschema
matches those keys with ``re`` for it).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, Protocol, cast

from toolchain._input import ArgumentsError, InputCodec, number_problems
from toolchain._redact import logger

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError
    from jsonschema.protocols import Validator

__all__ = ["SchemaCodec"]

_log = logger("toolchain.mcp")
_MAX_PROBLEMS = 8
_MAX_MESSAGE = 200
# Values of these keywords are data (enums, examples), not schemas: never scanned.
_DATA_KEYWORDS = frozenset({"enum", "const", "default", "examples"})


class SchemaCodec(InputCodec[dict[str, object]]):
    """Validates arguments against ``schema``; its JSON Schema *is* ``schema``.

    The validator is built on first use (the schema's ``$schema`` picks the draft;
    2020-12 when it names none). A schema that is not valid JSON Schema, or whose
    references cannot be resolved here, is logged once and leaves validation to the
    server.

    >>> codec = SchemaCodec({"type": "object", "properties": {"days": {"type": "integer"}},
    ...                      "required": ["city"]}, "weather")
    >>> codec.validate({"city": "Paris", "days": 2})
    {'city': 'Paris', 'days': 2}
    >>> try:
    ...     codec.validate({"days": "two"})
    ... except ArgumentsError as error:
    ...     print(error.problems)
    ['city: required field is missing', "days: 'two' is not of type 'integer'"]
    """

    # No InputCodec.__init__: there is no Python type behind the schema, only the schema.
    def __init__(self, schema: Mapping[str, object], owner: str) -> None:
        self.type = dict
        self._raw = dict(schema)
        self._owner = owner
        self._validator: Validator | None = None
        self._usable = True

    def json_schema(self) -> dict[str, object]:
        return self._raw

    def validate(self, args: Mapping[str, object]) -> dict[str, object]:
        value = dict(args)
        unfit = number_problems(value, self._raw)  # JSON Schema takes NaN for a number
        if unfit:
            raise ArgumentsError(unfit)
        validator = self._checker()
        if validator is None:
            return value
        try:
            errors = list(validator.iter_errors(cast(Any, value)))
        except RecursionError as error:
            raise ArgumentsError(["(arguments): nested too deeply"]) from error
        except Exception:  # an unresolvable $ref, a broken custom keyword …
            _log.warning(
                "cannot validate arguments of %s against its schema; the server will",
                self._owner,
                exc_info=True,
            )
            self._usable = False
            return value
        if errors:
            raise ArgumentsError(_problems(errors))
        return value

    def _checker(self) -> Validator | None:
        if self._validator is None and self._usable:
            from jsonschema import validators

            cls = validators.validator_for(self._raw, default=validators.Draft202012Validator)
            # Checked against the metaschema without formats: "regex" would compile the
            # patterns with `re`; RE2 compiles them below, and skips one it cannot run.
            meta = validators.validator_for(cls.META_SCHEMA, default=cls)(cls.META_SCHEMA)
            try:
                error = next(iter(meta.iter_errors(cast(Any, self._raw))), None)
            except RecursionError:
                error = None
                self._usable = False
            if error is not None:
                _log.warning(
                    "the input schema of %s is not valid JSON Schema (%s); arguments go "
                    "to the server unchecked",
                    self._owner,
                    error.message,
                )
                self._usable = False
                return None
            if not self._usable:
                _log.warning(
                    "the input schema of %s nests too deeply to check; arguments go to the "
                    "server unchecked",
                    self._owner,
                )
                return None
            patterns, pattern_keys, unevaluated = _regex_use(self._raw)
            for pattern in patterns:
                problem = _compiled(pattern)[1]
                if problem:
                    _log.warning(
                        "the input schema of %s has the pattern %r, which RE2 cannot run "
                        "(%s); it is not checked here, the server checks it",
                        self._owner,
                        pattern[:200],
                        problem,
                    )
            skip_unevaluated = pattern_keys and unevaluated
            if skip_unevaluated:
                _log.warning(
                    "the input schema of %s has unevaluatedProperties beside "
                    "patternProperties; unevaluatedProperties is left to the server",
                    self._owner,
                )
            self._validator = _linear(cls, skip_unevaluated)(self._raw)
        return self._validator


class _Regex(Protocol):
    def search(self, text: str) -> object | None: ...


_ECMA_UNICODE_ESCAPE = re.compile(r"(?<!\\)((?:\\\\)*)\\u([0-9A-Fa-f]{4})")


@functools.lru_cache(maxsize=4096)
def _compiled(pattern: str) -> tuple[_Regex | None, str]:
    """RE2's program for a JSON Schema pattern, or None and why RE2 cannot compile it.

    ECMA-262's ``\\uXXXX`` escapes become RE2's ``\\x{XXXX}``; the rest is RE2 syntax.
    """
    import re2  # lazy, as jsonschema is: `import toolchain.mcp` stays light

    options = re2.Options()
    options.log_errors = False  # the reason is logged once, as a warning
    translated = _ECMA_UNICODE_ESCAPE.sub(r"\1\\x{\2}", pattern)
    try:
        return re2.compile(translated, options), ""
    except re2.error as error:
        detail = error.args[0] if error.args else "not valid RE2"
        if isinstance(detail, bytes):
            detail = detail.decode("utf-8", "replace")
        return None, str(detail)


def _search(pattern: str, text: str) -> bool | None:
    """Whether ``pattern`` is found in ``text`` (in linear time); None when RE2 cannot run it."""
    program = _compiled(pattern)[0]
    if program is None:
        return None
    try:
        return program.search(text) is not None
    except UnicodeEncodeError:  # lone surrogates (JSON allows "\ud800"): one '?' each
        return program.search(text.encode("utf-8", "replace").decode("utf-8")) is not None


def _regex_use(schema: object) -> tuple[list[str], bool, bool]:
    """The patterns a schema uses, whether it has ``patternProperties`` and whether it has
    ``unevaluatedProperties``: one walk, without recursion."""
    patterns: dict[str, None] = {}
    pattern_keys = unevaluated = False
    stack: list[object] = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(cast("list[object]", node))
            continue
        if not isinstance(node, dict):
            continue
        for key, value in cast("dict[str, object]", node).items():
            if key in _DATA_KEYWORDS:
                continue
            stack.append(value)
            if key == "pattern" and isinstance(value, str):
                patterns.setdefault(value)
            elif key == "patternProperties" and isinstance(value, dict):
                pattern_keys = True
                keys = cast("dict[object, object]", value)
                patterns.update(dict.fromkeys(map(str, keys)))
            elif key == "unevaluatedProperties":
                unevaluated = True
    return list(patterns), pattern_keys, unevaluated


@functools.cache
def _linear(base: type[Validator], skip_unevaluated: bool) -> type[Validator]:
    """``base`` with every regular expression run by RE2 (see the module text).

    The keyword functions take jsonschema's validator as ``Any``: its protocol has no
    ``descend``, which every validator class has. JSON strings and objects are ``str``
    and ``dict`` (the validators here keep the default type checker).
    """
    from jsonschema import validators
    from jsonschema.exceptions import ValidationError

    def pattern(
        validator: Any, wanted: object, instance: object, schema: object
    ) -> Iterator[ValidationError]:
        if not (isinstance(wanted, str) and isinstance(instance, str)):
            return
        if _search(wanted, instance) is False:
            yield ValidationError(f"{_shown(instance)} does not match the pattern {wanted!r}")

    def pattern_properties(
        validator: Any, wanted: object, instance: object, schema: object
    ) -> Iterator[ValidationError]:
        if not (isinstance(wanted, dict) and isinstance(instance, dict)):
            return
        fields = cast("dict[str, object]", instance)
        for key_pattern, subschema in cast("dict[str, object]", wanted).items():
            for key, value in fields.items():
                if _search(key_pattern, key):
                    yield from validator.descend(
                        value, subschema, path=key, schema_path=key_pattern
                    )

    def additional_properties(
        validator: Any, allowed: object, instance: object, schema: object
    ) -> Iterator[ValidationError]:
        if not (isinstance(instance, dict) and isinstance(schema, dict)):
            return
        fields = cast("dict[str, object]", instance)
        extras = _extras(fields, cast("dict[str, object]", schema))
        if isinstance(allowed, dict):
            for extra in extras:
                yield from validator.descend(fields[extra], allowed, path=extra)
        elif not allowed and extras:
            names = ", ".join(repr(extra) for extra in sorted(extras))
            yield ValidationError(f"unexpected properties: {names}")

    def nothing(
        validator: Any, value: object, instance: object, schema: object
    ) -> Iterator[ValidationError]:
        return iter(())

    keywords: dict[str, object] = {
        "pattern": pattern,
        "patternProperties": pattern_properties,
        "additionalProperties": additional_properties,
    }
    if skip_unevaluated:
        keywords["unevaluatedProperties"] = nothing
    known = cast("Mapping[str, object]", base.VALIDATORS)
    chosen = {name: keyword for name, keyword in keywords.items() if name in known}
    # jsonschema's extend is untyped; it returns a validator class like `base`.
    extended: object = validators.extend(base, chosen)  # type: ignore[no-untyped-call]  # pyright: ignore[reportUnknownMemberType]
    return cast("type[Validator]", extended)


def _extras(instance: dict[str, object], schema: dict[str, object]) -> list[str]:
    """The fields neither ``properties`` nor a ``patternProperties`` pattern covers (a
    pattern RE2 cannot run covers every field: the server decides)."""
    properties = schema.get("properties")
    known = cast("dict[str, object]", properties) if isinstance(properties, dict) else {}
    patterns = schema.get("patternProperties")
    keys = list(cast("dict[str, object]", patterns)) if isinstance(patterns, dict) else []
    return [
        name
        for name in instance
        if name not in known and not any(_search(key, name) is not False for key in keys)
    ]


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _problems(errors: list[ValidationError]) -> list[str]:
    """One line per problem, in field order, at most ``_MAX_PROBLEMS`` (and how many more)."""
    lines: dict[str, None] = {}
    ordered = sorted(errors, key=lambda e: [str(part) for part in e.absolute_path])
    for error in ordered:
        for line in _lines(error):
            lines.setdefault(line)
    found = list(lines)
    if len(found) > _MAX_PROBLEMS:
        more = len(found) - _MAX_PROBLEMS
        found = [*found[:_MAX_PROBLEMS], f"... and {more} more problem{'s' * (more > 1)}"]
    return found


def _lines(error: ValidationError) -> list[str]:
    path = [str(part) for part in error.absolute_path]
    instance = cast(object, error.instance)
    if error.validator == "required" and isinstance(instance, dict):
        present = cast("dict[str, object]", instance)
        wanted = cast("list[object]", error.validator_value)
        return [
            f"{'.'.join([*path, str(name)])}: required field is missing"
            for name in wanted
            if name not in present
        ]
    where = ".".join(path) or "(arguments)"
    if error.validator == "additionalProperties" and isinstance(instance, dict):
        schema = cast("dict[str, Any]", error.schema)
        known = schema.get("properties")
        if isinstance(known, dict) and not schema.get("patternProperties"):
            allowed = ", ".join(map(str, cast("dict[str, object]", known))) or "none"
            return [
                f"{'.'.join([*path, str(name)])}: unexpected field (allowed: {allowed})"
                for name in cast("dict[str, object]", instance)
                if name not in known
            ]
    message = error.message
    if len(message) > _MAX_MESSAGE:
        message = message[: _MAX_MESSAGE - 3] + "..."
    return [f"{where}: {message}"]
