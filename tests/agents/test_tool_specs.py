"""Tool specs for native calling: schemas are strict only when they can be held to as is."""

from __future__ import annotations

import pydantic

from agents._tool_specs import strict_parameters, tool_spec
from toolchain import ExecutionContext, Tool, ToolResult, tool


class Address(pydantic.BaseModel):
    city: str
    zip_code: str


class Order(pydantic.BaseModel):
    item: str
    quantity: int
    ship_to: Address
    tags: list[str]


class Search(pydantic.BaseModel):
    query: str
    limit: int = 10


class OrderTool(Tool[Order, str]):
    name = "place_order"
    description = "Place an order."
    policy = "Only for signed-in users."

    def call(self, ctx: ExecutionContext, input: Order) -> ToolResult[str]:
        return ToolResult("ok")


class SearchTool(Tool[Search, str]):
    name = "search"
    description = "Search."

    def call(self, ctx: ExecutionContext, input: Search) -> ToolResult[str]:
        return ToolResult("ok")


def test_a_schema_of_required_fields_is_closed_everywhere_and_strict() -> None:
    spec = tool_spec(OrderTool())
    assert spec.strict
    assert spec.description == "Place an order.\n\nPolicy: Only for signed-in users."
    params = spec.parameters
    assert params["additionalProperties"] is False
    defs = params["$defs"]
    assert isinstance(defs, dict)
    assert defs["Address"]["additionalProperties"] is False
    # The tool's own schema is left as it was.
    assert "additionalProperties" not in OrderTool().input_schema()


def test_optional_fields_keep_the_schema_as_written_and_not_strict() -> None:
    spec = tool_spec(SearchTool())
    assert not spec.strict
    assert spec.parameters == SearchTool().input_schema()


def test_a_function_tool_with_a_default_is_not_strict() -> None:
    @tool
    def greet(name: str, punctuation: str = "!") -> str:
        """Greet someone."""
        return name + punctuation

    assert not tool_spec(greet).strict


def test_open_objects_and_unknown_keywords_are_not_strict() -> None:
    closed = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}
    assert strict_parameters(closed) is not None
    assert strict_parameters({**closed, "additionalProperties": True}) is None
    unknown = {**closed, "properties": {"a": {"type": "string", "minLength": 1}}}
    assert strict_parameters(unknown) is None
    assert strict_parameters({"type": "array", "items": {"type": "string"}}) is None
    nested_open = {
        "type": "object",
        "properties": {"inner": {"type": "object", "properties": {"x": {"type": "integer"}}}},
        "required": ["inner"],
    }
    assert strict_parameters(nested_open) is None
