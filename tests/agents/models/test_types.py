"""The provider-neutral data types."""

from __future__ import annotations

import dataclasses

import msgspec
import pytest

from agents.models import STOP_REASONS, GenerateOptions, Message, ModelResponse, ToolSpec, Usage
from toolchain import ImageContent, TextContent


def test_message_text_builds_a_single_text_part() -> None:
    message = Message.text("user", "hello")
    assert message.role == "user"
    assert message.content == (TextContent("hello"),)


def test_text_content_joins_text_parts_and_skips_media() -> None:
    parts = (TextContent("a"), ImageContent(data=b"png"), TextContent("b"))
    assert Message("user", parts).text_content() == "ab"


def test_message_is_frozen() -> None:
    message = Message.text("user", "hello")
    with pytest.raises(dataclasses.FrozenInstanceError):
        message.role = "assistant"  # type: ignore[misc]  # assigning is the point of the test


def test_usages_add_up() -> None:
    total = sum((Usage(10, 2), Usage(5, 1), Usage()), start=Usage())
    assert total == Usage(15, 3)
    assert total.total_tokens == 18


def test_options_default_to_provider_defaults() -> None:
    options = GenerateOptions()
    assert (options.stop, options.temperature, options.max_tokens, options.seed) == (
        (),
        None,
        None,
        None,
    )


def test_options_reject_a_bare_string_stop() -> None:
    with pytest.raises(TypeError, match="tuple of strings"):
        GenerateOptions(stop="Observation:")  # type: ignore[arg-type]  # the mistake under test


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"stop": ("",)}, "non-empty"),
        ({"max_tokens": 0}, "at least 1"),
        ({"top_p": 1.5}, r"top_p must be from 0 to 1, got 1\.5"),
        ({"top_p": -0.1}, "top_p must be from 0 to 1"),
        ({"top_p": float("nan")}, "top_p must be from 0 to 1, got nan"),
        ({"top_k": 0}, "top_k must be at least 1, got 0"),
        ({"presence_penalty": 2.5}, "presence_penalty must be from -2 to 2"),
        ({"frequency_penalty": -3}, "frequency_penalty must be from -2 to 2"),
        ({"max_retries": -1}, "max_retries must be at least 0, got -1"),
        ({"headers": {"X Bad": "v"}}, "header name 'X Bad' is not a valid HTTP header name"),
        ({"headers": {"": "v"}}, "header name '' is not a valid"),
        ({"headers": {"X-A": "1", "x-a": "2"}}, "'x-a' is given twice"),
    ],
)
def test_options_reject_nonsense(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        GenerateOptions(**kwargs)  # type: ignore[arg-type]  # values are checked at run time


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"top_k": 2.5}, "top_k must be an integer, got float"),
        ({"max_retries": True}, "max_retries must be an integer, got bool"),
        ({"top_p": "0.9"}, "top_p must be a number, got str"),
        ({"headers": "X-A: 1"}, "headers must be a mapping"),
        ({"headers": {"X-A": 1}}, "the value of header 'X-A' must be a string, not int"),
    ],
)
def test_options_reject_wrong_types(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(TypeError, match=match):
        GenerateOptions(**kwargs)  # type: ignore[arg-type]  # values are checked at run time


def test_options_accept_the_ends_of_each_range() -> None:
    low = GenerateOptions(top_p=0, top_k=1, presence_penalty=-2, frequency_penalty=-2.0)
    high = GenerateOptions(top_p=1.0, presence_penalty=2.0, frequency_penalty=2, max_retries=0)
    assert (low.top_p, low.top_k, high.top_p, high.max_retries) == (0, 1, 1.0, 0)


@pytest.mark.parametrize("value", ["a\r\nX-Injected: 1", "a\nb", "a\x00b"])
def test_header_values_cannot_break_the_header_block_and_errors_hide_them(value: str) -> None:
    with pytest.raises(ValueError, match="the value of header 'X-A' holds a line break") as caught:
        GenerateOptions(headers={"X-A": value})
    assert value not in str(caught.value)


def test_headers_are_copied_and_their_values_kept_out_of_repr() -> None:
    given = {"X-Api-Key": "hunter2", "X-Tag": "t"}
    options = GenerateOptions(temperature=0.2, headers=given)
    given["X-Api-Key"] = "changed later"
    assert options.headers == {"X-Api-Key": "hunter2", "X-Tag": "t"}
    assert repr(options) == (
        "GenerateOptions(temperature=0.2, "
        "headers={'X-Api-Key': '[REDACTED]', 'X-Tag': '[REDACTED]'})"
    )
    assert repr(GenerateOptions()) == "GenerateOptions()"


def test_options_round_trip_through_json() -> None:
    options = GenerateOptions(
        stop=("Observation:",),
        temperature=0.5,
        max_tokens=64,
        seed=3,
        tools=(ToolSpec("add", "Add.", {"type": "object"}, strict=True),),
        tool_choice="add",
        top_p=0.9,
        top_k=40,
        presence_penalty=0.5,
        frequency_penalty=-0.5,
        headers={"X-Tag": "t"},
        max_retries=1,
    )
    encoded = msgspec.json.encode(options)
    assert msgspec.json.decode(encoded, type=GenerateOptions) == options
    assert dataclasses.replace(options) == options


def test_stop_reasons_are_documented_words() -> None:
    assert {"stop", "stop_sequence", "length", "error"} <= STOP_REASONS
    assert ModelResponse("x", "stop", Usage(), "m").stop_reason in STOP_REASONS
