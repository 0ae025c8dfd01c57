"""Serialising outputs: the libyaml fast path must write exactly what the Python dumper does."""

from __future__ import annotations

import dataclasses
import enum
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from toolchain._observations import (
    OutputError,
    _BlockDumper,
    plain_cache,
    simple_yaml,
    to_builtins,
    to_yaml,
    yaml_dumper_for,
)

TRICKY = st.sampled_from(
    [
        "",
        "no",
        "0123",
        "1e3",
        "2026-01-27",
        "a: b",
        "- x",
        "#c",
        "  lead",
        "trail  ",
        "x\ny",
        "line\n\nblank\n",
        "tab\there",
        "'q'",
        '"dq"',
        "@at",
        "~",
        "null",
        "é",
        "中文",
        "😀",
        "\x85",
        "\ufeff",
        "\r\n",
        "%",
        "!tag",
        "*ref",
        "&anc",
        "|",
        ">",
        "{a}",
        "[1]",
    ]
)
TEXT = st.one_of(TRICKY, st.text(max_size=20), st.lists(TRICKY, max_size=4).map("".join))
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), TEXT)
JSONISH: st.SearchStrategy[Any] = st.recursive(
    SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(TEXT, children, max_size=4)
    ),
    max_leaves=20,
)


def python_dump(value: object) -> str:
    text = yaml.dump(
        value,
        Dumper=_BlockDumper,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        width=1_000_000,
    )
    return text.removesuffix("\n").removesuffix("\n...")


@settings(max_examples=400, deadline=None)
@given(JSONISH)
def test_fast_path_writes_what_the_python_dumper_writes(value: object) -> None:
    assert to_yaml(value) == python_dump(value) if not isinstance(value, str) else True


@settings(max_examples=200, deadline=None)
@given(JSONISH)
def test_yaml_output_reads_back_as_the_same_data(value: object) -> None:
    if isinstance(value, str):
        return  # strings are shown as written, not as YAML
    assert yaml.safe_load(to_yaml(value) + "\n") == value


@pytest.mark.parametrize("value", [{"": 1}, {"k": "😀"}, ["\x85"], {"a": "\ufeff"}])
def test_values_libyaml_writes_differently_take_the_python_dumper(value: object) -> None:
    assert yaml_dumper_for(value) is _BlockDumper


def test_plain_data_takes_the_fast_path() -> None:
    assert yaml_dumper_for({"city": "Paris", "temps": [21, 19.5], "ok": True}) is not _BlockDumper


# Strings the direct writer takes without asking PyYAML, and their near misses.
WORDS = st.sampled_from(
    [
        *("alpha", "Yes", "NULL", "On", "y", "N", "off", "a-b", "a b", "x/y.z", "AA100"),
        *("v_2", "a  b", "a-", "a b ", "-a", ".inf", "a.", "x" * 100, "x" * 101, "True story"),
    ]
)
WORDISH: st.SearchStrategy[Any] = st.recursive(
    st.one_of(
        *(WORDS, st.integers(), st.floats(), st.none(), st.booleans()),
        *(st.builds(dict), st.builds(list)),  # fresh ones: a shared one is written as an alias
    ),
    lambda children: st.one_of(
        st.lists(children, min_size=1, max_size=4),
        st.dictionaries(st.one_of(WORDS, TEXT), children, min_size=1, max_size=4),
    ),
    max_leaves=30,
)


@settings(max_examples=400, deadline=None)
@given(WORDISH)
def test_direct_writer_writes_what_the_python_dumper_writes(value: object) -> None:
    assert to_yaml(value) == python_dump(value) if not isinstance(value, str) else True


@pytest.mark.parametrize(
    "value",
    [{"key": "alpha", "value": 5}, [1, 2.5, None, True], {"a": {"b": [{"c": []}]}}, 7, None],
)
def test_simple_outputs_are_written_without_yaml_dump(value: object) -> None:
    written = simple_yaml(value, plain_cache(lambda text: False))  # word-like strings only
    assert written is not None
    assert written == python_dump(value)


class Level(enum.IntEnum):
    LOW = 1


class Word(str):
    """A str subclass: to_builtins refuses it as a value (so must the direct writer) and
    takes it as a key."""


@dataclasses.dataclass
class Seat:
    row: int


# Each holds a value the direct writer declines (not an exact dict, list or scalar), next
# to values it takes: written as their builtins are, whichever path writes them.
@pytest.mark.parametrize(
    "value",
    [
        {"pair": (1, 2), "key": "alpha"},
        {"level": Level.LOW, "key": "alpha"},
        [Seat(12), {"row": 12}],
        {"seat": Seat(3), "tags": frozenset({"a"})},
        {Word("key"): 5},
        {"key": "no", "again": "no"},  # a quoted word, and the same one remembered
        {"nan": float("nan"), "big": 10**18},
    ],
)
def test_outputs_of_other_types_are_written_as_their_builtins(value: object) -> None:
    assert to_yaml(value) == python_dump(to_builtins(value))


@pytest.mark.parametrize("value", [{"key": Word("alpha")}, [Word("alpha")]])
def test_outputs_to_builtins_refuses_are_refused_by_the_direct_writer_too(value: object) -> None:
    with pytest.raises(OutputError, match="not serialisable: cannot serialise Word"):
        to_yaml(value)
