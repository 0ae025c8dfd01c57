"""A Griffe extension: the doctests in our docstrings shown as Python sessions on the site.

Our docstrings hold bare ``>>>`` examples (CI runs them with ``--doctest-modules``), which
Markdown would read as nested quotes and mkdocstrings' Google parser fences only under an
``Examples:`` heading. Each run of doctest lines (up to a blank line) becomes a ``pycon``
fence, indented as it was; the docstrings themselves stay as they are.

>>> fence_doctests("Greets.\\n\\n>>> greet('Ada')\\n'Hello, Ada!'\\n\\nMore.").splitlines()
['Greets.', '', '```pycon', ">>> greet('Ada')", "'Hello, Ada!'", '```', '', 'More.']
"""

from __future__ import annotations

import re
from typing import Any

import griffe

__all__ = ["DoctestFences", "fence_doctests"]

# doctest's own directives are for the test runner, not the reader.
_DIRECTIVE = re.compile(r"\s*#\s*doctest:.*$")


def fence_doctests(text: str) -> str:
    """``text`` with each run of doctest lines wrapped in a ``pycon`` fence."""
    if ">>>" not in text:  # most docstrings: nothing to do
        return text
    out: list[str] = []
    indent: str | None = None  # the open fence's indentation, None when none is open
    in_fence = False  # inside a fence the docstring wrote itself: left alone
    for line in text.split("\n"):
        stripped = line.lstrip()
        if indent is not None:
            if stripped:
                out.append(_DIRECTIVE.sub("", line))
                continue
            out.append(f"{indent}```")
            indent = None
        elif stripped.startswith("```"):
            in_fence = not in_fence
        elif not in_fence and stripped.startswith(">>>"):
            indent = line[: len(line) - len(stripped)]
            out.append(f"{indent}```pycon")
            out.append(_DIRECTIVE.sub("", line))
            continue
        out.append(line)
    if indent is not None:
        out.append(f"{indent}```")
    return "\n".join(out)


class DoctestFences(griffe.Extension):
    """Fences the doctests of every object's docstring as Griffe makes the object.

    ``on_instance``, not ``on_object``: a package's own docstring never reaches the latter.
    """

    def on_instance(
        self,
        *,
        node: object,
        obj: griffe.Object,
        agent: griffe.Visitor | griffe.Inspector,
        **kwargs: Any,
    ) -> None:
        if obj.docstring is not None:
            obj.docstring.value = fence_doctests(obj.docstring.value)
