"""Arguments checked against a JSON Schema as an MCP server gave it, with ``jsonschema``.

The schema is shown to the model unchanged (prompt listing and native spec), and
arguments are validated against it before the call leaves this process, so a model's
mistake is answered at once with field-by-field messages it can act on, in the same
shape as the library's own (``city: required field is missing``).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from toolchain._input import ArgumentsError, InputCodec

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError
    from jsonschema.protocols import Validator

__all__ = ["SchemaCodec"]

_log = logging.getLogger("toolchain.mcp")
_MAX_PROBLEMS = 8
_MAX_MESSAGE = 200


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
            from jsonschema import exceptions, validators

            cls = validators.validator_for(self._raw, default=validators.Draft202012Validator)
            try:
                cls.check_schema(self._raw)
            except exceptions.SchemaError as error:
                _log.warning(
                    "the input schema of %s is not valid JSON Schema (%s); arguments go "
                    "to the server unchecked",
                    self._owner,
                    error.message,
                )
                self._usable = False
                return None
            self._validator = cls(self._raw)
        return self._validator


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
