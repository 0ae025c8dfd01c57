"""Argument, result and answer matchers (`agents.evals.matchers`)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from agents.evals.matchers import (
    AnswerCheck,
    Equals,
    MatcherSpecError,
    Regex,
    SchemaValid,
    Subset,
    TextCheck,
    import_object,
    value_matcher,
)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)


@given(json_values)
def test_every_value_equals_itself_and_holds_itself_as_a_subset(value: object) -> None:
    assert Equals(value).check(value) is None
    assert Subset(value).check(value) is None
    assert value_matcher({"equals": value}, "x").check(value) is None


@given(
    st.dictionaries(st.text(max_size=8), json_values, max_size=5), st.text(max_size=8), json_values
)
def test_a_mapping_with_more_keys_still_holds_the_subset(
    mapping: dict[str, object], key: str, extra: object
) -> None:
    bigger = {**mapping, key: extra} if key not in mapping else mapping
    assert Subset(mapping).check(bigger) is None


@given(st.text(max_size=40))
def test_an_escaped_string_matches_itself(text: str) -> None:
    assert Regex(re.compile(re.escape(text))).check(text) is None


@given(st.integers(min_value=0))
def test_schema_accepts_what_it_describes(number: int) -> None:
    assert SchemaValid.of({"type": "integer", "minimum": 0}).check(number) is None


def test_booleans_are_not_numbers() -> None:
    assert Equals(1).check(True) == "expected 1, got True"
    assert Equals({"a": [1, True]}).check({"a": [1, 1]}) is not None


def test_a_subset_failure_names_the_path() -> None:
    problem = Subset({"a": {"b": 1}}).check({"a": {"b": 2}})
    assert problem == "at a.b: expected 1, got 2"
    assert Subset({"a": 1}).check({"b": 1}) == "at a: missing"
    assert Subset([{"id": 2}]).check([{"id": 1}]) == "no item matches {'id': 2}"
    assert Subset({"a": 1}).check([1]) == "expected a mapping, got [1]"


def test_regex_reads_non_strings_as_json() -> None:
    assert Regex(re.compile(r'"k": 1')).check({"k": 1}) is None


def test_schema_failures_say_where() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    problem = SchemaValid.of(schema).check({"n": "x"})
    assert problem == "not valid against the schema at /n: 'x' is not of type 'integer'"


def test_matcher_specs() -> None:
    assert isinstance(value_matcher("a", "w"), Equals)
    assert isinstance(value_matcher({"subset": {"a": 1}}, "w"), Subset)
    assert isinstance(value_matcher({"regex": "a+"}, "w"), Regex)
    assert isinstance(value_matcher({"schema": {"type": "string"}}, "w"), SchemaValid)
    # a one-key mapping that is no matcher is the expected value itself
    assert value_matcher({"city": "Paris"}, "w").check({"city": "Paris"}) is None


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"regex": "("}, "args.x.regex: not a valid regular expression"),
        ({"regex": 3}, "args.x.regex: expected a string, got int"),
        ({"schema": "string"}, "args.x: schema: expected a mapping, got str"),
        ({"schema": {"type": 12}}, "args.x: schema: not a valid JSON Schema"),
    ],
)
def test_malformed_specs_name_their_key(spec: object, message: str) -> None:
    with pytest.raises(MatcherSpecError) as raised:
        value_matcher(spec, "args.x")
    assert str(raised.value).startswith(message)


def test_text_checks() -> None:
    check = TextCheck.from_spec(
        {"contains": ["a", "b"], "not_contains": "z", "regex": r"^\w+$"}, "result"
    )
    assert check.check("ab") == []
    assert check.check("a z!") == [
        "does not contain 'b'",
        "contains 'z'",
        "does not match /^\\w+$/",
    ]
    with pytest.raises(MatcherSpecError, match=r"result.contains: expected a string or a list"):
        TextCheck.from_spec({"contains": [1]}, "result")


class Fare(BaseModel):
    amount: int
    currency: str


def cheap(answer: str) -> bool | str:
    return True if "12" in answer else "too expensive"


def broken(answer: str) -> bool:
    raise RuntimeError("oops")


def test_typed_answers_parse_whole_fenced_or_embedded_json() -> None:
    check = AnswerCheck(model=Fare)
    assert check.check('{"amount": 12, "currency": "USD"}') == []
    assert check.check('Here:\n```json\n{"amount": 12, "currency": "USD"}\n```') == []
    assert check.check('It is {"amount": 12, "currency": "USD"}.') == []
    [problem] = check.check('{"amount": 12}')
    assert problem == "the answer is no valid Fare: currency: Field required"


def test_predicates_pass_fail_or_explain() -> None:
    assert AnswerCheck(predicate=cheap, predicate_name="m:cheap").check("12 USD") == []
    assert AnswerCheck(predicate=cheap, predicate_name="m:cheap").check("99") == [
        "predicate m:cheap: too expensive"
    ]
    assert AnswerCheck(predicate=lambda a: False, predicate_name="p").check("x") == [
        "predicate p rejected the answer"
    ]
    assert AnswerCheck(predicate=broken, predicate_name="p").check("x") == [
        "predicate p raised RuntimeError: oops"
    ]


def test_import_paths() -> None:
    assert import_object(f"{__name__}:Fare", "answer.model") is Fare
    assert import_object(f"{__name__}.cheap", "answer.predicate") is cheap
    with pytest.raises(MatcherSpecError, match="cannot import no_such_module"):
        import_object("no_such_module:x", "answer.model")
    with pytest.raises(MatcherSpecError, match="not of the form"):
        import_object("justaname", "answer.model")
