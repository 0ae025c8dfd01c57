"""A case file's frontmatter: split from the prompt, read as YAML safely and
boundedly, and its values checked by kind.

The loader is PyYAML's safe one without aliases (no billion laughs), duplicate keys or
numbers longer than a sane one; a value of the wrong kind raises `FrontmatterError`
naming its key, which `agents.evals.cases` reports as a `CaseFileError` with the file.
"""

from __future__ import annotations

import datetime as dt
import difflib
from collections.abc import Mapping, Sequence
from typing import Any, Final, cast

import yaml

from agents._errors import AgentError

__all__ = [
    "MAX_FILE_BYTES",
    "MAX_FRONTMATTER_CHARS",
    "FrontmatterError",
    "boolean",
    "choice",
    "count",
    "date",
    "kind_of",
    "known_keys",
    "listed",
    "load_yaml",
    "mapping",
    "names",
    "optional_boolean",
    "split",
    "string",
]

MAX_FILE_BYTES: Final = 1 << 20
MAX_FRONTMATTER_CHARS: Final = 64 << 10
_MAX_NUMBER_CHARS: Final = 100


class FrontmatterError(AgentError):
    """A frontmatter that cannot be used: the ``key`` at fault (``""``: the whole) and why."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key
        self.message = message


class _Loader(yaml.SafeLoader):
    """The safe loader without aliases (no billion laughs) or duplicate keys."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            # check_event leaves the event it looked at in current_event, an attribute
            # the stubs declare; peek_event would be an untyped call (unannotated there).
            event: yaml.Event = self.current_event
            where: object = event.start_mark
            raise FrontmatterError("", f"YAML aliases are not allowed ({where})")
        return super().compose_node(parent, index)

    def construct_yaml_timestamp(self, node: Any) -> Any:
        """A date YAML cannot build (``2026-13-45``) stays text: its key's check names it."""
        try:
            return super().construct_yaml_timestamp(node)
        except (ValueError, OverflowError):
            return str(node.value)

    def construct_yaml_int(self, node: Any) -> Any:
        """No whole number longer than a sane one: Python refuses to read 4,301 digits."""
        digits = len(str(node.value))
        if digits > _MAX_NUMBER_CHARS:
            mark = node.start_mark  # lines counted in the frontmatter, which starts on line 2
            raise FrontmatterError(
                "",
                f"line {mark.line + 2}, column {mark.column + 1}: a number {digits:,} "
                f"characters long (at most {_MAX_NUMBER_CHARS})",
            )
        return super().construct_yaml_int(node)

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        if isinstance(node, yaml.MappingNode):
            seen: set[str] = set()
            pairs: list[tuple[Any, Any]] = node.value
            for key_node, _ in pairs:
                if not isinstance(key_node, yaml.ScalarNode):
                    continue
                key = str(key_node.value)
                if key in seen:
                    where: object = key_node.start_mark
                    raise FrontmatterError(key, f"duplicate key ({where})")
                seen.add(key)
        return super().construct_mapping(node, deep)


_Loader.add_constructor("tag:yaml.org,2002:timestamp", _Loader.construct_yaml_timestamp)
_Loader.add_constructor("tag:yaml.org,2002:int", _Loader.construct_yaml_int)


def load_yaml(text: str) -> object:
    try:
        return yaml.load(text, Loader=_Loader)  # a SafeLoader subclass
    except yaml.YAMLError as error:
        raise FrontmatterError("", f"invalid YAML: {error}") from None
    except RecursionError:
        raise FrontmatterError("", "invalid YAML: nested too deeply") from None
    except (ValueError, OverflowError) as error:  # a value PyYAML's constructors cannot build
        raise FrontmatterError("", f"invalid YAML value: {error}") from None


def split(text: str) -> tuple[str | None, str]:
    """(frontmatter or None, body)."""
    text = text.removeprefix("\ufeff")
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return None, text.strip()
    for index in range(1, len(lines)):
        if lines[index].strip() in ("---", "..."):
            return "".join(lines[1:index]), "".join(lines[index + 1 :]).strip()
    raise FrontmatterError("", "the frontmatter opened with '---' is never closed by '---'")


def kind_of(value: object) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    return "a boolean" if isinstance(value, bool) else type(value).__name__


def known_keys(data: Mapping[object, object], known: Sequence[str], where: str) -> None:
    for key in data:
        if key not in known:
            close = difflib.get_close_matches(str(key), known, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            name = f"{where}.{key}" if where else str(key)
            raise FrontmatterError(name, f"unknown key{hint}; known keys: {', '.join(known)}")


def string(value: object, key: str, *, required: bool = False) -> str:
    if not isinstance(value, str) or (required and not value.strip()):
        raise FrontmatterError(key, f"expected a non-empty string, got {kind_of(value)}")
    return value.strip()


def boolean(value: object, key: str) -> bool:
    if not isinstance(value, bool):
        raise FrontmatterError(key, f"expected true or false, got {value!r}")
    return value


def optional_boolean(value: object, key: str) -> bool | None:
    return None if value is None else boolean(value, key)


def count(value: object, key: str, *, least: int = 0) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise FrontmatterError(key, f"expected a whole number of at least {least}, got {value!r}")
    return value


def choice(value: object, key: str, choices: Sequence[str]) -> str | None:
    if value is None:
        return None
    if value not in choices:
        raise FrontmatterError(key, f"expected one of {', '.join(choices)}, got {value!r}")
    return cast(str, value)


def date(value: object, key: str) -> dt.date | None:
    if value is None or (isinstance(value, dt.date) and not isinstance(value, dt.datetime)):
        return value
    if isinstance(value, str):
        try:
            return dt.date.fromisoformat(value.strip())
        except ValueError:
            pass
    raise FrontmatterError(key, f"expected a date such as 2026-03-05, got {value!r}")


def listed(value: object, key: str) -> list[object]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise FrontmatterError(key, f"expected a list, got {kind_of(value)}")
    return cast("list[object]", value)


def mapping(value: object, key: str) -> dict[object, object]:
    if not isinstance(value, dict):
        raise FrontmatterError(key, f"expected a mapping, got {kind_of(value)}")
    return cast("dict[object, object]", value)


def names(value: object, key: str) -> list[str]:
    items = listed(value, key)
    for index, item in enumerate(items):
        if not isinstance(item, str) or not item.strip():
            raise FrontmatterError(f"{key}[{index}]", f"expected a tool name, got {item!r}")
    return [cast(str, item).strip() for item in items]
