"""Numbers JSON cannot carry never reach a tool: NaN, the infinities, 1e400 and digits
other than ASCII are refused as that call's error, whatever read the call and whatever
the tool's input type, and the message says what to write instead."""

from __future__ import annotations

import dataclasses
from typing import Any

import msgspec
import pydantic
import pytest
from typing_extensions import TypedDict

from formats import XMLFormat
from toolchain import (
    DialectToolChain,
    ExecutionContext,
    JSONToolChain,
    Tool,
    ToolChainResult,
    ToolResult,
    YAMLToolChain,
    tool,
)

RULE = "must be a finite number written in ASCII digits"
# Digits other than ASCII, which Python's int() and float() read: Arabic-Indic 3 and
# 12.5, fullwidth 12.
THREE, ARABIC, FULLWIDTH = "\u0663", "\u0661\u0662.\u0665", "\uff11\uff12"
paid: list[object] = []


# -- one tool per input type, each with a float, an int and nested numbers ---------------


class PaymentModel(pydantic.BaseModel):
    amount: float
    count: int = 1
    split: list[float] = []
    rates: dict[str, float] = {}
    point: tuple[float, int] = (0.0, 0)
    tip: float | None = None


@dataclasses.dataclass
class PaymentData:
    amount: float
    count: int = 1
    split: list[float] = dataclasses.field(default_factory=list[float])
    rates: dict[str, float] = dataclasses.field(default_factory=dict[str, float])
    point: tuple[float, int] = (0.0, 0)
    tip: float | None = None


class PaymentDict(TypedDict, total=False):
    amount: float
    count: int
    split: list[float]
    rates: dict[str, float]
    point: tuple[float, int]
    tip: float | None


class PaymentStruct(msgspec.Struct):
    amount: float
    count: int = 1
    split: list[float] = []
    rates: dict[str, float] = {}
    point: tuple[float, int] = (0.0, 0)
    tip: float | None = None


class _Pays:
    """The body every input type's tool shares: note what arrived, answer "paid"."""

    def call(self, ctx: ExecutionContext, input: object) -> ToolResult[str]:
        paid.append(input)
        return ToolResult("paid")


class PayModel(_Pays, Tool[PaymentModel, str]):
    name = "pay_model"
    description = "Pay (a pydantic model)."


class PayData(_Pays, Tool[PaymentData, str]):
    name = "pay_data"
    description = "Pay (a dataclass)."


class PayDict(_Pays, Tool[PaymentDict, str]):
    name = "pay_dict"
    description = "Pay (a TypedDict)."


class PayStruct(_Pays, Tool[PaymentStruct, str]):
    name = "pay_struct"
    description = "Pay (a msgspec Struct)."


@tool
def pay_function(
    amount: float,
    count: int = 1,
    split: list[float] | None = None,
    rates: dict[str, float] | None = None,
    point: tuple[float, int] = (0.0, 0),
    tip: float | None = None,
) -> str:
    """Pay (a function)."""
    paid.append(amount)
    return "paid"


INPUT_TYPES = ["pay_model", "pay_data", "pay_dict", "pay_struct", "pay_function"]
TOOLS: list[Any] = [PayModel(), PayData(), PayDict(), PayStruct(), pay_function]


def run(chain: JSONToolChain | YAMLToolChain | DialectToolChain, content: str) -> ToolChainResult:
    paid.clear()
    for each in TOOLS:
        if each.name not in chain.registry:
            chain.register_tool(each)
    return chain.execute_sync(ExecutionContext(), content, XMLFormat())


def refused(result: ToolChainResult, where: str) -> str:
    """The one call's error, checked to be the rule for ``where``; the tool never ran."""
    assert paid == [], "the tool was called"
    (error,) = result.raw.errors
    assert error is not None
    assert f"{where}: {RULE}" in error.message, error.message
    assert f"{where}: {RULE}" in result.text  # and the model reads it
    return error.message


# Arguments as JSON writes them (strings where JSON has no such number): the strings
# pydantic and msgspec would read into a float field, and digits Python's int() reads.
JSON_ARGS: list[tuple[str, dict[str, object]]] = [
    ("amount", {"amount": "NaN"}),
    ("amount", {"amount": "nan"}),
    ("amount", {"amount": "Infinity"}),
    ("amount", {"amount": "-Infinity"}),
    ("amount", {"amount": "inf"}),
    ("amount", {"amount": "1e400"}),
    ("amount", {"amount": THREE}),
    ("amount", {"amount": ARABIC}),
    ("amount", {"amount": FULLWIDTH}),
    ("count", {"amount": 1, "count": THREE}),
    ("count", {"amount": 1, "count": FULLWIDTH}),
    ("split.1", {"amount": 1, "split": [1.5, "NaN"]}),
    ("rates.eur", {"amount": 1, "rates": {"usd": 1.0, "eur": "Infinity"}}),
    ("point.0", {"amount": 1, "point": ["-Infinity", 2]}),
    ("point.1", {"amount": 1, "point": [1.5, THREE]}),
    ("tip", {"amount": 1, "tip": "NaN"}),
]


@pytest.mark.parametrize("name", INPUT_TYPES)
@pytest.mark.parametrize(("where", "args"), JSON_ARGS)
def test_json_chain_refuses_numbers_json_cannot_carry(
    name: str, where: str, args: dict[str, object]
) -> None:
    result = run(JSONToolChain(), msgspec.json.encode({"tool": name, "args": args}).decode())
    message = refused(result, where)
    assert result.raw.errors[0] is not None
    assert result.raw.errors[0].kind == "invalid_arguments"
    assert message.startswith(f"invalid arguments for {name}: ")


# YAML has its own spellings, read as floats before any validator sees them.
YAML_ARGS = [
    ("amount", "amount: .nan"),
    ("amount", "amount: .inf"),
    ("amount", "amount: -.Inf"),
    ("amount", "amount: 1e400"),
    ("amount", f"amount: {THREE}"),
    ("split.0", "amount: 1\n    split: [.nan, 2]"),
    ("rates.usd", "amount: 1\n    rates: {usd: -.inf}"),
]


@pytest.mark.parametrize("name", INPUT_TYPES)
@pytest.mark.parametrize(("where", "args"), YAML_ARGS)
def test_yaml_chain_refuses_numbers_json_cannot_carry(name: str, where: str, args: str) -> None:
    result = run(YAMLToolChain(), f"- tool: {name}\n  args:\n    {args}")
    refused(result, where)


@pytest.mark.parametrize("name", INPUT_TYPES)
def test_finite_ascii_numbers_and_texts_that_spell_words_still_pass(name: str) -> None:
    args = {"amount": "12.5", "count": "3", "split": [1, 2.5], "rates": {"nan": 1.0}}
    result = run(JSONToolChain(), msgspec.json.encode({"tool": name, "args": args}).decode())
    assert result.raw.errors == (None,)
    assert len(paid) == 1


def test_text_parameters_keep_what_spells_nan_or_foreign_digits() -> None:
    @tool
    def note(text: str, tags: list[str]) -> str:
        """Keep a note."""
        paid.append((text, tags))
        return "kept"

    chain = JSONToolChain().register_tool(note)
    paid.clear()
    args = {"text": f"Nan's {THREE} apples, Infinity", "tags": ["NaN", FULLWIDTH, "inf"]}
    action = msgspec.json.encode({"tool": "note", "args": args}).decode()
    result = chain.execute_sync(ExecutionContext(), action, XMLFormat())
    assert result.raw.errors == (None,)
    assert paid == [(f"Nan's {THREE} apples, Infinity", ["NaN", FULLWIDTH, "inf"])]


def test_a_text_parameter_beside_a_number_keeps_what_reads_as_a_number() -> None:
    # The flat-arguments shortcut skips strings under text parameters (a date, an id
    # "042", "1e400"); a number parameter beside them is still checked.
    @tool
    def book(day: str, ref: str, amount: float) -> str:
        """Book a slot."""
        paid.append((day, ref, amount))
        return "booked"

    chain = JSONToolChain().register_tool(book)
    paid.clear()
    ok = {"day": "2026-01-27", "ref": "1e400", "amount": 12.5}
    action = msgspec.json.encode({"tool": "book", "args": ok}).decode()
    result = chain.execute_sync(ExecutionContext(), action, XMLFormat())
    assert result.raw.errors == (None,)
    assert paid == [("2026-01-27", "1e400", 12.5)]
    bad = {"day": "2026-01-27", "ref": "NaN", "amount": "NaN"}
    action = msgspec.json.encode({"tool": "book", "args": bad}).decode()
    result = chain.execute_sync(ExecutionContext(), action, XMLFormat())
    error = result.raw.errors[0]
    assert error is not None and error.kind == "invalid_arguments"
    assert error.message == (
        "invalid arguments for book: amount: must be a finite number written in ASCII "
        "digits (got 'NaN')"
    )
    assert len(paid) == 1


# -- every reader of native formats -----------------------------------------------------

BAR = "\uff5c"
# How each family writes `pay(amount=…)`; `{v}` is the number as the model wrote it
# (inside a JSON string where the family's arguments are JSON, which has no NaN).
READERS = {
    "hermes": '<tool_call>{{"name": "pay_model", "arguments": {{"amount": "{v}"}}}}</tool_call>',
    "qwen3_coder": "<function=pay_model><parameter=amount>{v}</parameter></function>",
    "seed_oss": (
        "<seed:tool_call><function=pay_model><parameter=amount>{v}</parameter></function>"
        "</seed:tool_call>"
    ),
    "glm": (
        "<tool_call>pay_model\n<arg_key>amount</arg_key>\n<arg_value>{v}</arg_value>\n</tool_call>"
    ),
    "invoke_xml": (
        '<minimax:tool_call><invoke name="pay_model"><parameter name="amount">{v}</parameter>'
        "</invoke></minimax:tool_call>"
    ),
    "dsml": (
        f'<{BAR}DSML{BAR}function_calls><{BAR}DSML{BAR}invoke name="pay_model">'
        f'<{BAR}DSML{BAR}parameter name="amount" string="false">{{v}}</{BAR}DSML{BAR}parameter>'
        f"</{BAR}DSML{BAR}invoke></{BAR}DSML{BAR}function_calls>"
    ),
    "generic_xml": "<tool><name>pay_model</name><arguments><amount>{v}</amount></arguments></tool>",
    "pythonic": "[pay_model(amount={v})]",
    "lfm2": "<|tool_call_start|>[pay_model(amount={v})]<|tool_call_end|>",
    "olmo3": "<function_calls>\npay_model(amount={v})\n</function_calls>",
    "gemma": "<|tool_call>call:pay_model{{amount:{v}}}<tool_call|>",
    "react": 'Action: pay_model\nAction Input: {{"amount": {v}}}',
    "mistral": '[TOOL_CALLS]pay_model{{"amount": "{v}"}}',
    "kimi_k2": (
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.pay_model:0"
        '<|tool_call_argument_begin|>{{"amount": "{v}"}}<|tool_call_end|>'
        "<|tool_calls_section_end|>"
    ),
}
WRITTEN = ["NaN", "Infinity", "-Infinity", "1e400", THREE, ARABIC, FULLWIDTH]


@pytest.mark.parametrize("family", READERS)
@pytest.mark.parametrize("number", WRITTEN)
def test_every_reader_refuses_numbers_json_cannot_carry(family: str, number: str) -> None:
    # Readers that type text by the schema read an Arabic-Indic 3 as 3, and "NaN" as a
    # string pydantic turned into nan; readers of Python-style values refuse such a
    # value themselves.
    result = run(DialectToolChain(), READERS[family].format(v=number))
    refused(result, "amount")


@pytest.mark.parametrize("family", ["hermes", "mistral", "react"])
def test_a_json_number_too_large_for_a_float_is_refused(family: str) -> None:
    # JSON's decoder reads 1e400 as infinity.
    text = READERS[family].format(v="1e400").replace('"1e400"', "1e400")
    refused(run(DialectToolChain(), text), "amount")
