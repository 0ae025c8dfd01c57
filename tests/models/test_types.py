"""The provider-neutral data types."""

from __future__ import annotations

import dataclasses

import pytest

from agents.models import STOP_REASONS, GenerateOptions, Message, ModelResponse, Usage
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
    [({"stop": ("",)}, "non-empty"), ({"max_tokens": 0}, "at least 1")],
)
def test_options_reject_nonsense(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        GenerateOptions(**kwargs)  # type: ignore[arg-type]  # values are checked at run time


def test_stop_reasons_are_documented_words() -> None:
    assert {"stop", "stop_sequence", "length", "error"} <= STOP_REASONS
    assert ModelResponse("x", "stop", Usage(), "m").stop_reason in STOP_REASONS
