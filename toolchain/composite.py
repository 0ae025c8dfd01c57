"""``CompositeTool``: several sub-tools behind one tool, called many times in one call.

The model calls the composite with a list of sub-calls, in lmthing's shape::

    {"calls": [{"name": "write", "args": {"path": "a.txt", "content": "Hi"}},
               {"name": "read", "args": {"path": "a.txt"}}]}

and reads one entry per sub-call, in call order::

    {"results": [{"name": "write", "result": {"ok": true}},
                 {"name": "read", "error": "no file 'a.txt'"}]}

An entry holds either ``result`` (the sub-tool's output) or ``error`` (a message the
model can act on), never both. lmthing nests the error inside ``result``
(``{"result": {"error": ...}}``); here it stands beside ``name`` instead, so a failure
can never be mistaken for a sub-tool whose real output has an ``error`` field (an API
client passing on an error body, say), by the model or by a program reading ``raw``.

How sub-calls run:

- one after another, in the order given, each after the previous one ended: a write,
  an append and a read in one call see each other's effects. A failed sub-call
  (unknown sub-tool, invalid arguments, a raise, its own ``timeout`` passed, output
  that cannot be shown) is reported in its place and the later ones still run.
- each sub-call's arguments are validated by its sub-tool's own input type, as the
  chain validates a top-level call's.
- sub-tools get the run's own context, as when the model calls them directly: the
  same state, cancellation, ``pause`` and ``run_id`` (which scopes relay references).
  A child run (``ctx.child``) would hide a sub-tool's ``ctx.pause`` (an approval) or
  ``ctx.cancel`` from the run. Sub-calls count as the run's tool calls, per tool as
  ``<composite>.<sub-tool>``, so the run's ``max_tool_calls`` bounds them too.
- each sub-call emits ``BeforeToolCall`` / ``AfterToolCall`` on ``ctx.events``, named
  ``<composite>.<sub-tool>`` (``file.write``), with ``index`` its position in
  ``calls``. A tool is not told its own call's id, so each composite call takes a
  fresh id from the run (``ctx.new_call_id()``) and its sub-calls are
  ``<that id>/<index>`` (``call_4/0``, ``call_4/1``): unique in the run, grouped by
  composite call.
- the run's tool hooks see the composite call as a whole (a before-hook sees the whole
  ``calls`` list; variables and relay act on the composite's result), not each
  sub-call. Guards (``ToolHook.guard_tool_call``) are the exception: they check each
  sub-call under its sub-tool's own name, so a tool that needs approval, or that tool
  discovery has not activated yet, is held or refused inside a composite exactly as
  when the model calls it directly.
- once a sub-call pauses the run (a call held for approval), the later sub-calls are
  not run: each reports that the run paused, and the model makes them again after
  the decision, in their order.
- once the run is cancelled, later sub-calls are not started, and the one running
  when the chain stops the composite's call is stopped; each reports that it was
  cancelled, beside the results of those that ran before.
- the composite's own time limit (the chain's ``timeout``, or ``timeout=`` here)
  bounds the whole call; a sub-tool's ``timeout`` bounds its sub-call.

Media of sub-results are attached to the composite's result in call order (an entry
says how many it added as ``attachments``); their instructions are kept too, each
line led by its sub-tool's name.

>>> from formats import XMLFormat
>>> from toolchain import ExecutionContext, JSONToolChain, ToolError, tool
>>> files: dict[str, str] = {}
>>> @tool
... def write(path: str, content: str) -> dict[str, bool]:
...     '''Write content to a file.'''
...     files[path] = content
...     return {"ok": True}
>>> @tool
... def read(path: str) -> str:
...     '''Read a file.'''
...     if path not in files:
...         raise ToolError(f"no file {path!r}")
...     return files[path]
>>> chain = JSONToolChain().register_tool(CompositeTool("file", "File operations.", [write, read]))
>>> action = '''{"tool": "file", "args": {"calls": [
...     {"name": "write", "args": {"path": "a.txt", "content": "Hi"}},
...     {"name": "read", "args": {"path": "b.txt"}},
...     {"name": "read", "args": {"path": "a.txt"}}]}}'''
>>> result = chain.execute_sync(ExecutionContext(), action, XMLFormat())
>>> for entry in result.raw.output(0, dict)["results"]:
...     print(entry)
{'name': 'write', 'result': {'ok': True}}
{'name': 'read', 'error': "no file 'b.txt'"}
{'name': 'read', 'result': 'Hi'}
>>> result.text.splitlines()[2][:60]
'{"results":[{"name":"write","result":{"ok":true}},{"name":"r'
"""

from __future__ import annotations

import asyncio
import difflib
import functools
import inspect
import logging
import time
from collections.abc import Awaitable, Mapping, Sequence
from typing import Any, cast

import pydantic

from toolchain._calls import NAME_KEYS, JSONValue, call_from_mapping
from toolchain._content import ContentPart
from toolchain._context import Cancelled, ExecutionContext, Stats
from toolchain._errors import ToolDefinitionError, ToolError, describe_exception, exception_text
from toolchain._events import AfterToolCall, BeforeToolCall
from toolchain._hooks import guard_call
from toolchain._input import ArgumentsError, InputCodec
from toolchain._output import to_json
from toolchain._result import ToolCall, ToolCallError, ToolResult
from toolchain._tool import Tool, check_tool, check_tool_name
from toolchain._workers import run_in_worker

__all__ = ["CompositeInput", "CompositeOutput", "CompositeTool"]

AnyTool = Tool[Any, Any]
CompositeOutput = dict[str, list[dict[str, object]]]
"""``{"results": [entry, ...]}``; an entry is ``{"name", "result"}`` or ``{"name", "error"}``."""

DEFAULT_MAX_CALLS = 20
_MAX_SHOWN_NAME = 80
_log = logging.getLogger("toolchain")


class CompositeInput(pydantic.BaseModel):
    """The composite's arguments: the sub-calls, each checked on its own when it runs.

    Items stay untyped here so that one malformed sub-call fails only itself.
    """

    model_config = pydantic.ConfigDict(extra="forbid", frozen=True)

    calls: list[Any]


class _CompositeCodec(InputCodec[CompositeInput]):
    """Validates the outer shape and the number of calls; documents each sub-tool's
    arguments in a JSON Schema that is precise for native tool calling."""

    def __init__(self, name: str, max_calls: int, schema: dict[str, object]) -> None:
        super().__init__(CompositeInput)
        self._name, self._max_calls, self._calls_schema = name, max_calls, schema

    def validate(self, args: Mapping[str, object]) -> CompositeInput:
        value = super().validate(args)
        problem = _too_many(self._name, self._max_calls, len(value.calls))
        if problem is not None:
            raise ArgumentsError([problem])
        return value

    def json_schema(self) -> dict[str, object]:
        return self._calls_schema


class CompositeTool(Tool[CompositeInput, CompositeOutput]):
    """One tool that runs a list of calls to its sub-tools, in order (see the module).

    ``subtools`` are ordinary ``Tool``s (``@tool`` functions or subclasses) with
    distinct names. ``max_calls`` bounds the sub-calls of one call: a longer list is
    refused whole, as invalid arguments, before anything runs (a half-run sequence of
    dependent steps would be worse than none). ``policy`` and ``timeout`` are the
    composite's own, as on any tool.

    >>> from toolchain import tool
    >>> @tool
    ... def add(a: int, b: int) -> int:
    ...     '''Add two integers.'''
    ...     return a + b
    >>> maths = CompositeTool("maths", "Arithmetic.", [add], max_calls=5)
    >>> print(maths.description)
    Arithmetic.
    <BLANKLINE>
    Sub-tools, called as {"calls": [{"name": "<sub-tool>", "args": {...}}, ...]} (at most 5 \
calls; they run one after another, in order, and each gets its own result or error):
    - add(a: integer, b: integer): Add two integers.
    """

    def __init__(
        self,
        name: str,
        description: str,
        subtools: Sequence[AnyTool],
        *,
        max_calls: int = DEFAULT_MAX_CALLS,
        policy: str = "",
        timeout: float | None = None,
    ) -> None:
        self.name = check_tool_name(name, "CompositeTool")
        owner = f"CompositeTool {name!r}"
        if not description.strip():
            raise ToolDefinitionError(
                f"{owner} has no description: the model reads it to choose the tool"
            )
        if isinstance(max_calls, bool) or max_calls < 1:
            raise ValueError(f"{owner}: max_calls must be >= 1, got {max_calls!r}")
        tools: dict[str, AnyTool] = {}
        for sub in subtools:
            check_tool(sub)
            if sub.name in tools:
                raise ToolDefinitionError(f"{owner} has two sub-tools named {sub.name!r}")
            sub.input_schema()  # a bad input type fails here, not at the first call
            tools[sub.name] = sub
        if not tools:
            raise ToolDefinitionError(f"{owner} has no sub-tools")
        self.subtools: Mapping[str, AnyTool] = tools
        self.max_calls = max_calls
        self.policy = policy
        self.timeout = timeout
        self.description = f"{description.strip()}\n\n{self._guide()}"
        schema = _calls_schema(tools, max_calls)
        vars(self)["_codec"] = _CompositeCodec(name, max_calls, schema)  # read by Tool.codec

    async def call(
        self, ctx: ExecutionContext, input: CompositeInput
    ) -> ToolResult[CompositeOutput]:
        problem = _too_many(self.name, self.max_calls, len(input.calls))
        if problem is not None:  # the chain's validation refuses these; a direct caller may not
            raise ToolError(problem)
        group = ctx.new_call_id()
        entries: list[dict[str, object]] = []
        media: list[ContentPart] = []
        notes: dict[str, None] = {}  # instructions, each once, in order
        paused_before = ctx.pause_reason
        for index, item in enumerate(input.calls):
            held = ctx.pause_reason and not paused_before  # a sub-call of ours paused the run
            name, result, error = await self._run_one(
                ctx, f"{group}/{index}", index, item, held=bool(held)
            )
            entry: dict[str, object] = {"name": name}
            if result is None:
                entry["error"] = error.message if error is not None else "no result"
                entries.append(entry)
                continue
            entry["result"] = result.text
            if result.media:
                entry["attachments"] = len(result.media)
                media.extend(result.media)
            if result.instructions.strip():
                notes[f"{name}: {result.instructions.strip()}"] = None
            entries.append(entry)
        return ToolResult({"results": entries}, media=tuple(media), instructions="\n".join(notes))

    # -- one sub-call ----------------------------------------------------------------

    async def _run_one(
        self, ctx: ExecutionContext, id: str, index: int, item: object, *, held: bool
    ) -> tuple[str | None, ToolResult[object] | None, ToolCallError | None]:
        """(the name to report, the result or None, the error or None); never raises
        but for the composite's own cancellation. ``held``: an earlier sub-call paused
        the run, so this one is not run."""
        started = time.perf_counter()
        parsed = self._parse(index, item)
        result: ToolResult[object] | None = None
        if isinstance(parsed, str):
            name = _shown_name(item)
            call = ToolCall(name or "", {}, id)
            failure: ToolCallError | None = ToolCallError("parse", parsed)
        elif held:
            name, call = _short(parsed.name), ToolCall(parsed.name, parsed.args, id)
            message = (
                f"not run: the run paused before it ({ctx.pause_reason}); make this call "
                "again once the run resumes"
            )
            failure = ToolCallError("refused", message)
        else:
            name, call = _short(parsed.name), ToolCall(parsed.name, parsed.args, id)
            result, failure = await self._attempt(ctx, index, call)
        # Every sub-call ends here, failed or not: observers see them all.
        qualified = self._qualified(call.name)
        if ctx.events.has_subscribers(AfterToolCall):
            duration = time.perf_counter() - started
            event = AfterToolCall(ctx, index, qualified, call.args, result, failure, duration, id)
            ctx.events.emit(event)
        if failure is not None:
            ctx.stats.count_call(Stats.TOOL_ERRORS, qualified)
        return name, result, failure

    def _parse(self, index: int, item: object) -> ToolCall | str:
        """The sub-call in ``item``, or why it is not one (the chain's leniency: ``tool``
        for ``name``, ``arguments`` for ``args`` …)."""
        if isinstance(item, Mapping) and not any(key in item for key in (*NAME_KEYS, "function")):
            keys = ", ".join(map(str, cast("Mapping[object, object]", item))) or "none"
            return f'no "name" (keys: {keys}); name one of: {", ".join(self.subtools)}'
        return call_from_mapping(index, cast(JSONValue, item))

    async def _attempt(
        self, ctx: ExecutionContext, index: int, call: ToolCall
    ) -> tuple[ToolResult[object] | None, ToolCallError | None]:
        if ctx.cancelled:
            return None, ToolCallError("cancelled", f"not run: {_cancel_text(ctx)}")
        qualified = self._qualified(call.name)
        ctx.stats.count_call(Stats.TOOL_CALLS, qualified)
        sub = self.subtools.get(call.name)
        if sub is None:
            return None, ToolCallError("unknown_tool", self._unknown(call.name))
        over = ctx.limits.tool_call_refused(ctx.stats, qualified)
        if over is not None:
            message = f"{call.name} was not run: the run's {over} limit is reached"
            return None, ToolCallError("limit", message)
        if ctx.hooks.guarded:  # approvals and activation, as for a direct call
            refusal = await guard_call(ctx, ToolCall(sub.name, call.args, call.id))
            if refusal is not None:
                return None, refusal
        if ctx.events.has_subscribers(BeforeToolCall):
            ctx.events.emit(BeforeToolCall(ctx, index, qualified, call.args, call.id))
        result, failure = await _invoke(ctx, sub, call.args)
        if result is not None:
            failure = _unshowable(sub.name, result)
        return (result if failure is None else None), failure

    def _qualified(self, name: str) -> str:
        """How a sub-call is named in events and stats: ``file.write``."""
        return f"{self.name}.{_short(name) or '?'}"

    def _unknown(self, name: str) -> str:
        known = list(self.subtools)
        close = difflib.get_close_matches(name, known, n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        return (
            f"unknown sub-tool {_short(name)!r}.{hint} Sub-tools of {self.name}: {', '.join(known)}"
        )

    # -- what the model reads --------------------------------------------------------

    def _guide(self) -> str:
        lines = [
            'Sub-tools, called as {"calls": [{"name": "<sub-tool>", "args": {...}}, ...]} '
            f"(at most {self.max_calls} calls; they run one after another, in order, and "
            "each gets its own result or error):"
        ]
        for sub in self.subtools.values():
            line = f"- {sub.name}({_parameters(sub.prompt_schema())}): {sub.description.strip()}"
            if sub.policy.strip():
                line += f" Policy: {sub.policy.strip()}"
            lines.append(line)
        return "\n".join(lines)


async def _invoke(
    ctx: ExecutionContext, sub: AnyTool, args: Mapping[str, object]
) -> tuple[ToolResult[object] | None, ToolCallError | None]:
    """Validate and run one sub-call under its own timeout; failures become its error."""
    try:
        value = sub.codec.validate(args)
    except ArgumentsError as error:
        message = f"invalid arguments for {sub.name}: {error}"
        return None, ToolCallError("invalid_arguments", message, error)
    except Exception as error:  # a validator raising something odd, deep nesting …
        message = f"invalid arguments for {sub.name}: {describe_exception(error)}"
        return None, ToolCallError("invalid_arguments", message[:1000], error)
    scope = asyncio.timeout(sub.timeout)
    result: object
    try:
        async with scope:
            result = await _call(ctx, sub, value)
    except ToolError as error:
        return None, ToolCallError("tool_error", exception_text(error), error)
    except Cancelled as error:
        return None, ToolCallError("cancelled", f"cancelled: {exception_text(error)}", error)
    except asyncio.CancelledError as error:
        if not ctx.cancelled:
            raise  # the composite itself was stopped (its time limit, or its caller)
        return None, ToolCallError(
            "cancelled", f"{sub.name} was cancelled: {_cancel_text(ctx)}", error
        )
    except TimeoutError as error:
        if scope.expired():
            message = f"{sub.name} did not finish within {sub.timeout:g} s"
            return None, ToolCallError("timeout", message, error)
        return None, _raised(sub.name, error)
    except (KeyboardInterrupt, GeneratorExit):
        raise
    except BaseException as error:  # SystemExit … from a sub-tool: this sub-call's
        return None, _raised(sub.name, error)
    if not isinstance(result, ToolResult):
        message = f"{sub.name} returned {type(result).__name__}, not a ToolResult"
        return None, ToolCallError("output_error", message)
    return cast("ToolResult[object]", result), None


async def _call(ctx: ExecutionContext, sub: AnyTool, value: object) -> object:
    if sub.is_async:
        return await cast("Awaitable[object]", sub.call(ctx, value))
    if sub.inline:
        return sub.call(ctx, value)
    result = await run_in_worker(functools.partial(sub.call, ctx, value))
    if inspect.isawaitable(result):
        result = await result
    return result


def _raised(name: str, error: BaseException) -> ToolCallError:
    _log.warning("sub-tool %s raised", name, exc_info=error)
    return ToolCallError("tool_error", f"{name} failed: {describe_exception(error)}"[:2000], error)


def _unshowable(name: str, result: ToolResult[object]) -> ToolCallError | None:
    """An error when the output cannot be serialised: it would sink the whole composite."""
    try:
        to_json(result.text)
    except (KeyboardInterrupt, GeneratorExit):
        raise
    except BaseException as error:
        message = f"{name} produced output that cannot be shown: {describe_exception(error)}"
        return ToolCallError("output_error", message[:500], error)
    return None


def _cancel_text(ctx: ExecutionContext) -> str:
    return f"the run was cancelled ({ctx.cancel_reason or 'cancelled'})"


def _too_many(name: str, max_calls: int, count: int) -> str | None:
    """Why ``count`` sub-calls are refused, or None when they may run."""
    if count <= max_calls:
        return None
    return (
        f"calls: {count} calls given, but one {name} call takes at most {max_calls}; "
        f"split them over several {name} calls"
    )


def _short(name: str) -> str:
    """A name the model wrote, cut to a length fit to show back."""
    name = name.strip()
    return name if len(name) <= _MAX_SHOWN_NAME else name[: _MAX_SHOWN_NAME - 3] + "..."


def _shown_name(item: object) -> str | None:
    """The sub-tool name a malformed item gives, for its entry (None when it gives none)."""
    if not isinstance(item, Mapping):
        return None
    mapping = cast("Mapping[str, object]", item)
    name = next((mapping[key] for key in NAME_KEYS if key in mapping), None)
    return _short(name) or None if isinstance(name, str) else None


# -- the JSON Schema -----------------------------------------------------------------


def _calls_schema(tools: Mapping[str, AnyTool], max_calls: int) -> dict[str, object]:
    """``{"calls": [...]}`` whose items are a union discriminated by ``name``.

    ``anyOf`` (not ``oneOf``) and no ``maxItems``: both OpenAI's and Anthropic's strict
    modes accept it; the limit is stated in the description and checked on validation.
    Sub-tools' ``$defs`` move to the root, where ``#/$defs/...`` references resolve.
    """
    defs: dict[str, object] = {}
    branches: list[dict[str, object]] = []
    for name, sub in tools.items():
        args = _hoist_defs(sub.input_schema(), name, defs)
        branches.append(
            {
                "type": "object",
                "properties": {"name": {"type": "string", "enum": [name]}, "args": args},
                "required": ["name", "args"],
                "additionalProperties": False,
            }
        )
    items: dict[str, object] = branches[0] if len(branches) == 1 else {"anyOf": branches}
    schema: dict[str, object] = {
        "type": "object",
        "properties": {
            "calls": {
                "type": "array",
                "description": (
                    f"Sub-tool calls, run one after another in this order (at most {max_calls})"
                ),
                "items": items,
            }
        },
        "required": ["calls"],
        "additionalProperties": False,
    }
    if defs:
        schema["$defs"] = defs
    return schema


def _hoist_defs(schema: dict[str, object], owner: str, defs: dict[str, object]) -> object:
    """``schema`` without its ``$defs``, which join ``defs`` (renamed on a clash)."""
    own = schema.get("$defs")
    if not isinstance(own, dict):
        return schema
    renamed: dict[str, str] = {}
    for key, value in cast("dict[str, object]", own).items():
        new = key
        if new in defs and defs[new] != value:
            new = f"{owner}_{key}"
            while new in defs:
                new += "_"
        renamed[key] = new
    body = {key: value for key, value in schema.items() if key != "$defs"}
    for key, value in cast("dict[str, object]", own).items():
        defs[renamed[key]] = _rewrite_refs(value, renamed)
    return _rewrite_refs(body, renamed)


def _rewrite_refs(node: object, renamed: Mapping[str, str]) -> object:
    # JSON Schema: JSON values, so lists of values and str-keyed objects.
    if isinstance(node, list):
        return [_rewrite_refs(item, renamed) for item in cast("list[object]", node)]
    if not isinstance(node, dict):
        return node
    out: dict[str, object] = {}
    for key, value in cast("dict[str, object]", node).items():
        if key == "$ref" and isinstance(value, str) and value.startswith("#/$defs/"):
            target = value.removeprefix("#/$defs/")
            out[key] = f"#/$defs/{renamed.get(target, target)}"
        else:
            out[key] = _rewrite_refs(value, renamed)
    return out


def _parameters(schema: Mapping[str, object]) -> str:
    """``path: string, mode?: "w" | "a"`` — a sub-tool's parameters in one line."""
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return ""
    required = schema.get("required")
    needed: set[object] = (
        set(cast("list[object]", required)) if isinstance(required, list) else set()
    )
    parts: list[str] = []
    for name, spec in cast("Mapping[str, object]", properties).items():
        mark = "" if name in needed else "?"
        parts.append(f"{name}{mark}: {_type_text(spec)}")
    return ", ".join(parts)


def _type_text(spec: object, depth: int = 0) -> str:
    if not isinstance(spec, Mapping) or depth > 3:
        return "any"
    node = cast("Mapping[str, object]", spec)
    enum = node.get("enum")
    if isinstance(enum, list):
        values = cast("list[object]", enum)
        shown = " | ".join(to_json(value) for value in values[:8])
        return shown + " | …" if len(values) > 8 else shown
    options = node.get("anyOf")
    if isinstance(options, list):
        return " | ".join(_type_text(option, depth + 1) for option in cast("list[object]", options))
    ref = node.get("$ref")
    if isinstance(ref, str):
        return ref.rsplit("/", 1)[-1]
    declared = node.get("type")
    if declared == "array":
        return f"{_type_text(node.get('items'), depth + 1)}[]"
    if isinstance(declared, str):
        return declared
    if isinstance(declared, list):
        return " | ".join(str(kind) for kind in cast("list[object]", declared))
    return "any"
