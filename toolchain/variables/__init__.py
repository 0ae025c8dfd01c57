# toolchain.variables: the ToolVariables extension and its reference resolver (the syntax
# of `$name.field[0]`, the scanner, resolving arguments and text under the expansion
# cap), with what it keeps (values in a store, the per-step list, the conversation's
# state) and the event it tells observers (VariablesResolved). It imports the toolchain
# core (`toolchain`'s public names, a few private core helpers) and `toolchain.stores`,
# whose private record of results it shares with the relay; never another extension,
# never agents.
"""``ToolVariables``: every tool output saved as ``$name``, usable in later calls and answers.

The model passes outputs between tools by name instead of copying them: a string
argument that is exactly ``$weather_nyc`` becomes that output (a dict stays a dict),
``$weather_nyc.temperature`` or ``$search_1.results[0].url`` a part of it, and a
reference inside longer text is filled in (at most ``max_expansion`` characters per
call or answer). ``$$`` is a literal ``$``; ``$5`` and prose are left alone. Tools only
ever see real values. Each result is shown as ``$name = <output>``. A one-sentence guide
and a short list of the most recent variables (name, tool, type; a preview of those the
model has not read under their name) come with each step once they pay for themselves:
from the step after an output of ``guide_at`` bytes, or when variables come from an
earlier run (``instruction_style="full"`` or ``"minimal"``: a guide in the system
prompt and the list on every step).

Variables last for the conversation: their values live in a store (the context
relay's when one is installed, so a boxed output is one entry for both; else the
extension's own ``MemoryStore``, or the ``store`` given), and ``save_state`` carries
their names on to the next run (``AgentResult.extension_state``). A conversation keeps
at most ``max_variables`` variables and ``max_bytes`` bytes of them: the oldest go
first, and a call naming one is told why it is gone.

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
>>> variables = ToolVariables()
>>> chain = JSONToolChain(extensions=[variables]).register_tool(weather)
>>> chain = chain.register_tool(report)
>>> ctx = ExecutionContext()
>>> first = chain.execute_sync(ctx, '{"tool": "weather", "args": {"city": "Oslo"}}', XMLFormat())
>>> first.observations[0].text
'$weather_1 = {"city":"Oslo","temp_c":21}'
>>> call = '{"tool": "report", "args": {"temp_c": "$weather_1.temp_c", "city": "$weather_1.city"}}'
>>> chain.execute_sync(ctx, call, XMLFormat()).raw.output(0, str)
'Oslo: 21 C'

Programs read and write the same variables (``list_variables``, ``get_variable``,
``set_variable``, ``resolve``, ``resolve_text``):

>>> import asyncio
>>> [(v.name, v.tool, v.kind) for v in variables.list_variables(ctx)]
[('weather_1', 'weather', 'object: city, temp_c'), ('report_1', 'report', 'str')]
>>> asyncio.run(variables.get_variable(ctx, "weather_1"))
{'city': 'Oslo', 'temp_c': 21}
>>> asyncio.run(variables.resolve_text(ctx, "$weather_1.city: $weather_1.temp_c C"))
'Oslo: 21 C'
"""

from toolchain.variables._events import VariablesResolved
from toolchain.variables._expansion import MAX_EXPANSION
from toolchain.variables._listing import VariableInfo
from toolchain.variables._naming import Naming
from toolchain.variables._problems import ReferenceProblem, UnknownVariable
from toolchain.variables._text import has_references
from toolchain.variables._tool_variables import ToolVariables

__all__ = [
    "MAX_EXPANSION",
    "Naming",
    "ReferenceProblem",
    "ToolVariables",
    "UnknownVariable",
    "VariableInfo",
    "VariablesResolved",
    "has_references",
]
