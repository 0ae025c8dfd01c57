"""References to saved tool outputs: syntax, arguments, text, streams, hostile input.

Exact outputs and exact messages for each rule of the resolver in ``toolchain.variables``;
hypothesis properties (a stream gives the whole text's result for any split; text without
``$`` is unchanged; resolving twice changes nothing); linear work counted, not timed.
"""

from __future__ import annotations

import itertools
import pickle
from typing import Any, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolchain.variables import ReferenceProblem
from toolchain.variables._arguments import resolve_arguments
from toolchain.variables._problems import describe_fields
from toolchain.variables._text import MAX_PENDING, StreamResolver, resolve_text

NYC: dict[str, Any] = {
    "temperature": 72,
    "conditions": "sunny",
    "daily": [{"temp": 75, "rain": False}, {"temp": 70, "rain": True}, {"temp": 68}],
}
LONDON: dict[str, Any] = {"temperature": 58, "conditions": "rain", "daily": []}
VARIABLES: dict[str, object] = {
    "weather_nyc": NYC,
    "weather_london": LONDON,
    "city": "New York",
    "count": 3,
    "ratio": 0.5,
    "flag": True,
    "nothing": None,
    "empty": "",
    "total": 42,
    "one": [1],
}


DAILY = '[{"temp":75,"rain":false},{"temp":70,"rain":true},{"temp":68}]'


def resolved(value: object, variables: dict[str, object] = VARIABLES) -> object:
    """One argument's value after resolution."""
    return resolve_arguments({"x": value}, variables)["x"]


def problem(value: object, variables: dict[str, object] = VARIABLES) -> str:
    """The message for one argument's unresolvable reference."""
    with pytest.raises(ReferenceProblem) as caught:
        resolve_arguments({"x": value}, variables)
    assert caught.value.argument == "x"
    return caught.value.problem


def streamed(chunks: list[str], variables: dict[str, object] = VARIABLES, **kw: int) -> str:
    stream = StreamResolver(variables, **kw)
    return "".join([stream.feed(chunk) for chunk in chunks] + [stream.flush()])


# --- whole-string references in arguments -------------------------------------------


@pytest.mark.parametrize("name", list(VARIABLES))
def test_a_whole_reference_is_the_value_itself(name: str) -> None:
    assert resolved("$" + name) is VARIABLES[name]


@pytest.mark.parametrize(
    ("reference", "expected"),
    [
        ("$weather_nyc.temperature", 72),
        ("$weather_nyc.daily[0]", {"temp": 75, "rain": False}),
        ("$weather_nyc.daily[0].temp", 75),
        ("$weather_nyc.daily[1].rain", True),
        ("$weather_nyc.daily[-1].temp", 68),
        ("$weather_nyc.daily[-3].temp", 75),
        ("$weather_nyc.daily[002].temp", 68),
        ("$weather_nyc.daily[-0].temp", 75),
        ("$one[0]", 1),
    ],
)
def test_paths_reach_fields_and_items(reference: str, expected: object) -> None:
    assert resolved(reference) == expected


def test_a_path_gives_the_stored_object_not_a_copy() -> None:
    assert resolved("$weather_nyc.daily") is NYC["daily"]


def test_a_dict_reaches_a_pydantic_field_as_a_dict() -> None:
    import pydantic

    class Compare(pydantic.BaseModel):
        city1: dict[str, Any]
        city2: dict[str, Any]
        first_temp: int

    args = {"city1": "$weather_nyc", "city2": "$weather_london", "first_temp": "$total"}
    model = Compare.model_validate(resolve_arguments(args, VARIABLES))
    assert model.city1 == NYC
    assert model.city2 == LONDON
    assert model.first_temp == 42


# --- what is not a reference --------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "$5",
        "$ 5",
        "$",
        "$.x",
        "$[0]",
        "$-1",
        "US$",
        "US$5",
        "US$city",
        "a$city",
        "_$city",
        "9$city",
        "costs $5.99 or $ 6",
        "$é",
        "plain text",
        "",
    ],
)
def test_not_references_are_left_alone(text: str) -> None:
    assert resolved(text) == text
    assert resolve_text(text, VARIABLES) == text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("$$", "$"),
        ("$$$$", "$$"),
        ("$$city", "$city"),
        ("$$$city", "$New York"),
        ("$$5", "$5"),
        ("US$$city", "US$city"),
        ("$$$", "$$"),
        ("a $$ b", "a $ b"),
    ],
)
def test_a_double_dollar_is_a_literal_dollar(text: str, expected: str) -> None:
    assert resolved(text) == expected
    assert resolve_text(text, VARIABLES) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # A "$" after a literal ASCII word character does not start a reference ...
        ("x$city", "x$city"),
        ("(x)$city", "(x)New York"),
        # ... but one right after a reference does; after non-ASCII letters too.
        ("$city$city", "New YorkNew York"),
        ("$count$total", "342"),
        ("温度$weather_nyc.temperature度", "温度72度"),
        ("é$city", "éNew York"),
        # After a path's unfinished tail, the tail's last character counts.
        ("$city.$city", "New York.New York"),
        ("$city[1$city", "New York[1$city"),
        ("$city[$city", "New York[New York"),
    ],
)
def test_word_boundary_before_a_reference(text: str, expected: str) -> None:
    assert resolve_text(text, VARIABLES) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # The reference is the longest run of name, fields and indexes; the rest is text.
        ("$weather_nyc.temperature.", "72."),
        ("$weather_nyc.temperature!", "72!"),
        ("$weather_nyc.daily[0].temp.", "75."),
        ("$weather_nyc.daily[0][", '{"temp":75,"rain":false}['),
        ("$weather_nyc.daily[-", DAILY + "[-"),
        ("$weather_nyc.daily[x]", DAILY + "[x]"),
        ("$total[]", "42[]"),
        ("$total[-]", "42[-]"),
        ("$total[--1]", "42[--1]"),
        ("$total[1", "42[1"),
        # Fields start with a letter or underscore: ".00" is text.
        ("$total.00", "42.00"),
        ("$ratio.5x", "0.5.5x"),
        # A name is as long as its characters go: "$cityX" is another (unknown) name.
        ("$cityX!", "$cityX!"),
        ("$city_ ", "$city_ "),
    ],
)
def test_where_a_reference_ends(text: str, expected: str) -> None:
    assert resolve_text(text, VARIABLES) == expected
    assert resolved(text) == expected


# --- interpolation ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("in $city today", "in New York today"),
        ("$count items", "3 items"),
        ("ratio $ratio", "ratio 0.5"),
        ("flag $flag", "flag true"),
        ("nothing $nothing", "nothing null"),
        ("[$empty]", "[]"),
        ("nyc $weather_nyc.daily[0]", 'nyc {"temp":75,"rain":false}'),
        ("list $one.", "list [1]."),
        ("$city is $weather_nyc.temperature°F", "New York is 72°F"),
        ("$weather_nyc.temperature vs $weather_london.temperature", "72 vs 58"),
    ],
)
def test_interpolation_writes_strings_as_is_and_other_values_as_compact_json(
    text: str, expected: str
) -> None:
    assert resolved(text) == expected
    assert resolve_text(text, VARIABLES) == expected


def test_interpolated_json_keeps_non_ascii_and_floats() -> None:
    variables: dict[str, object] = {"v": {"city": "München", "t": 72.0, "emoji": "☀"}}
    assert resolve_text("= $v", variables) == '= {"city":"München","t":72.0,"emoji":"☀"}'


def test_a_value_json_cannot_encode_is_written_with_str() -> None:
    loop: dict[str, object] = {}
    loop["self"] = loop
    variables: dict[str, object] = {"obj": object(), "loop": loop}
    assert resolve_text("$obj", variables).startswith("<object object at")
    assert resolve_text("$loop", variables) == "{'self': {...}}"


# --- argument errors: exact messages ------------------------------------------------


def test_unknown_whole_reference_suggests_the_closest_name() -> None:
    assert problem("$wether_nyc", {"weather_nyc": NYC, "weather_london": LONDON}) == (
        "unknown variable $wether_nyc; did you mean $weather_nyc? "
        "Available: $weather_nyc, $weather_london"
    )


def test_unknown_whole_reference_without_a_close_name() -> None:
    assert problem("$stocks", {"weather_nyc": NYC, "weather_london": LONDON}) == (
        "unknown variable $stocks; available: $weather_nyc, $weather_london"
    )


def test_unknown_whole_reference_with_no_variables() -> None:
    assert problem("$weather_nyc", {}) == (
        "unknown variable $weather_nyc; no variables are saved yet"
    )


def test_unknown_whole_reference_lists_at_most_twenty_names() -> None:
    variables: dict[str, object] = {f"v{i}": i for i in range(25)}
    listed = ", ".join(f"$v{i}" for i in range(20))
    assert problem("$zzz", variables) == (f"unknown variable $zzz; available: {listed}, … (5 more)")


def test_unknown_path_start_is_about_the_name() -> None:
    assert problem("$wether_nyc.temperature", {"weather_nyc": NYC}) == (
        "unknown variable $wether_nyc; did you mean $weather_nyc? Available: $weather_nyc"
    )


@pytest.mark.parametrize(
    ("reference", "message"),
    [
        (
            "$weather_nyc.temprature",
            "$weather_nyc has no field 'temprature'; did you mean 'temperature'? "
            "Its fields: temperature, conditions, daily",
        ),
        (
            "$weather_nyc.wind",
            "$weather_nyc has no field 'wind'; its fields: temperature, conditions, daily",
        ),
        (
            "$weather_nyc.daily[0].tmp",
            "$weather_nyc.daily[0] has no field 'tmp'; did you mean 'temp'? Its fields: temp, rain",
        ),
        (
            "$weather_nyc.daily.temp",
            "$weather_nyc.daily has no field 'temp'; it is a list of 3 items "
            "(use an index: $weather_nyc.daily[0])",
        ),
        (
            "$weather_london.daily.temp",
            "$weather_london.daily has no field 'temp'; it is an empty list",
        ),
        (
            "$weather_nyc.temperature.value",
            "$weather_nyc.temperature has no field 'value'; it is a number",
        ),
        ("$city.upper", "$city has no field 'upper'; it is a string"),
        ("$flag.x", "$flag has no field 'x'; it is a boolean"),
        ("$nothing.x", "$nothing has no field 'x'; it is null"),
        ("$one.x", "$one has no field 'x'; it is a list of 1 item (use an index: $one[0])"),
        ("$weather_nyc.daily[5]", "index 5 out of range: $weather_nyc.daily has 3 items"),
        ("$weather_nyc.daily[-4]", "index -4 out of range: $weather_nyc.daily has 3 items"),
        ("$weather_london.daily[0]", "index 0 out of range: $weather_london.daily has 0 items"),
        ("$one[1]", "index 1 out of range: $one has 1 item"),
        (
            "$weather_nyc[0]",
            "$weather_nyc has no index [0]; it is an object, its fields: "
            "temperature, conditions, daily",
        ),
        ("$city[0]", "$city has no index [0]; it is a string"),
        (
            "$weather_nyc.daily[2].temp[0]",
            "$weather_nyc.daily[2].temp has no index [0]; it is a number",
        ),
    ],
)
def test_bad_paths_are_errors_naming_what_there_is(reference: str, message: str) -> None:
    assert problem(reference) == message


def test_bad_path_on_an_empty_object() -> None:
    assert problem("$e.x", {"e": {}}) == "$e has no field 'x'; it is an empty object"
    assert problem("$e[0]", {"e": {}}) == "$e has no index [0]; it is an empty object"


def test_a_known_name_with_a_bad_path_inside_text_is_an_error() -> None:
    assert problem("It is $weather_nyc.temprature today") == (
        "$weather_nyc has no field 'temprature'; did you mean 'temperature'? "
        "Its fields: temperature, conditions, daily"
    )
    # $city.txt is not $city followed by ".txt": a reference resolves whole or not at all.
    assert problem("out/$city.txt") == "$city has no field 'txt'; it is a string"


def test_an_unknown_name_inside_text_is_left_as_written() -> None:
    assert resolved("echo $HOME and $wether_nyc") == "echo $HOME and $wether_nyc"
    assert resolved("$HOME/$city") == "$HOME/New York"


def test_the_error_names_the_argument_where_it_occurred() -> None:
    args: dict[str, object] = {
        "ok": "$city",
        "legs": [{"from": "$city"}, {"from": "$town", "to": "x"}],
    }
    with pytest.raises(ReferenceProblem) as caught:
        resolve_arguments(args, {"city": "NYC"})
    assert caught.value.argument == "legs[1].from"
    assert str(caught.value) == ("argument legs[1].from: unknown variable $town; available: $city")


@pytest.mark.parametrize(
    ("args", "where"),
    [
        ({"a b": "$nope"}, "['a b']"),
        ({"x": {"a b": ["$nope"]}}, "x['a b'][0]"),
        ({"x": ({1: "$nope"},)}, "x[0][1]"),
        ({"x": {"y": {"z": "$nope"}}}, "x.y.z"),
    ],
)
def test_argument_locations(args: dict[str, object], where: str) -> None:
    with pytest.raises(ReferenceProblem) as caught:
        resolve_arguments(args, {})
    assert caught.value.argument == where


def test_reference_problem_is_a_value_error_and_pickles() -> None:
    error = ReferenceProblem("unknown variable $x; no variables are saved yet", "a")
    assert isinstance(error, ValueError)
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.problem, copy.argument, str(copy)) == (error.problem, "a", str(error))
    assert str(ReferenceProblem("p")) == "p"


# --- arguments: structure ---------------------------------------------------------


def test_nested_containers_are_resolved_and_keep_their_kinds() -> None:
    args: dict[str, object] = {
        "a": ["$count", ("$city", {"k": "$weather_nyc.daily[0].temp"})],
        "b": 5,
        "c": None,
    }
    assert resolve_arguments(args, VARIABLES) == {
        "a": [3, ("New York", {"k": 75})],
        "b": 5,
        "c": None,
    }


def test_containers_without_references_are_not_copied() -> None:
    untouched: list[object] = ["no", {"refs": ["here", 1]}, "US$5"]
    args: dict[str, object] = {"big": untouched, "changed": ["$count"]}
    result = resolve_arguments(args, VARIABLES)
    assert result is not args
    assert result["big"] is untouched
    assert result["changed"] == [3]


def test_the_result_is_always_a_new_dict() -> None:
    args: dict[str, object] = {"a": 1}
    result = resolve_arguments(args, VARIABLES)
    assert result == args
    assert result is not args
    assert resolve_arguments({}, VARIABLES) == {}


def test_keys_are_never_resolved() -> None:
    assert resolve_arguments({"$city": {"$count": "$count"}}, VARIABLES) == {"$city": {"$count": 3}}


def test_substituted_values_are_not_resolved_again() -> None:
    variables: dict[str, object] = {"template": "$city", "city": "NYC"}
    assert resolved("$template", variables) == "$city"
    assert resolved("say $template", variables) == "say $city"
    assert resolve_text("say $template", variables) == "say $city"


# --- hostile input ------------------------------------------------------------------


@pytest.mark.parametrize(
    "variables",
    [
        {"a": "$a"},
        {"a": "$b", "b": "$a"},
        {"a": {"self": "$a", "list": ["$a", "$$a"]}},
        {"a": "$a $a $a $a"},
    ],
)
def test_cycles_are_harmless(variables: dict[str, object]) -> None:
    assert resolved("$a", variables) is variables["a"]
    text = "x $a y"
    expected = "x " + _text(variables["a"]) + " y"
    assert resolved(text, variables) == expected
    assert resolve_text(text, variables) == expected
    assert streamed(list(text), variables) == expected


def _text(value: object) -> str:
    import msgspec

    return value if isinstance(value, str) else msgspec.json.encode(value).decode()


def test_a_self_containing_value_is_walked_not_expanded() -> None:
    loop: dict[str, object] = {"name": "loop"}
    loop["self"] = loop
    assert resolved("$loop.self.self.self.name", {"loop": loop}) == "loop"
    assert resolved("$loop.self", {"loop": loop}) is loop


TEN_MB = 10 * 1024 * 1024


def test_a_ten_megabyte_value_is_passed_by_reference_and_joined_once() -> None:
    big = "x" * TEN_MB
    table = {"rows": ["y" * 1000] * (TEN_MB // 1000)}
    variables: dict[str, object] = {"big": big, "table": table}
    assert resolved("$big", variables) is big
    assert resolved("$table.rows", variables) is table["rows"]
    assert resolved("<$big>", variables) == "<" + big + ">"
    assert resolve_text("<$big>", variables) == "<" + big + ">"
    assert len(resolve_text("$table", variables)) > TEN_MB
    stream = StreamResolver(variables)
    assert stream.feed("<$bi") == "<"
    assert stream.feed("g>") == big + ">"
    # The value is not scanned, only the text.
    assert stream._scanner.work < 20  # pyright: ignore[reportPrivateUsage]


def test_long_argument_strings() -> None:
    text = "$city " * 200_000
    assert resolved(text) == "New York " * 200_000
    text = "$nope" + ".b" * 500_000
    assert problem(text) == "unknown variable $nope; available: " + ", ".join(
        "$" + name for name in VARIABLES
    )
    assert resolved(" " + text) == " " + text


def test_a_deep_path() -> None:
    depth = 100_000
    leaf: dict[str, object] = {"v": "leaf"}
    root = leaf
    for _ in range(depth):
        root = {"b": root}
    path = "$a" + ".b" * depth
    assert resolved(path + ".v", {"a": root}) == "leaf"
    # Too long for text: written as it is.
    assert resolve_text(path + ".v", {"a": root}) == path + ".v"
    message = problem(path + ".x", {"a": root})
    assert message.startswith("$a.b.b.b") and len(message) < 300
    assert message.endswith("… has no field 'x'; its fields: v")


def test_deeply_nested_arguments_do_not_overflow_the_stack() -> None:
    value: object = ["$city"]
    for _ in range(100_000):
        value = [value]
    result = resolved(value)
    for _ in range(100_000):
        assert isinstance(result, list)
        result = cast("list[object]", result)[0]
    assert result == ["New York"]


@pytest.mark.parametrize("digits", ["9" * 19, "-" + "9" * 19, "9" * 10_000, "-" + "9" * 100_000])
def test_huge_indexes_are_out_of_range(digits: str) -> None:
    shown = digits if len(digits) <= 60 else digits[:60] + "…"
    assert problem(f"$weather_nyc.daily[{digits}]") == (
        f"index {shown} out of range: $weather_nyc.daily has 3 items"
    )
    assert resolve_text(f"$one[{digits}]", VARIABLES) == f"$one[{digits}]"


def test_a_long_index_with_leading_zeros_is_still_its_value() -> None:
    assert resolved("$one[" + "0" * 100 + "]") == 1


def test_a_huge_unknown_name_gives_a_bounded_message() -> None:
    name = "weather_" + "x" * 1_000_000
    message = problem("$" + name, {"weather_nyc": NYC})
    assert message == f"unknown variable ${name[:60]}…; available: $weather_nyc"


def test_huge_field_names_give_bounded_messages() -> None:
    keys = {"k" * 100_000 + str(i): i for i in range(50)}
    message = problem("$v." + "q" * 100_000, {"v": keys})
    assert len(message) < 1000
    assert message.endswith("… (40 more)")


def test_many_variables_keep_suggestions_bounded() -> None:
    variables: dict[str, object] = {f"weather_{i}": i for i in range(100_000)}
    message = problem("$weather_x", variables)
    assert message.startswith("unknown variable $weather_x; did you mean $weather_")
    assert message.endswith(", … (99980 more)")


# --- describe_fields ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"a": 1, "b": 2}, "a, b"),
        ({f"f{i}": i for i in range(12)}, "f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, … (2 more)"),
        ({f"f{i}": i for i in range(10)}, "f0, f1, f2, f3, f4, f5, f6, f7, f8, f9"),
        ({1: "x", None: "y"}, "1, None"),
        ({"k" * 50: 1}, "k" * 40 + "…"),
        ({}, "an empty object"),
        ([], "an empty list"),
        ([1, 2], "a list of 2 items"),
        ((1,), "a list of 1 item"),
        ("text", "a string"),
        (3, "a number"),
        (2.5, "a number"),
        (False, "a boolean"),
        (None, "null"),
        (b"x", "a bytes"),
    ],
)
def test_describe_fields(value: object, expected: str) -> None:
    assert describe_fields(value) == expected


def test_describe_fields_limit() -> None:
    assert describe_fields({"a": 1, "b": 2, "c": 3}, limit=1) == "a, … (2 more)"


# --- text ---------------------------------------------------------------------------


def test_text_never_fails_and_leaves_what_does_not_resolve() -> None:
    text = "$wether_nyc, $weather_nyc.temprature, $weather_nyc.daily[9], $HOME, $city"
    assert resolve_text(text, VARIABLES) == (
        "$wether_nyc, $weather_nyc.temprature, $weather_nyc.daily[9], $HOME, New York"
    )


def test_text_references_longer_than_max_pending_are_left_as_written() -> None:
    variables: dict[str, object] = {"a" * 10: "A", "b": {"c": 1}}
    assert resolve_text("$" + "a" * 10, variables, max_pending=11) == "A"
    assert resolve_text("$" + "a" * 10, variables, max_pending=10) == "$" + "a" * 10
    # The bound counts an unfinished tail too.
    assert resolve_text("$b.c[1", variables, max_pending=6) == "1[1"
    assert resolve_text("$b.c[12", variables, max_pending=6) == "$b.c[12"
    assert resolve_text("$b.c", variables, max_pending=1) == "$b.c"
    assert resolve_text("$$ $b.c", variables, max_pending=1) == "$ $b.c"


def test_max_pending_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_pending must be at least 1, not 0"):
        StreamResolver(VARIABLES, max_pending=0)
    with pytest.raises(ValueError, match="max_pending must be at least 1, not -1"):
        resolve_text("$a", VARIABLES, max_pending=-1)
    assert MAX_PENDING == 256


# --- streams ------------------------------------------------------------------------


def test_a_stream_holds_back_only_a_possible_reference() -> None:
    stream = StreamResolver(VARIABLES)
    assert stream.feed("It is $weather_") == "It is "
    assert stream.held == len("$weather_")
    assert stream.feed("nyc.tempera") == ""
    assert stream.feed("ture°F in $ci") == "72°F in "
    assert stream.feed("ty.") == ""  # "." may start a field
    assert stream.held == len("$city.")
    assert stream.feed(" Bye $") == "New York. Bye "
    assert stream.held == 1
    assert stream.feed("$") == "$"
    assert stream.held == 0
    assert stream.feed("") == ""
    assert stream.feed("$") == ""
    assert stream.flush() == "$"
    assert stream.flush() == ""


def test_a_stream_can_be_reused_after_flush() -> None:
    stream = StreamResolver(VARIABLES)
    assert stream.feed("x") == "x"
    assert stream.flush() == ""
    # After flush the word boundary is reset: a new stream starts at a boundary.
    assert stream.feed("$city") == ""
    assert stream.flush() == "New York"


@pytest.mark.parametrize(
    ("chunks", "expected"),
    [
        (["$", "city"], "New York"),
        (["$", "$", "city"], "$city"),
        (["$$", "$", "city"], "$New York"),
        (["x", "$city"], "x$city"),
        (["$weather_nyc.daily[", "-", "1", "]", ".temp"], "68"),
        (["$weather_nyc.daily[", "-", "x"], DAILY + "[-x"),
        (["$city", ".", "$city"], "New York.New York"),
        (["$ci", "ty", "X"], "$cityX"),
        (["US", "$", "5"], "US$5"),
    ],
)
def test_references_split_across_chunks(chunks: list[str], expected: str) -> None:
    assert streamed(chunks) == expected
    assert resolve_text("".join(chunks), VARIABLES) == expected


def test_a_stream_bounds_what_it_holds_back() -> None:
    stream = StreamResolver({"a": 1}, max_pending=8)
    assert stream.feed("$aaaa") == ""
    assert stream.feed("aaaa") == "$aaaaaaaa"  # 9 characters: too long to be held
    assert stream.held == 0
    assert stream.feed("aaa.b") == "aaa.b"  # the rest of it passes straight through
    assert stream.feed(" $a") == " "
    assert stream.flush() == "1"


# --- properties ---------------------------------------------------------------------

PROPERTY_VARIABLES: dict[str, object] = {
    "a": "A",
    "ab": {"c": 1, "d": [10, {"e": "E"}], "f": None},
    "e": "",
    "x_1": [[1, 2], []],
    "s": "has $a inside and $$",
}

PIECES = st.sampled_from(
    [
        "$", "$$", "a", "b", "c", "d", "e", "f", "ab", "x_1", ".", "[", "]", "-", "0", "1",
        "2", "9", " ", "_", "é", "温", "\n", "$a", "$ab.c", "$ab.d[1].e", "$ab.d[-1]",
        "$x_1[0][1]", "$e", "$s", "$nope", "US", "[-1]", ".d", ".c",
    ]
)  # fmt: skip
TEXTS = st.one_of(
    st.lists(PIECES, max_size=40).map("".join),
    st.text(alphabet="$ab.[]-01_ xé", max_size=60),
)


@st.composite
def splits(draw: st.DrawFn) -> tuple[str, list[str]]:
    text = draw(TEXTS)
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=len(text) + 2)))
    bounds = [0, *cuts, len(text)]
    return text, [text[start:stop] for start, stop in itertools.pairwise(bounds)]


@settings(max_examples=1500, deadline=None)
@given(splits(), st.one_of(st.integers(1, 12), st.just(MAX_PENDING)))
def test_a_stream_equals_the_whole_text_for_any_split(
    split: tuple[str, list[str]], max_pending: int
) -> None:
    text, chunks = split
    stream = StreamResolver(PROPERTY_VARIABLES, max_pending=max_pending)
    out: list[str] = []
    for chunk in chunks:
        out.append(stream.feed(chunk))
        assert stream.held <= max_pending
    out.append(stream.flush())
    assert "".join(out) == resolve_text(text, PROPERTY_VARIABLES, max_pending=max_pending)


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_characters="$")))
def test_text_without_a_dollar_is_unchanged(text: str) -> None:
    assert resolve_text(text, PROPERTY_VARIABLES) == text
    assert resolved(text, PROPERTY_VARIABLES) == text
    assert streamed(list(text), PROPERTY_VARIABLES) == text


# Values whose text has no "$" and no ASCII letter, digit or underscore.
INERT_VARIABLES: dict[str, object] = {
    "a": "é",
    "ab": {"c": "-", "d": [".", "["], "f": " "},
    "e": "",
    "x_1": [["]", " "], []],
}


@settings(max_examples=1000, deadline=None)
@given(TEXTS)
def test_resolving_twice_changes_nothing(text: str) -> None:
    """Holds when the second pass cannot read anything new: the text has no "$$" (its
    "$" would be read again), and no value's text holds a "$" (a new reference) or an
    ASCII word character (which could extend a reference left as written: with "b" for
    $x_1[0][1], "$nope$x_1[0][1]" gives "$nopeb", another name)."""
    if "$$" in text:
        text = text.replace("$", "")
    once = resolve_text(text, INERT_VARIABLES)
    assert resolve_text(once, INERT_VARIABLES) == once


@settings(max_examples=1000, deadline=None)
@given(TEXTS)
def test_arguments_interpolate_like_text_unless_they_fail(text: str) -> None:
    """Argument strings that are not whole references and do not fail read like text."""
    text = " " + text  # never a whole reference
    try:
        result = resolved(text, PROPERTY_VARIABLES)
    except ReferenceProblem:
        return
    assert result == resolve_text(text, PROPERTY_VARIABLES, max_pending=10**9)


@settings(max_examples=300, deadline=None)
@given(TEXTS)
def test_only_reference_problems_leave_resolve_arguments(text: str) -> None:
    for variables in (PROPERTY_VARIABLES, {}):
        caught: ReferenceProblem | None = None
        try:
            resolve_arguments({"x": text, "y": [text, {"z": (text,)}]}, variables)
        except ReferenceProblem as error:
            caught = error
        if caught is not None:
            assert caught.argument == "x"
            assert caught.problem


# --- linear work --------------------------------------------------------------------


def stream_work(text: str, chunk: int = 1) -> int:
    stream = StreamResolver({"a": {"b": 1}, "x": "X"})
    for start in range(0, len(text), chunk):
        stream.feed(text[start : start + chunk])
    stream.flush()
    return stream._scanner.work  # pyright: ignore[reportPrivateUsage]


def text_of(pattern: str, size: int) -> str:
    return (pattern * (size // len(pattern) + 1))[:size]


@pytest.mark.parametrize(
    "text",
    [
        "$" * 1_000_000,  # escapes
        text_of("$a.b", 1_000_000),  # references, each resolved
        "$a" + ".b" * 500_000,  # one endless path: past max_pending it streams through
    ],
)
def test_a_megabyte_in_one_character_chunks_takes_linear_work(text: str) -> None:
    assert stream_work(text) <= 5 * len(text)


@pytest.mark.parametrize(
    "text",
    [
        text_of("$a[1]", 200_000),  # references that do not resolve
        text_of("a$x ", 200_000),  # ineligible dollars
        text_of("$x[", 200_000),  # unfinished tails
        "$a" + "[1]" * 70_000,
        "$a[" + "1" * 200_000,  # an index that never closes
        "$a" + "b" * 200_000,  # an endless name
        "$" * 200_001,
        "x" * 200_000,
    ],
)
def test_endless_and_repeated_candidates_take_linear_work(text: str) -> None:
    assert stream_work(text) <= 5 * len(text)
    assert stream_work(text, chunk=7) <= 5 * len(text)


@pytest.mark.parametrize("pattern", ["$", "$a.b", "$a[1]", "$x[-", "$a.b.c.d.e"])
def test_work_grows_linearly(pattern: str) -> None:
    small, large = stream_work(text_of(pattern, 50_000)), stream_work(text_of(pattern, 200_000))
    assert large <= 4 * small + 64


# --- what filling in may add (the hostile list's `$var` fan-out) ------------------------

NOTE_LENGTH = len(resolve_text("$a", {"a": "A"}, max_expansion=0)) - len("$a")


@settings(max_examples=1000, deadline=None)
@given(splits(), st.integers(0, 30))
def test_filling_in_is_bounded_and_a_stream_still_equals_the_whole_text(
    split: tuple[str, list[str]], max_expansion: int
) -> None:
    text, chunks = split
    whole = resolve_text(text, PROPERTY_VARIABLES, max_expansion=max_expansion)
    assert len(whole) <= len(text) + max_expansion + NOTE_LENGTH
    assert streamed(chunks, PROPERTY_VARIABLES, max_expansion=max_expansion) == whole
    unbounded = resolve_text(text, PROPERTY_VARIABLES)
    assert whole == unbounded or whole.endswith(" characters.]")


@settings(max_examples=1000, deadline=None)
@given(TEXTS, st.integers(0, 30))
def test_arguments_fill_in_within_the_bound_or_fail_saying_so(text: str, bound: int) -> None:
    args = {"x": " " + text, "y": [" " + text]}
    try:
        out = resolve_arguments(args, PROPERTY_VARIABLES, max_expansion=bound)
    except ReferenceProblem:  # the only exception, with a message for the model
        return
    filled = len(cast(str, out["x"])) + len(cast("list[str]", out["y"])[0])
    assert filled <= 2 * len(" " + text) + bound


class CountingVariables(dict[str, object]):
    """Counts the values looked up: each lookup may mean encoding a value."""

    lookups = 0

    def __getitem__(self, name: str) -> object:
        self.lookups += 1
        return super().__getitem__(name)


@pytest.mark.parametrize("repeats", [5_000, 50_000])
def test_a_fan_out_stops_filling_in_at_the_bound_in_linear_work(repeats: int) -> None:
    table = {"rows": ["y" * 100] * 1_000}  # about 100 KB of JSON each time it is filled in
    variables = CountingVariables(big=table)
    answer = resolve_text("$big " * repeats, variables, max_expansion=1_000_000)
    assert answer.count('{"rows"') == 9 and variables.lookups == 10  # then no more lookups
    assert len(answer) < 1_000_000 + 6 * repeats + NOTE_LENGTH
    variables = CountingVariables(big=table)
    with pytest.raises(ReferenceProblem, match="would pass 1,000,000 characters") as raised:
        resolve_arguments({"text": "$big " * repeats}, variables, max_expansion=1_000_000)
    assert variables.lookups == 10
    assert raised.value.argument == "text"
    assert resolve_arguments({"text": "$big"}, variables, max_expansion=0)["text"] is table
