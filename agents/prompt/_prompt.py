"""``Prompt``: what a ``run_prompt`` build function declares with its ``def_*`` calls.

A build function receives a fresh ``Prompt`` and fills it: named values for the system
prompt (``def_``, ``def_data``), labelled system parts (``def_system``), messages
(``def_message``, ``user``), tools (``def_tool``, ``def_agent``), per-step hooks
(``def_hook``), task lists and extensions. ``run_prompt`` then runs it on a model.

>>> prompt = Prompt()
>>> prompt.def_("USER_NAME", "Ada")
'<USER_NAME>'
>>> prompt.def_data("ORDER", {"item": "tea", "quantity": 2})
'<ORDER>'
>>> prompt.user("Greet <USER_NAME> and confirm <ORDER>.")
>>> print(prompt.system_text())
The values below are named; <NAME> in a message refers to the value in that tag.
<BLANKLINE>
<USER_NAME>
Ada
</USER_NAME>
<ORDER>
item: tea
quantity: 2
</ORDER>
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar, cast, overload

import yaml

from agents.models import Message, Model
from agents.steps import StepRequest
from formats import FormattedSection, TextFormat, XMLFormat
from toolchain import ExecutionContext, Extension, Tool, ToolResult, to_builtins
from toolchain._tokens import count_tokens

if TYPE_CHECKING:
    from agents.prompt._tasks import Task

__all__ = [
    "Definition",
    "FunctionTool",
    "HookInput",
    "HookResult",
    "Prompt",
    "PromptHook",
    "Sampling",
]

InputT = TypeVar("InputT")
OutputT = TypeVar("OutputT")
AnyTool = Tool[Any, Any]
Sampling = Literal["head", "tail", "sample"]

DEFINITIONS_GUIDE = (
    "The values below are named; <NAME> in a message refers to the value in that tag."
)
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,63}")


@dataclass(frozen=True, slots=True)
class Definition:
    """A named value of the system prompt: its text as the model sees it."""

    name: str
    kind: Literal["text", "data"]
    text: str
    value: object
    """What was given (the text, or the data before it was written as YAML)."""
    trimmed: bool = False
    """Whether a token budget cut it (the text then says what was left out)."""


@dataclass(frozen=True, slots=True)
class HookInput:
    """What a ``def_hook`` function sees before each step.

    ``step_number`` counts from 0 (lmthing's convention); ``steps`` are the finished
    steps of the run (``agents.Iteration``); ``variables`` the definitions by name.
    """

    messages: tuple[Message, ...]
    model: Model
    steps: tuple[Any, ...]
    step_number: int
    variables: dict[str, Definition]
    system: str
    active_tools: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class HookResult:
    """What a ``def_hook`` function may change for the step (None: leave it).

    ``variables`` replace the definitions from this step on (new names are added);
    the others hold for this step only, like every step hook's changes.
    """

    system: str | None = None
    active_tools: Sequence[str] | None = None
    messages: Sequence[Message] | None = None
    variables: Mapping[str, str | Definition] | None = None


PromptHook = Callable[[HookInput], "HookResult | Awaitable[HookResult | None] | None"]
StepFn = Callable[[ExecutionContext, StepRequest], Awaitable[StepRequest | None]]


class FunctionTool(Tool[InputT, OutputT], Generic[InputT, OutputT]):
    """A tool from a name, a description, an input type and a function.

    The function takes the validated input, or the input and the run's
    ``ExecutionContext``; it may be async, and may return a ``ToolResult``.

    >>> from pydantic import BaseModel
    >>> class City(BaseModel):
    ...     city: str
    >>> weather = FunctionTool("weather", "Weather in a city.", City, lambda i: f"Sun in {i.city}")
    >>> weather.input_schema()["required"]
    ['city']
    """

    def __init__(
        self,
        name: str,
        description: str,
        input_type: type[InputT],
        fn: Callable[..., OutputT | ToolResult[OutputT] | Awaitable[OutputT | ToolResult[OutputT]]],
    ) -> None:
        self.name = name
        self.description = description
        self.input_type = input_type
        self._fn = fn
        # The context goes to a second parameter only when it has no default of its own.
        params = list(inspect.signature(fn).parameters.values())
        self._wants_ctx = len(params) >= 2 and params[1].default is inspect.Parameter.empty

    async def call(self, ctx: ExecutionContext, input: InputT) -> ToolResult[OutputT]:
        value = self._fn(input, ctx) if self._wants_ctx else self._fn(input)
        if inspect.isawaitable(value):
            value = await value
        if isinstance(value, ToolResult):
            return cast("ToolResult[OutputT]", value)
        return ToolResult(cast(OutputT, value))


class Prompt:
    """The declarations of one ``run_prompt`` (see the module text)."""

    def __init__(self, *, text_format: TextFormat | None = None) -> None:
        self.text_format: TextFormat = text_format or XMLFormat()
        self.system = ""
        """The ``system`` option: the start of the system prompt."""
        self.system_parts: dict[str, str] = {}
        self.definitions: dict[str, Definition] = {}
        self.messages: list[Message] = []
        self.tools: dict[str, AnyTool] = {}
        self.hooks: list[PromptHook] = []
        self.step_hooks: list[StepFn] = []
        self.extensions: list[Extension] = []
        self.tasks: list[Task] | None = None
        self.dynamic_tasks = False

    # -- values of the system prompt -------------------------------------------------

    def def_(
        self,
        name: str,
        text: str,
        *,
        budget_tokens: int | None = None,
        keep: Literal["head", "tail"] = "head",
    ) -> str:
        """Define a named text for the system prompt; returns ``<NAME>`` to use in
        messages. ``budget_tokens`` cuts it to that many o200k tokens, keeping its
        ``head`` or ``tail`` and saying what was left out.

        >>> p = Prompt()
        >>> p.def_("NOTES", "word " * 1000, budget_tokens=10)
        '<NOTES>'
        >>> p.definitions["NOTES"].trimmed, p.definitions["NOTES"].text.endswith("tokens left out]")
        (True, True)
        """
        _check_name(name)
        shown, trimmed = _fit_text(text, budget_tokens, keep)
        self.definitions[name] = Definition(name, "text", shown, text, trimmed)
        return f"<{name}>"

    def def_data(
        self,
        name: str,
        value: object,
        *,
        budget_tokens: int | None = None,
        sampling: Sampling = "head",
    ) -> str:
        """Define named data, shown as YAML inside ``<NAME>`` tags; returns ``<NAME>``.

        With ``budget_tokens``, a list keeps the items that fit: the first ones
        (``head``), the last (``tail``) or an even spread (``sample``), and says how
        many were left out; other data is cut like text.

        >>> p = Prompt()
        >>> _ = p.def_data("ROWS", [{"n": i} for i in range(100)], budget_tokens=40,
        ...                sampling="sample")
        >>> print(p.definitions["ROWS"].text.splitlines()[-1])
        # 96 of 100 items left out (an even sample is shown)
        """
        _check_name(name)
        data = to_builtins(value)
        text, trimmed = _fit_data(data, budget_tokens, sampling)
        self.definitions[name] = Definition(name, "data", text, value, trimmed)
        return f"<{name}>"

    def def_system(self, name: str, text: str) -> None:
        """Add a labelled part to the system prompt (a part of the same name is replaced)."""
        _check_name(name)
        self.system_parts[name] = text

    # -- messages ----------------------------------------------------------------------

    def def_message(self, role: Literal["user", "assistant"], text: str) -> None:
        """Add a message to the conversation (system text goes through ``def_system``)."""
        if role not in ("user", "assistant"):
            raise ValueError(f"def_message takes 'user' or 'assistant', not {role!r}")
        self.messages.append(Message.text(role, text))

    def user(self, text: str) -> None:
        """Add the user message (lmthing's ``$``)."""
        self.def_message("user", text)

    # -- tools ---------------------------------------------------------------------------

    @overload
    def def_tool(self, tool: Tool[InputT, OutputT], /) -> Tool[InputT, OutputT]: ...

    @overload
    def def_tool(
        self,
        name: str,
        description: str,
        input_type: type[InputT],
        fn: Callable[..., Awaitable[OutputT]],
        /,
    ) -> Tool[InputT, OutputT]: ...

    @overload
    def def_tool(
        self,
        name: str,
        description: str,
        input_type: type[InputT],
        fn: Callable[..., OutputT],
        /,
    ) -> Tool[InputT, OutputT]: ...

    @overload
    def def_tool(self, name: str, description: str, subtools: Sequence[AnyTool], /) -> AnyTool: ...

    def def_tool(self, *args: Any) -> AnyTool:
        """Register a tool: a ``Tool``; ``(name, description, InputModel, fn)``; or
        ``(name, description, [subtools])``, one composite tool the model calls with
        ``{"calls": [{"name", "args"}, ...]}``.
        """
        if len(args) == 1:
            made = _as_tool(args[0])
        elif len(args) == 4:
            name, description, input_type, fn = args
            made = FunctionTool(name, description, input_type, fn)
        elif len(args) == 3 and not isinstance(args[2], str | bytes):
            from toolchain.composite import CompositeTool

            name, description, subtools = args
            made = CompositeTool(name, description, list(subtools))
        else:
            raise TypeError(
                "def_tool takes a Tool, (name, description, InputModel, fn), or "
                "(name, description, [subtools])"
            )
        self.tools[made.name] = made
        return made

    def def_agent(
        self,
        name: str,
        description: str,
        input_type: type[InputT],
        build: Callable[[InputT, Prompt], Awaitable[None] | None],
        *,
        model: Model | str | None = None,
        system: str = "",
        response_model: type[Any] | None = None,
        plugins: Sequence[Plugin | Extension] = (),
        **options: Any,
    ) -> AnyTool:
        """Register a sub-agent as a tool: each call runs ``build(input, prompt)`` in
        its own child run (its own messages and tools; cancellation, limits, stats and
        usage shared with this run) and returns its answer; with ``response_model``,
        the answer is that model, validated.
        """
        from agents.prompt._agent_tool import AgentTool

        made = AgentTool(
            name,
            description,
            input_type,
            build,
            model=model,
            system=system,
            response_model=response_model,
            plugins=tuple(plugins),
            options=options,
        )
        self.tools[name] = made
        return made

    # -- steps -----------------------------------------------------------------------------

    def def_hook(self, fn: PromptHook) -> None:
        """Run ``fn`` before each step; it may change the system prompt, the active
        tools, the messages and the variables (see ``HookInput``, ``HookResult``)."""
        self.hooks.append(fn)

    def def_extension(self, extension: Extension) -> None:
        """Add a ``toolchain.Extension`` (``ToolVariables``, ``ContextRelay``,
        ``ToolSearch`` …) to the run: the way plugins reach a prompt."""
        self.extensions.append(extension)

    def def_task_list(self, tasks: Sequence[Task]) -> None:
        """Work through ``tasks`` in order, each checked by its validation before the
        next starts (see ``agents.prompt.Task``); adds the ``finish_task`` tool. The run
        ends when the last task is finished: a reply without a tool call before that
        is sent back with the tasks left (``limit == "tasks_pending"`` if it persists)."""
        if not tasks:
            raise ValueError("def_task_list needs at least one task")
        self.tasks = list(tasks)

    def def_dynamic_task_list(self) -> None:
        """Let the model plan its own tasks with ``create_task``, ``update_task``,
        ``start_task``, ``complete_task``, ``get_task_list`` and ``delete_task``; the run
        ends when every task is completed, and a reply without a tool call while one is
        left is sent back naming them."""
        self.dynamic_tasks = True

    # -- what the run sends ----------------------------------------------------------------

    def system_text(self, definitions: dict[str, Definition] | None = None) -> str:
        """The system prompt these declarations make: the ``system`` option, the
        labelled parts, then the named values (with a line saying how to read them)."""
        fmt = self.text_format
        blocks: list[str] = []
        if self.system.strip():
            blocks.append(self.system.strip())
        if self.system_parts:
            parts = [
                FormattedSection(name, text.strip()) for name, text in self.system_parts.items()
            ]
            blocks.append(fmt.format_sections(parts))
        shown = self.definitions if definitions is None else definitions
        if shown:
            blocks.append(DEFINITIONS_GUIDE)
            blocks.append(
                fmt.format_sections([FormattedSection(d.name, d.text) for d in shown.values()])
            )
        return "\n\n".join(blocks)


Plugin = Callable[[Prompt], None]
"""A function that applies ``def_*`` calls to a prompt (``plugins=[...]``)."""


def _as_tool(value: object) -> AnyTool:
    checked = value  # checked under another name: ``value`` stays ``object`` for the cast
    if not isinstance(checked, Tool):
        raise TypeError(f"def_tool with one argument takes a Tool, not {type(value).__name__}")
    return cast(AnyTool, value)


def _check_name(name: str) -> None:
    if not isinstance(cast(object, name), str) or not _NAME.fullmatch(name):
        raise ValueError(
            f"{name!r} is not a usable name: letters, digits, '_', '.', '-', at most 64, "
            "not starting with a digit"
        )


def _fit_text(text: str, budget: int | None, keep: Literal["head", "tail"]) -> tuple[str, bool]:
    if budget is None:
        return text, False
    if budget < 1:
        raise ValueError("budget_tokens must be at least 1")
    total = count_tokens(text)
    if total <= budget:
        return text, False
    # Characters per token vary; shrink by the measured ratio until the cut fits.
    size = max(1, len(text) * budget // total)
    while True:
        part = text[:size] if keep == "head" else text[-size:]
        if count_tokens(part) <= budget or size == 1:
            break
        size = max(1, size * 9 // 10)
    note = f"[… {total - count_tokens(part)} of {total} tokens left out]"
    return (f"{part}\n{note}" if keep == "head" else f"{note}\n{part}"), True


def _yaml(data: object) -> str:
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100).rstrip("\n")


def _fit_data(data: object, budget: int | None, sampling: Sampling) -> tuple[str, bool]:
    text = _yaml(data)
    if budget is None:
        return text, False
    if budget < 1:
        raise ValueError("budget_tokens must be at least 1")
    if count_tokens(text) <= budget:
        return text, False
    if not isinstance(data, list):
        return _fit_text(text, budget, "head")
    items = cast("list[object]", data)
    # The largest count of items whose YAML (and the note) fits: a binary search.
    low, high = 0, len(items)
    while low < high:
        mid = (low + high + 1) // 2
        if count_tokens(_yaml(_choose(items, mid, sampling))) + 16 <= budget:
            low = mid
        else:
            high = mid - 1
    chosen = _choose(items, low, sampling)
    how = {
        "head": "the first are shown",
        "tail": "the last are shown",
        "sample": "an even sample is shown",
    }
    note = f"# {len(items) - low} of {len(items)} items left out ({how[sampling]})"
    return (f"{_yaml(chosen)}\n{note}" if chosen else note), True


def _choose(items: list[object], count: int, sampling: Sampling) -> list[object]:
    if count <= 0:
        return []
    if sampling == "head":
        return items[:count]
    if sampling == "tail":
        return items[-count:]
    step = len(items) / count
    return [items[int(i * step)] for i in range(count)]
