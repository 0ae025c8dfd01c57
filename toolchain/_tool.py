"""``Tool[I, TextOutput]``: a typed tool, and ``@tool`` for typed functions."""

from __future__ import annotations

import functools
import inspect
import re
import typing
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from typing import Any, Generic, Protocol, TypeVar, cast, get_args, get_origin, overload

import pydantic

from toolchain._context import ExecutionContext
from toolchain._errors import ToolDefinitionError, ToolInputTypeError
from toolchain._input import InputCodec, codec_for, is_input_type, shown_schema, unmodelled
from toolchain._result import ToolResult

__all__ = ["Tool", "tool"]

InputT = TypeVar("InputT")
OutputT = TypeVar("OutputT")
ValueT = TypeVar("ValueT")

_TOOL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*\Z")


def check_tool_name(name: object, owner: str = "") -> str:
    """``name`` if it can name a tool (it becomes a section name), else ``ToolDefinitionError``."""
    if not isinstance(name, str) or not _TOOL_NAME.match(name):
        where = f"{owner}: " if owner else ""
        raise ToolDefinitionError(
            f"{where}tool name {name!r} is invalid: use ASCII letters, digits, '_', '-' or "
            "'.', starting with a letter or '_' (it becomes a section name)"
        )
    return name


def check_tool(tool: object) -> None:
    """Everything ``register_tool`` needs of a tool, with the library's own errors."""
    owner = type(tool).__name__
    # inspect.isclass, not isinstance: pyright then keeps "tool" an object below
    if inspect.isclass(tool) and issubclass(tool, Tool):
        raise ToolDefinitionError(
            f"{tool.__name__} is a Tool class; register an instance: {tool.__name__}()"
        )
    if inspect.isfunction(tool) or inspect.ismethod(tool):
        raise ToolDefinitionError(
            f"{tool.__name__} is a function, not a Tool: decorate it with @tool "
            "(or pass it in an agent's tools=[...], which does that)"
        )
    if not isinstance(tool, Tool):
        raise ToolDefinitionError(
            f"{owner} is not a Tool: subclass Tool[Input, Output] or decorate a function with @tool"
        )
    # The getattr calls below read whatever user code set, if anything: as an object, not
    # the Tool[Unknown, Unknown] that isinstance leaves for pyright.
    tool = cast(object, tool)
    name = getattr(tool, "name", None)
    if name is None:
        raise ToolDefinitionError(f'{owner} has no name: set name = "..." on the class')
    check_tool_name(name, owner)
    _check_description(getattr(tool, "description", None), owner, required=True)
    for attribute in ("policy",):
        if not isinstance(getattr(tool, attribute, ""), str):
            raise ToolDefinitionError(f"{owner}.{attribute} must be a string")
    _check_controls(
        owner, getattr(tool, "requires_approval", False), getattr(tool, "max_concurrency", None)
    )
    timeout = getattr(tool, "timeout", None)
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0
    ):
        raise ToolDefinitionError(f"{owner}.timeout must be a positive number of seconds or None")


def _check_controls(owner: str, gate: object, turns: object) -> None:
    """``requires_approval`` and ``max_concurrency``, as a tool sets them."""
    if not isinstance(gate, bool) and not callable(gate):
        raise ToolDefinitionError(
            f"{owner}.requires_approval must be True, False or a function of the validated "
            f"input returning a bool, not {type(gate).__name__}"
        )
    if turns is not None and (isinstance(turns, bool) or not isinstance(turns, int) or turns < 1):
        raise ToolDefinitionError(f"{owner}.max_concurrency must be a positive int or None")


def _check_description(description: object, owner: str, *, required: bool) -> None:
    if description is None and not required:
        return
    if not isinstance(description, str) or not description.strip():
        raise ToolDefinitionError(
            f'{owner} has no description: set description = "..." (the model reads it '
            "to choose the tool)"
        )


def _check_call_signature(cls: type) -> None:
    call = cls.__dict__.get("call")
    if call is None or getattr(call, "__isabstractmethod__", False):
        return
    if isinstance(call, staticmethod | classmethod) or not inspect.isfunction(call):
        raise ToolDefinitionError(
            f"{cls.__name__}.call must be a plain method: def call(self, ctx, input)"
        )
    params = list(inspect.signature(call).parameters.values())
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = [p for p in positional if p.default is p.empty]
    varargs = any(p.kind is p.VAR_POSITIONAL for p in params)
    kw_only_required = [p for p in params if p.kind is p.KEYWORD_ONLY and p.default is p.empty]
    if len(required) > 3 or (len(positional) < 3 and not varargs) or kw_only_required:
        shown = ", ".join(p.name for p in params)
        raise ToolDefinitionError(
            f"{cls.__name__}.call({shown}) must take (self, ctx, input): the chain calls "
            "it with the run's ExecutionContext and the validated input"
        )


class Tool(ABC, Generic[InputT, OutputT]):
    """A typed tool: validated input ``InputT`` in, raw ``ToolResult[OutputT]`` out.

    Subclass it with concrete type arguments, set ``name`` and ``description`` (and
    optionally ``policy``: when and how to use it, ``timeout`` in seconds,
    ``requires_approval`` and ``max_concurrency``), and
    implement ``call`` as ``async def`` or plain ``def`` (run in a worker thread, or on
    the event loop when ``inline = True``).
    ``InputT`` is read from the type arguments: a pydantic model, dataclass,
    TypedDict or msgspec Struct; its JSON Schema documents the tool to the model.

    >>> from pydantic import BaseModel
    >>> class CityIn(BaseModel):
    ...     city: str
    >>> class Weather(Tool[CityIn, dict[str, object]]):
    ...     name = "get_weather"
    ...     description = "Current weather for a city."
    ...     def call(self, ctx: ExecutionContext, input: CityIn) -> ToolResult[dict[str, object]]:
    ...         return ToolResult({"city": input.city, "temp_c": 21})
    >>> Weather().input_schema()["required"]
    ['city']
    """

    name: str
    description: str
    policy: str = ""
    timeout: float | None = None
    inline: bool = False
    """A plain ``def call`` that never blocks (pure computation on in-memory data) may
    run on the event loop instead of a worker thread: no thread round trip (~80 µs),
    but no timeout can interrupt it either."""
    requires_approval: bool | Callable[[Any], object] = False
    """Whether a call waits for a person's decision before it runs: ``True``, or a
    function of the validated input (``lambda order: order.amount > 100``). The run's
    ``approve=`` callback decides; with none, or when it returns ``None``, the call is
    held and the run pauses (see ``toolchain.Approval``). A predicate that raises counts
    as ``True``."""
    max_concurrency: int | None = None
    """At most this many calls of the tool run at once in a run (its sub-agents
    included): for a rate-limited API. The others wait their turn, untimed."""
    idempotent: bool = False
    """Running it twice with the same input is safe (a read, or a write keyed by its
    input). A durable run (``agents.durable``) runs a call again that was cut off by a
    crash only when this is set; otherwise the model is told the call was interrupted."""
    input_type: type[Any]
    output_type: Any = Any
    """The type of ``ToolResult.text``: ``OutputT`` of ``Tool[InputT, OutputT]``, or the
    return annotation of a ``@tool`` function (``Any`` when not given). A durable run
    (``agents.durable``) records an output as plain data and loads it back into this type.

    >>> from pydantic import BaseModel
    >>> class Weather(BaseModel):
    ...     temp_c: int
    >>> @tool
    ... def weather(city: str) -> Weather:
    ...     '''Current weather for a city.'''
    ...     return Weather(temp_c=21)
    >>> weather.output_type is Weather
    True
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        found = _input_type_of(cls)
        if found is not None:
            cls.input_type = found
        output = _type_argument(cls, 1)
        if output is not None:
            cls.output_type = output
        # Mistakes fail here, naming the class, not when a prompt is built or a call runs.
        if "name" in cls.__dict__:
            check_tool_name(cls.__dict__["name"], cls.__name__)
        if "description" in cls.__dict__:
            _check_description(cls.__dict__["description"], cls.__name__, required=True)
        _check_call_signature(cls)
        concrete = not inspect.isabstract(cls) and hasattr(cls, "input_type")
        if concrete and cls.__module__ != __name__:
            if "name" not in _class_attributes(cls) and "__init__" not in _own_inits(cls):
                raise ToolDefinitionError(
                    f'{cls.__name__} has no name: set name = "..." on the class'
                )
            if "description" not in _class_attributes(cls) and "__init__" not in _own_inits(cls):
                raise ToolDefinitionError(
                    f'{cls.__name__} has no description: set description = "..." (the '
                    "model reads it to choose the tool)"
                )

    @abstractmethod
    def call(
        self, ctx: ExecutionContext, input: InputT
    ) -> ToolResult[OutputT] | Awaitable[ToolResult[OutputT]]:
        """Run the tool. Raise ``ToolError`` for a failure the model should read."""

    @property
    def codec(self) -> InputCodec[InputT]:
        """Validation and schema for ``InputT`` (one for every tool of that input type)."""
        codec = self.__dict__.get("_codec")
        if codec is None:
            if not hasattr(self, "input_type"):
                raise ToolInputTypeError(
                    f"{type(self).__name__} has no input type: subclass "
                    "Tool[YourInput, YourOutput] with concrete types"
                )
            codec = codec_for(self.input_type)
            # vars(self) is self.__dict__, which pyright types as a read-only mappingproxy
            # in ABC subclasses.
            vars(self)["_codec"] = codec
        return cast("InputCodec[InputT]", codec)

    def input_schema(self) -> dict[str, object]:
        """The JSON Schema of the tool's input."""
        # The kept codec read straight from __dict__: a run's prompt asks every tool for
        # its schema (~200 with ToolSearch's deferred tools), and going through the
        # ``codec`` property costs two more frames each time.
        codec: InputCodec[Any] | None = self.__dict__.get("_codec")
        return (self.codec if codec is None else codec).json_schema()

    def prompt_schema(self) -> dict[str, object]:
        """The input schema as shown in prompts (optional fields simplified): one dict
        per input schema, read and never changed, as the input schema itself."""
        return shown_schema(self.input_schema())

    @functools.cached_property
    def is_async(self) -> bool:
        """Whether ``call`` is a coroutine function (else it runs in a worker thread)."""
        return inspect.iscoroutinefunction(self.call)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {getattr(self, 'name', '?')!r}>"


def _class_attributes(cls: type) -> set[str]:
    """Attribute names set on ``cls`` or a base below ``Tool`` (annotations don't count)."""
    names: set[str] = set()
    for klass in cls.__mro__:
        if klass is Tool:
            break
        names.update(klass.__dict__)
    return names


def _own_inits(cls: type) -> set[str]:
    """``{"__init__"}`` when a class below ``Tool`` defines ``__init__`` (it may set names)."""
    for klass in cls.__mro__:
        if klass is Tool:
            break
        if "__init__" in klass.__dict__:
            return {"__init__"}
    return set()


def _type_argument(cls: type, index: int) -> object | None:
    """Argument ``index`` of ``Tool[InputT, OutputT]`` where ``cls`` subclasses it with a
    concrete type there (not ``Any``, not a type variable)."""
    for base in getattr(cls, "__orig_bases__", ()):
        origin = get_origin(base)
        if isinstance(origin, type) and issubclass(origin, Tool):
            args = get_args(base)
            if len(args) > index and args[index] is not Any:
                found: object = args[index]
                return None if isinstance(found, TypeVar) else found
    return None


def _input_type_of(cls: type) -> type[Any] | None:
    candidate = _type_argument(cls, 0)
    if candidate is None:
        return None
    if not is_input_type(candidate):
        raise ToolInputTypeError(
            f"{cls.__name__}: input type {candidate!r} must be a pydantic model, "
            "a dataclass, a TypedDict or a msgspec Struct"
        )
    return cast(type[Any], candidate)


def _output_type_of(fn: Callable[..., Any]) -> object:
    """What a ``@tool`` function returns, as ``ToolResult.text``: its return annotation,
    unwrapped from ``ToolResult[...]`` (``Any`` when it has none, or it cannot be read)."""
    try:
        returned: object = typing.get_type_hints(fn).get("return", Any)
    except Exception:  # an annotation that does not resolve: the input check names it
        return Any
    if returned is ToolResult:
        return Any
    if get_origin(returned) is ToolResult:
        return get_args(returned)[0]
    return returned


class _FunctionTool(Tool[Any, Any]):
    """A tool built by ``@tool`` from a typed function."""

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str,
        description: str,
        policy: str,
        timeout: float | None,
        inline: bool,
        idempotent: bool = False,
        requires_approval: bool | Callable[[Any], object] = False,
        max_concurrency: int | None = None,
    ) -> None:
        self.name = check_tool_name(name, f"@tool {getattr(fn, '__name__', fn)!r}")
        self.inline = inline
        self.idempotent = idempotent
        self.requires_approval = requires_approval
        self.max_concurrency = max_concurrency
        self.description = description
        self.policy = policy
        self.timeout = timeout
        self._fn = fn
        self._wants_ctx, self._model_param, input_type = _function_input(fn)
        self.input_type = input_type
        self.output_type = _output_type_of(fn)
        self._async = inspect.iscoroutinefunction(fn)

    @functools.cached_property
    def is_async(self) -> bool:
        return self._async

    def call(self, ctx: ExecutionContext, input: Any) -> Any:
        args: tuple[object, ...] = (ctx,) if self._wants_ctx else ()
        result = self._fn(*args, input) if self._model_param else self._fn(*args, **dict(input))
        if self._async:
            return _await_result(result)
        return _as_result(result)


async def _await_result(pending: Awaitable[object]) -> ToolResult[object]:
    return _as_result(await pending)


def _as_result(value: object) -> ToolResult[object]:
    if isinstance(value, ToolResult):
        return cast("ToolResult[object]", value)  # any ToolResult: its text is an object
    return ToolResult(value)


def _function_input(fn: Callable[..., Any]) -> tuple[bool, bool, type[Any]]:
    """(takes ctx first, takes one typed input object, the input type)."""
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except NameError as error:
        raise ToolInputTypeError(
            f"@tool {fn.__name__}: cannot resolve a type annotation ({error}); with "
            "`from __future__ import annotations`, define input types at module level"
        ) from error
    params = list(inspect.signature(fn).parameters.values())
    wants_ctx = bool(params) and hints.get(params[0].name) is ExecutionContext
    if wants_ctx:
        params = params[1:]
    if len(params) == 1 and is_input_type(hints.get(params[0].name)):
        return wants_ctx, True, cast(type[Any], hints[params[0].name])
    fields: dict[str, Any] = {}
    for param in params:
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise ToolInputTypeError(f"@tool {fn.__name__}: *args/**kwargs are not supported")
        annotation = hints.get(param.name, Any)
        default = ... if param.default is param.empty else param.default
        fields[param.name] = (annotation, default)
    try:
        model = pydantic.create_model(
            _camel(fn.__name__) + "Input", __config__=pydantic.ConfigDict(extra="forbid"), **fields
        )
    except pydantic.PydanticUserError as error:  # its advice (model_config) is not for users
        annotations = {name: annotation for name, (annotation, _) in fields.items()}
        raise unmodelled(error, annotations, f"@tool {fn.__name__}", kind="parameter") from None
    return wants_ctx, False, cast(type[Any], model)


def _camel(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.split("_"))


def _docstring_parts(fn: Callable[..., Any]) -> str:
    doc = inspect.getdoc(fn) or ""
    return doc.split("\n\n", 1)[0].strip()


class _ToolDecorator(Protocol):
    @overload
    def __call__(
        self, fn: Callable[..., Awaitable[ToolResult[ValueT]]], /
    ) -> Tool[Any, ValueT]: ...

    @overload
    def __call__(self, fn: Callable[..., ToolResult[ValueT]], /) -> Tool[Any, ValueT]: ...

    @overload
    def __call__(self, fn: Callable[..., Awaitable[ValueT]], /) -> Tool[Any, ValueT]: ...

    @overload
    def __call__(self, fn: Callable[..., ValueT], /) -> Tool[Any, ValueT]: ...


@overload
def tool(fn: Callable[..., Awaitable[ToolResult[ValueT]]], /) -> Tool[Any, ValueT]: ...


@overload
def tool(fn: Callable[..., ToolResult[ValueT]], /) -> Tool[Any, ValueT]: ...


@overload
def tool(fn: Callable[..., Awaitable[ValueT]], /) -> Tool[Any, ValueT]: ...


@overload
def tool(fn: Callable[..., ValueT], /) -> Tool[Any, ValueT]: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    policy: str = "",
    timeout: float | None = None,
    inline: bool = False,
    idempotent: bool = False,
    requires_approval: bool | Callable[[Any], object] = False,
    max_concurrency: int | None = None,
) -> _ToolDecorator: ...


def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    policy: str = "",
    timeout: float | None = None,
    inline: bool = False,
    idempotent: bool = False,
    requires_approval: bool | Callable[[Any], object] = False,
    max_concurrency: int | None = None,
) -> Tool[Any, Any] | _ToolDecorator:
    """Build a ``Tool`` from a typed function (sync or async).

    The function takes either one typed input object (model, dataclass, TypedDict,
    Struct) or plain typed parameters, optionally preceded by an ``ExecutionContext``.
    It returns a ``ToolResult`` or a bare value (wrapped for you). The name defaults to
    the function's, the description to its docstring's first paragraph.
    ``requires_approval`` and ``max_concurrency`` are `Tool`'s (a predicate gets the
    validated input: the parameters as attributes).

    >>> @tool(requires_approval=lambda order: order.amount > 100)
    ... def refund(order_id: str, amount: int) -> str:
    ...     '''Refund an order.'''
    ...     return f"refunded {amount}"
    >>> refund.requires_approval(refund.codec.validate({"order_id": "A1", "amount": 250}))
    True
    >>> @tool
    ... def add(a: int, b: int = 1) -> int:
    ...     '''Add two integers.'''
    ...     return a + b
    >>> add.name, add.description, sorted(add.input_schema()["properties"])
    ('add', 'Add two integers.', ['a', 'b'])
    """

    def build(function: Callable[..., Any]) -> Tool[Any, Any]:
        text = description if description is not None else _docstring_parts(function)
        if not text:
            raise ToolDefinitionError(
                f"@tool {function.__name__}: give a description= or a docstring; "
                "the model needs it to choose the tool"
            )
        made = _FunctionTool(
            function,
            name=name or function.__name__,
            description=text,
            policy=policy,
            timeout=timeout,
            inline=inline,
            idempotent=idempotent,
            requires_approval=requires_approval,
            max_concurrency=max_concurrency,
        )
        _check_controls(f"@tool {function.__name__}", requires_approval, max_concurrency)
        return made

    if fn is not None:
        return build(fn)
    return cast(_ToolDecorator, build)
