"""``ToolVariables``: every tool output saved as ``$name``, usable in later calls and answers.

The model passes outputs between tools by name instead of copying them: a string
argument that is exactly ``$weather_nyc`` becomes that output (a dict stays a dict),
``$weather_nyc.temperature`` or ``$search_1.results[0].url`` a part of it, and a
reference inside longer text is filled in. ``$$`` is a literal ``$``; ``$5`` and prose
are left alone. Tools only ever see real values. Each result is shown as
``$name = <output>``, and a compact list of the variables comes with every step.

>>> from formats import XMLFormat
>>> from toolchain import ExecutionContext, JSONToolChain, tool
>>> @tool
... def weather(city: str) -> dict[str, object]:
...     '''Today's weather in a city.'''
...     return {"city": city, "temp_c": 21}
>>> @tool
... def report(temp_c: int, city: str) -> str:
...     '''Write a one-line report.'''
...     return f"{city}: {temp_c} C"
>>> chain = JSONToolChain(extensions=[ToolVariables()]).register_tool(weather)
>>> chain = chain.register_tool(report)
>>> ctx = ExecutionContext()
>>> first = chain.execute_sync(ctx, '{"tool": "weather", "args": {"city": "Oslo"}}', XMLFormat())
>>> first.observations[0].text
'$weather_1 = {"city":"Oslo","temp_c":21}'
>>> call = '{"tool": "report", "args": {"temp_c": "$weather_1.temp_c", "city": "$weather_1.city"}}'
>>> chain.execute_sync(ctx, call, XMLFormat()).raw.output(0, str)
'Oslo: 21 C'
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Literal, cast

import msgspec

from toolchain._context import ExecutionContext
from toolchain._extension import Extension, TextFilter
from toolchain._hooks import ToolCallRefused, ToolHook
from toolchain._oneline import one_line
from toolchain._output import to_builtins
from toolchain._result import ToolCall, ToolResult
from toolchain._results import Variable, any_string, results_of
from toolchain._var_refs import ReferenceProblem, StreamResolver, resolve_arguments

__all__ = ["Naming", "ToolVariables"]

_log = logging.getLogger("toolchain")

Naming = Callable[[str, Mapping[str, object], object], "str | None"]
"""``(tool name, arguments, output) -> name``; None (or an empty name) keeps the default
``<tool>_<n>``. A name is cleaned into an identifier (``weather NYC`` → ``weather_nyc``)."""

FULL_GUIDE = """\
Tool outputs are saved as variables ($name = ... beside each result). Pass one to a
tool as a whole argument value instead of copying it: {"data": "$weather_1"} (the
tool gets the real value); a part: "$weather_1.temp", "$search_1.items[0].url".
Inside text a reference is filled in ("$weather_1.temp degrees"); never follow one
directly with ".word". $$ is a literal $. Your answer may use references too."""

MINIMAL_GUIDE = (
    'Tool outputs are saved as $name variables; pass them as argument values ("$name", '
    '"$name.field", "$name.items[0]") instead of copying them.'
)

_PREVIEW = 80
_NOT_NAME = re.compile(r"[^0-9a-zA-Z_]+")


class ToolVariables(Extension):
    """The variables extension (see the module text).

    ``naming`` names each output (default ``<tool>_<n>``: ``weather_1``, ``weather_2``);
    a name used again is overwritten by the newer output. ``instruction_style`` picks
    the ``full`` guide (default) or a ``minimal`` one for the prompt section.
    """

    name = "tool_variables"

    def __init__(
        self,
        naming: Naming | None = None,
        *,
        instruction_style: Literal["full", "minimal"] = "full",
    ) -> None:
        self.naming = naming
        self.instruction_style = instruction_style

    def install(self, ctx: ExecutionContext) -> None:
        results_of(ctx).enlist()
        ctx.hooks.add(_VariablesHook(self))

    def instructions(self) -> str:
        return FULL_GUIDE if self.instruction_style == "full" else MINIMAL_GUIDE

    def prompt_section(self, ctx: ExecutionContext) -> str:
        """The variables saved so far, one line each (nothing before the first)."""
        results = results_of(ctx)
        if not results.variables:
            return ""
        lines: list[str] = []
        for v in results.variables.values():
            line = f"- ${v.name} ({v.tool}, {_type_of(v.value)})"
            if v.call_id in results.boxed:  # its value is not in the conversation: a glimpse
                line += f": {_preview(v.value)}"
            lines.append(line)
        return "Variables:\n" + "\n".join(lines)

    def text_filter(self, ctx: ExecutionContext) -> TextFilter:
        return StreamResolver(_LiveValues(ctx))

    def name_for(self, tool: str, args: Mapping[str, object], output: object, n: int) -> str:
        """The variable name of a tool's ``n``-th output."""
        chosen = None
        if self.naming is not None:
            try:
                chosen = self.naming(tool, args, output)
            except Exception:  # a naming bug must not lose the output
                _log.warning("the variable naming function raised on %s", tool, exc_info=True)
        if not chosen:
            return f"{_base_name(tool)}_{n}"
        cleaned = _clean(chosen)
        return cleaned if cleaned else f"{_base_name(tool)}_{n}"


def _clean(name: str) -> str:
    """``name`` as an identifier: ``weather NYC`` → ``weather_nyc``; ``""`` if nothing is left."""
    cleaned = _NOT_NAME.sub("_", name).strip("_").lower()
    return f"v_{cleaned}" if cleaned[:1].isdigit() else cleaned


@functools.lru_cache(maxsize=1024)
def _base_name(tool: str) -> str:
    return _clean(tool) or "result"


class _LiveValues(Mapping[str, object]):
    """The run's variables as they are when read (the answer may follow new results)."""

    def __init__(self, ctx: ExecutionContext) -> None:
        self._results = results_of(ctx)

    def __getitem__(self, name: str) -> object:
        return self._results.variables[name].value

    def __contains__(self, name: object) -> bool:  # Mapping's goes through __getitem__
        return name in self._results.variables

    def __iter__(self) -> Iterator[str]:
        return iter(self._results.variables)

    def __len__(self) -> int:
        return len(self._results.variables)


class _VariablesHook(ToolHook):
    def __init__(self, extension: ToolVariables) -> None:
        self.extension = extension

    def before_tool_call(self, ctx: ExecutionContext, call: ToolCall) -> ToolCall | None:
        if not any_string(call.args, _mentions_dollar):
            return None
        try:
            resolved = resolve_arguments(call.args, _LiveValues(ctx))
        except ReferenceProblem as problem:
            raise ToolCallRefused(str(problem), kind="invalid_arguments") from problem
        return ToolCall(call.name, resolved, call.id)

    def after_tool_call(
        self, ctx: ExecutionContext, call: ToolCall, result: ToolResult[Any]
    ) -> None:
        results = results_of(ctx)
        n = results.counts.get(call.name, 0) + 1
        results.counts[call.name] = n
        value = to_builtins(result.text)
        name = self.extension.name_for(call.name, call.args, value, n)
        results.save(Variable(name, call.name, value, call.id))

    def rewrite_observation(
        self, ctx: ExecutionContext, call: ToolCall, result: ToolResult[Any], text: str
    ) -> str:
        results = results_of(ctx)
        return results.observation(call.id, results.original(call.id, text))


def _mentions_dollar(text: str) -> bool:
    return "$" in text


def _type_of(value: object) -> str:
    if isinstance(value, dict):
        keys = [str(key) for key in cast("dict[object, object]", value)]
        more = ", …" if len(keys) > 6 else ""
        return f"object: {', '.join(keys[:6])}{more}"
    if isinstance(value, list):
        return f"list of {len(cast('list[object]', value))}"
    return type(value).__name__


def _preview(value: object) -> str:
    text = value if isinstance(value, str) else msgspec.json.encode(value).decode()
    return one_line(text, _PREVIEW)
