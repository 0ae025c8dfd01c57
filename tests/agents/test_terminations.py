"""Terminations: any answer text ends in an answer or an ``AnswerRejected``, never a crash."""

from __future__ import annotations

import contextlib
import logging
from typing import Any, Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, field_validator, model_validator

from agents.models import ScriptedModel
from agents.react import ReActAgent
from agents.terminations import AnswerRejected, TextTermination, TypedTermination

SYNTAXES: list[Literal["json", "yaml"]] = ["json", "yaml"]


class Order(BaseModel):
    item: str
    quantity: int


class Picky(BaseModel):
    item: str

    @model_validator(mode="after")
    def look_up(self) -> Picky:
        raise KeyError("catalogue")


class FieldPicky(BaseModel):
    item: str

    @field_validator("item")
    @classmethod
    def first_letter(cls, value: str) -> str:
        return value[0] + "!"  # IndexError on an empty item


def broken(order: Order) -> str | None:
    (None,)[order.quantity]  # a bug: IndexError for any quantity but 0
    return None


GOOD = {"json": '{"item": "tea", "quantity": 2}', "yaml": "item: tea\nquantity: 2"}


# -- 2. unreadable answers ------------------------------------------------------------


@pytest.mark.parametrize(
    ("syntax", "opener"),
    [
        ("json", "["),
        ("json", '{"a": '),
        ("yaml", "["),
        ("yaml", "{"),
        ("yaml", "{a: "),
        ("yaml", "- "),
    ],
)
def test_deeply_nested_answer_is_rejected_not_a_recursion_error(
    syntax: Literal["json", "yaml"], opener: str
) -> None:
    with pytest.raises(AnswerRejected) as rejected:
        TypedTermination(Order, syntax=syntax).parse_section(opener * 100_000)
    message = str(rejected.value)
    assert message.startswith(f"the answer is not valid {syntax.upper()}: ")
    assert "nested more than 64 levels deep" in message


def test_deep_json_answer_says_it_is_nested_too_deeply() -> None:
    with pytest.raises(AnswerRejected) as rejected:
        TypedTermination(Order).parse_section("[" * 100_000)
    assert str(rejected.value) == (
        "the answer is not valid JSON: it is nested more than 64 levels deep; write flatter values"
    )


@pytest.mark.parametrize("syntax", SYNTAXES)
def test_sixty_four_levels_are_read_and_sixty_five_refused(
    syntax: Literal["json", "yaml"],
) -> None:
    """The limit is ours: 64 levels reach validation, 65 are refused in our words."""
    termination = TypedTermination(Order, syntax=syntax)
    with pytest.raises(AnswerRejected, match="does not match the schema"):
        termination.parse_section("[" * 64 + "]" * 64)
    with pytest.raises(AnswerRejected, match="nested more than 64 levels deep"):
        termination.parse_section("[" * 65 + "]" * 65)


@pytest.mark.parametrize("syntax", SYNTAXES)
def test_answer_with_a_huge_integer_is_rejected(syntax: Literal["json", "yaml"]) -> None:
    digits = "9" * 5000
    content = {
        "json": '{"item": "tea", "quantity": ' + digits + "}",
        "yaml": "item: tea\nquantity: " + digits,
    }[syntax]
    with pytest.raises(AnswerRejected, match=r"4300 digits|out of range"):
        TypedTermination(Order, syntax=syntax).parse_section(content)


@pytest.mark.parametrize("syntax", SYNTAXES)
def test_answer_with_a_lone_surrogate_is_rejected(syntax: Literal["json", "yaml"]) -> None:
    content = {"json": '{"item": "te\ud800a", "quantity": 2}', "yaml": "item: te\ud800a"}
    with pytest.raises(AnswerRejected, match="U\\+D800"):
        TypedTermination(Order, syntax=syntax).parse_section(content[syntax])


@pytest.mark.parametrize(
    "content", ["item: tea\nquantity: 0x_", "item: tea\nquantity: !!int abc", "item: !!bool x"]
)
def test_yaml_answer_with_an_unreadable_scalar_is_rejected(content: str) -> None:
    with pytest.raises(AnswerRejected) as rejected:
        TypedTermination(Order, syntax="yaml").parse_section(content)
    assert str(rejected.value).startswith("the answer ")


def test_unreadable_scalar_in_a_string_field_stays_text() -> None:
    answer = TypedTermination(Order, syntax="yaml").parse_section("item: 0x_\nquantity: 0x1F")
    assert answer == Order(item="0x_", quantity=31)


# -- 3. validators that raise -----------------------------------------------------------


def test_raising_validator_is_a_rejected_answer_and_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    done = TypedTermination(Order, validators=[broken])
    with (
        caplog.at_level(logging.WARNING, logger="agents"),
        pytest.raises(AnswerRejected) as rejected,
    ):
        done.parse_section(GOOD["json"])
    message = str(rejected.value)
    assert message.startswith("the answer could not be checked (the validator broken raised ")
    assert "IndexError" in message
    assert "Traceback" not in message and "list index out of range" not in message
    (record,) = [r for r in caplog.records if r.name == "agents"]
    assert record.levelno >= logging.WARNING
    assert record.exc_info is not None and record.exc_info[0] is IndexError
    assert "broken" in record.getMessage()


def test_validator_that_accepts_still_accepts() -> None:
    assert TypedTermination(Order, validators=[broken]).parse_section(
        '{"item": "tea", "quantity": 0}'
    ) == Order(item="tea", quantity=0)


def test_validator_raising_answer_rejected_passes_its_message_through() -> None:
    def strict(order: Order) -> str | None:
        raise AnswerRejected(f"we are out of {order.item}")

    with pytest.raises(AnswerRejected, match=r"^we are out of tea$"):
        TypedTermination(Order, validators=[strict]).parse_section(GOOD["json"])


@pytest.mark.parametrize(("model", "kind"), [(Picky, "KeyError"), (FieldPicky, "IndexError")])
def test_model_validator_raising_an_odd_exception_is_a_rejected_answer(
    model: Any, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    with (
        caplog.at_level(logging.WARNING, logger="agents"),
        pytest.raises(AnswerRejected) as rejected,
    ):
        TypedTermination(model).parse_section('{"item": ""}')
    assert str(rejected.value).startswith(
        f"the answer could not be checked (validating it as {model.__name__} raised {kind})"
    )
    assert any(r.name == "agents" and r.exc_info for r in caplog.records)


async def test_a_raising_validator_does_not_end_the_run() -> None:
    model = ScriptedModel(
        [
            '<answer>{"item": "tea", "quantity": 2}</answer>',
            '<answer>{"item": "tea", "quantity": 0}</answer>',
        ]
    )
    agent = ReActAgent(model, termination=TypedTermination(Order, validators=[broken]))
    result = await agent.run("Order tea")
    assert result.answer == Order(item="tea", quantity=0)
    assert len(result.steps) == 2
    feedback = result.steps[0].feedback
    assert feedback.startswith("answer rejected: the answer could not be checked (the validator ")
    assert "broken raised IndexError" in feedback


def test_text_termination_rejects_only_empty_answers() -> None:
    assert TextTermination().parse_section(" \ud800 ok ") == "\ud800 ok"
    with pytest.raises(AnswerRejected, match="empty"):
        TextTermination().parse_section("  \n ")


# -- 5. property: nothing but AnswerRejected ----------------------------------------------

PIECES = st.one_of(
    st.sampled_from(
        [
            '{"item": ',
            '"tea"',
            ', "quantity": ',
            "}",
            "item: ",
            "\nquantity: ",
            "[",
            "]",
            "{",
            "- ",
            ": ",
            "!!int ",
            "!!float ",
            "!!bool ",
            "!!python/object:os.system ",
            "&a ",
            "*a",
            "0x_",
            "0b_",
            "1:20",
            "1e99999",
            "maybe",
            "```json\n",
            "```\n",
            "\ud800",
            "\\ud800",
            "null",
        ]
    ),
    st.integers(4000, 6000).map(lambda n: "9" * n),
    st.tuples(st.sampled_from(["[", "{", '{"a": ', "- "]), st.integers(50, 5000)).map(
        lambda pair: pair[0] * pair[1]
    ),
    st.text(max_size=6),
    st.characters(categories=["Cs"]),
)
ANSWERS = st.lists(PIECES, max_size=10).map("".join)
TERMINATIONS: list[TypedTermination[Any]] = [
    TypedTermination(Order),
    TypedTermination(Order, syntax="yaml"),
    TypedTermination(Order, validators=[broken]),
    TypedTermination(Picky, syntax="yaml"),
]


@settings(max_examples=250, deadline=None)
@given(ANSWERS)
def test_parse_section_raises_only_answer_rejected(content: str) -> None:
    for termination in TERMINATIONS:
        with contextlib.suppress(AnswerRejected):
            termination.parse_section(content)
