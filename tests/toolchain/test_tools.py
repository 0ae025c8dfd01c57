"""Defining tools: input types, schemas, @tool, registration errors, prompts."""

from __future__ import annotations

import dataclasses
import sys
import typing

import pytest
from pydantic import BaseModel, ConfigDict, TypeAdapter

from formats import XMLFormat
from tests.support.tools import Flight, Policy, SeatMap, Weather, add
from toolchain import (
    DuplicateToolError,
    ExecutionContext,
    JSONToolChain,
    StateKey,
    Tool,
    ToolDefinitionError,
    ToolInputTypeError,
    ToolResult,
    YAMLToolChain,
    tool,
)


@pytest.mark.parametrize(
    ("instance", "input_type"),
    [(Weather(), "CityIn"), (Flight(), "FlightIn"), (Policy(), "PolicyIn"), (SeatMap(), "SeatIn")],
)
def test_input_type_is_read_from_the_generic_parameters(
    instance: Tool[typing.Any, typing.Any], input_type: str
) -> None:
    assert instance.input_type.__name__ == input_type
    schema = instance.input_schema()
    assert schema["type"] == "object"
    assert "title" not in schema


def test_schema_keeps_descriptions_and_defaults() -> None:
    schema = Weather().input_schema()
    assert schema == {
        "properties": {
            "city": {"description": "City name, e.g. Paris", "type": "string"},
            "days": {"default": 1, "type": "integer"},
        },
        "required": ["city"],
        "type": "object",
    }


def test_a_non_object_input_type_is_rejected_at_class_creation() -> None:
    with pytest.raises(ToolInputTypeError, match="must be a pydantic model"):

        class Bad(Tool[int, str]):  # type: ignore[type-var,unused-ignore]
            name = "bad"
            description = "bad"

            def call(self, ctx: ExecutionContext, input: int) -> ToolResult[str]:
                return ToolResult("")


def test_duplicate_names_are_rejected_at_registration() -> None:
    chain = JSONToolChain().register_tool(Weather())
    with pytest.raises(DuplicateToolError, match="'get_weather' is already registered"):
        chain.register_tool(Weather())


def test_invalid_tool_names_are_rejected() -> None:
    with pytest.raises(ToolDefinitionError, match="tool name 'get weather' is invalid"):

        @tool(name="get weather")
        def weather(city: str) -> str:
            """Weather."""
            return city


def test_tool_decorator_needs_a_description() -> None:
    with pytest.raises(ToolDefinitionError, match="description"):

        @tool
        def nameless(x: int) -> int:
            return x


def test_tool_decorator_with_parameters_forbids_unknown_arguments() -> None:
    chain = JSONToolChain().register_tool(add)
    result = chain.execute_sync(
        ExecutionContext(), '{"tool": "add", "args": {"a": 1, "c": 2}}', XMLFormat()
    )
    error = result.raw.errors[0]
    assert error is not None
    assert error.message == "invalid arguments for add: c: Extra inputs are not permitted (got 2)"


class Query(BaseModel):
    text: str


@dataclasses.dataclass
class Pair:
    left: int
    right: int


def test_unresolvable_annotations_get_a_clear_error() -> None:
    with pytest.raises(ToolInputTypeError, match="define input types at module level"):

        @tool
        def local(x: LocalOnly) -> int:  # type: ignore[name-defined]  # noqa: F821
            """Uses a name that does not exist."""
            return 0


async def test_tool_decorator_with_context_and_model_input_async() -> None:
    @tool(name="search", description="Search things.", policy="Use sparingly.")
    async def search(ctx: ExecutionContext, query: Query) -> ToolResult[list[str]]:
        return ToolResult([query.text, ctx.name])

    assert search.is_async
    assert search.policy == "Use sparingly."
    result = (
        await JSONToolChain()
        .register_tool(search)
        .execute(
            ExecutionContext(name="run-7"),
            '{"tool": "search", "args": {"text": "hi"}}',
            XMLFormat(),
        )
    )
    assert result.raw.results[0] is not None
    assert result.raw.results[0].output == ["hi", "run-7"]


def test_tool_decorator_with_dataclass_input() -> None:
    @tool
    def multiply(pair: Pair) -> int:
        """Multiply."""
        return pair.left * pair.right

    assert multiply.input_type is Pair
    result = (
        JSONToolChain()
        .register_tool(multiply)
        .execute_sync(
            ExecutionContext(), '{"tool": "multiply", "args": {"left": 6, "right": 7}}', XMLFormat()
        )
    )
    assert result.raw.results[0] is not None
    assert result.raw.results[0].output == 42


@pytest.mark.parametrize(
    ("chain", "expected"),
    [
        (
            JSONToolChain(),
            "- get_weather: Current weather for a city.\n"
            "  Policy: Use only for cities the user named.\n"
            "  Parameters:\n"
            '    {"properties":{"city":{"description":"City name, e.g. Paris","type":"string"},'
            '"days":{"default":1,"type":"integer"}},"required":["city"],"type":"object"}',
        ),
        (
            YAMLToolChain(),
            "- get_weather: Current weather for a city.\n"
            "  Policy: Use only for cities the user named.\n"
            "  Parameters:\n"
            "    properties:\n"
            "      city:\n"
            "        description: City name, e.g. Paris\n"
            "        type: string\n"
            "      days:\n"
            "        default: 1\n"
            "        type: integer\n"
            "    required:\n"
            "    - city\n"
            "    type: object",
        ),
    ],
    ids=["json", "yaml"],
)
def test_available_tools_prompt(chain: JSONToolChain | YAMLToolChain, expected: str) -> None:
    assert chain.register_tool(Weather()).available_tools_prompt() == expected


def test_the_listing_follows_a_tool_changed_after_it_was_listed() -> None:
    # Entries are made once per tool; a tool whose description or policy changes, or a
    # tool registered again under the same name, is listed as it is now.
    chain = JSONToolChain().register_tool(Weather())
    first = chain.available_tools_prompt()
    tool = chain.registry["get_weather"]
    tool.description = "Weather of a city, now or tomorrow."
    tool.policy = "Only for cities in Europe."
    now = chain.available_tools_prompt()
    assert "- get_weather: Weather of a city, now or tomorrow." in now
    assert "Policy: Only for cities in Europe." in now
    assert now != first
    again = JSONToolChain().register_tool(Weather())
    assert again.available_tools_prompt() == first


def test_a_narrowed_listing_keeps_the_chains_order_whatever_the_names_order() -> None:
    # A few names are picked by name, many by filtering every tool: the same listing.
    chain = YAMLToolChain()
    for each in (Weather(), Flight(), SeatMap(), add):
        chain.register_tool(each)
    entries = chain.available_tools_prompt().split("\n\n")
    names = [entry.split(":")[0][2:] for entry in entries]
    few = chain.available_tools_prompt([names[3], "nope", names[0], names[3]])
    assert few == entries[0] + "\n\n" + entries[3]
    many = [*reversed(names), *(f"missing_{n}" for n in range(10))]
    assert chain.available_tools_prompt(many) == chain.available_tools_prompt()
    assert chain.available_tools_prompt([]) == ""


def test_chain_is_a_section_that_registers_on_a_format() -> None:
    chain = YAMLToolChain().register_tool(Weather())
    fmt = XMLFormat().register_section(chain)
    assert chain.name == "action"
    assert "- tool: tool_name" in fmt.describe_structure()
    parsed = fmt.parse("<action>\n- tool: get_weather\n  args: {city: Paris}\n</action>")
    assert chain.parse_section(parsed["action"][0])[0].name == "get_weather"  # type: ignore[union-attr]


def test_generic_results_can_be_built_with_explicit_type_arguments() -> None:
    result = ToolResult[dict[str, int]]({"a": 1}, instructions="x")
    assert result.text == {"a": 1}
    key = StateKey[int]("attempts")
    assert key.name == "attempts"


# -- the slips a new user makes first (issue 17, item 12) --------------------------------


class Connection:
    """A class pydantic cannot describe: no JSON Schema, no validation."""


class TypingDict(typing.TypedDict):  # typing's, which pydantic refuses before Python 3.12
    city: str


def test_registering_a_tool_class_says_to_register_an_instance() -> None:
    with pytest.raises(ToolDefinitionError) as raised:
        JSONToolChain().register_tool(Weather)  # type: ignore[arg-type]
    assert str(raised.value) == "Weather is a Tool class; register an instance: Weather()"


def test_registering_a_plain_function_says_to_decorate_it() -> None:
    def plain(city: str) -> str:
        """Weather."""
        return city

    with pytest.raises(ToolDefinitionError, match=r"^plain is a function, not a Tool: .*@tool"):
        JSONToolChain().register_tool(plain)  # type: ignore[arg-type]


def test_a_parameter_type_tool_cannot_model_is_our_error_naming_it() -> None:
    with pytest.raises(ToolInputTypeError) as raised:

        @tool
        def query(db: Connection, sql: str) -> str:
            """Run SQL."""
            return sql

    message = str(raised.value)
    assert message.startswith("@tool query: parameter 'db' (Connection) cannot be a tool's input")
    assert "pydantic model, dataclass, TypedDict or msgspec Struct" in message
    assert "model_config" not in message and "arbitrary_types_allowed" not in message


def test_a_field_type_tool_cannot_model_is_our_error_naming_it() -> None:
    @dataclasses.dataclass
    class Request:
        sql: str
        db: Connection

    class Run(Tool[Request, str]):
        name = "run"
        description = "Run SQL."

        def call(self, ctx: ExecutionContext, input: Request) -> ToolResult[str]:
            return ToolResult(input.sql)

    with pytest.raises(ToolInputTypeError, match=r"^tool input Request: field 'db' \(Connection\)"):
        JSONToolChain().register_tool(Run())


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="pydantic reads typing.TypedDict")
def test_a_typing_typeddict_on_python_3_11_says_to_use_typing_extensions() -> None:
    with pytest.raises(ToolInputTypeError) as raised:

        @tool
        def forecast(days: int, where: TypingDict) -> str:
            """Forecast."""
            return where["city"]

    assert str(raised.value) == (
        "@tool forecast: parameter 'where' (TypingDict) is a typing.TypedDict, which pydantic "
        "reads only from Python 3.12; on Python 3.11 use typing_extensions.TypedDict"
    )

    @tool
    def whole(where: TypingDict) -> str:
        """Forecast."""
        return where["city"]

    with pytest.raises(ToolInputTypeError, match=r"^tool input TypingDict: TypingDict is a typ"):
        JSONToolChain().register_tool(whole)


class LaterRoom(BaseModel):
    model_config = ConfigDict(defer_build=True)  # pydantic builds its validator on first use

    floor: int


class BookRoom(Tool[LaterRoom, str]):
    name = "book"
    description = "Book a room."

    async def call(self, ctx: ExecutionContext, input: LaterRoom) -> ToolResult[str]:
        return ToolResult(f"floor {input.floor}")


def test_an_input_model_built_on_first_use_validates_and_refuses() -> None:
    # Validation calls the adapter's core validator directly: a deferred model's is a
    # stand-in until built, which must validate and refuse as the built one does.
    chain, fmt = JSONToolChain().register_tool(BookRoom()), XMLFormat()
    ok = chain.execute_sync(ExecutionContext(), '{"tool": "book", "args": {"floor": "3"}}', fmt)
    assert ok.raw.errors == (None,)
    assert ok.observations[0].text == "floor 3"
    bad = chain.execute_sync(ExecutionContext(), '{"tool": "book", "args": {"floor": "x"}}', fmt)
    error = bad.raw.errors[0]
    assert error is not None and error.kind == "invalid_arguments"
    assert error.message.startswith("invalid arguments for book: floor: ")


def test_tools_of_one_input_type_share_its_schema(monkeypatch: pytest.MonkeyPatch) -> None:
    """The schema is made once per input type, not per tool object: an agent built per
    request with a fresh extension (its tools new objects of the same input types) does
    not have pydantic make them again every run."""
    from toolchain.relay import ContextRelay

    made: list[object] = []
    generate = TypeAdapter[object].json_schema

    def counted(self: TypeAdapter[object], *args: object, **kwargs: object) -> object:
        made.append(self)
        return generate(self, *args, **kwargs)  # type: ignore[arg-type]  # passed on as given

    monkeypatch.setattr(TypeAdapter, "json_schema", counted)

    class Lookup(BaseModel):
        key: str

    class Find(Tool[Lookup, str]):
        description = "Find a record."

        def __init__(self, name: str) -> None:
            self.name = name

        def call(self, ctx: ExecutionContext, input: Lookup) -> ToolResult[str]:
            return ToolResult(input.key)

    first, second = Find("find"), Find("find_again")
    assert first.input_schema() is second.input_schema()
    assert len(made) == 1  # one schema made, for the two tools
    made.clear()
    schemas = [t.input_schema() for t in ContextRelay().tools()]
    assert [t.input_schema() for t in ContextRelay().tools()] == schemas
    # A second relay's tools are new objects: their schemas were not made again.
    assert len(made) <= len(schemas)


def test_a_listing_writes_a_schema_once_for_every_chain(monkeypatch: pytest.MonkeyPatch) -> None:
    """A chain (or agent) made per request lists tools whose input types it listed
    before: the prompt schema is one object per input schema, and its YAML is written
    once, whichever chain lists it."""
    from toolchain._observations import to_yaml

    written: list[object] = []

    def counted(value: object) -> str:
        written.append(value)
        return to_yaml(value)

    monkeypatch.setattr("toolchain._syntax._yaml.to_yaml", counted)

    class Booking(BaseModel):
        room: str
        seats: int | None = None

    class Book(Tool[Booking, str]):
        description = "Book a room."
        name = "book"

        def call(self, ctx: ExecutionContext, input: Booking) -> ToolResult[str]:
            return ToolResult(input.room)

    assert Book().prompt_schema() is Book().prompt_schema()
    assert Book().prompt_schema()["properties"] == {  # still the compact form
        "room": {"type": "string"},
        "seats": {"type": "integer"},
    }
    listings = [YAMLToolChain().register_tool(Book()).available_tools_prompt() for _ in range(3)]
    assert len(written) == 1
    assert listings[0] == listings[1] == listings[2]
    assert "room:" in listings[0]
