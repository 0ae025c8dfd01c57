"""How tool outputs are named as variables: a ``Naming`` function, or ``<tool>_<n>``.

>>> name_output(None, "weather NYC", {}, {}, 2)
'weather_nyc_2'
>>> def by_city(tool: str, args: Mapping[str, object], output: object) -> str:
...     return f"{tool} {args['city']}"
>>> name_output(by_city, "weather", {"city": "Oslo"}, {}, 1)
'weather_oslo'
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping

from toolchain._redact import logger

__all__ = ["Naming", "base_name", "clean_name", "default_name", "name_output"]

_log = logger("toolchain")

Naming = Callable[[str, Mapping[str, object], object], "str | None"]
"""``(tool name, arguments, output) -> name``; None (or an empty name) keeps the default
``<tool>_<n>``. A name is cleaned into an identifier (``weather NYC`` → ``weather_nyc``)."""

_NOT_NAME = re.compile(r"[^0-9a-zA-Z_]+")


def name_output(
    naming: Naming | None, tool: str, args: Mapping[str, object], output: object, n: int
) -> str:
    """The variable name of a tool's ``n``-th output (``naming``'s, cleaned, or the default)."""
    chosen = None
    if naming is not None:
        try:
            chosen = naming(tool, args, output)
        except Exception:  # a naming bug must not lose the output
            _log.warning("the variable naming function raised on %s", tool, exc_info=True)
    if not chosen:
        return default_name(tool, n)
    cleaned = clean_name(chosen)
    return cleaned if cleaned else default_name(tool, n)


def default_name(tool: str, n: int) -> str:
    """The name of ``tool``'s ``n``-th output when no naming gives one: ``weather_2``."""
    return f"{base_name(tool)}_{n}"


def clean_name(name: str) -> str:
    """``name`` as an identifier: ``weather NYC`` → ``weather_nyc``; ``""`` if nothing is left."""
    cleaned = _NOT_NAME.sub("_", name).strip("_").lower()
    return f"v_{cleaned}" if cleaned[:1].isdigit() else cleaned


@functools.lru_cache(maxsize=1024)
def base_name(tool: str) -> str:
    return clean_name(tool) or "result"
