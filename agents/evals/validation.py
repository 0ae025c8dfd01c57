"""Judging a run against its case: the calls it made, how it stopped, its answer.

`CallRecord` is one tool call as the model made it: the arguments it wrote (before the
relay unboxed any reference) and the result text it was shown (after boxing). Calls
that never ran (unreadable, unknown tool, invalid arguments, refused, over a limit)
count for ``forbidden_tools`` only: a model that fixes a bad call on its next try has
made the sequence the case asks for.

>>> calls = [
...     CallRecord("yt_transcribe", {"video_id": "123"}, "internal://abc"),
...     CallRecord("deep_check", {"text": "internal://abc"}, "Analysis: fine."),
... ]
>>> from agents.evals.cases import parse_case
>>> case = parse_case('''---
... tool_calls:
...   - {tool_name: yt_transcribe, opaque_id_result: true}
...   - {tool_name: deep_check, opaque_id_input: true}
... forbidden_tools: [internal_resource_read]
... ---
... Transcribe 123 and check it.''')
>>> validate(case, calls, stopped_by="answer", answer="Checked.")
[]
>>> validate(case, calls[1:], stopped_by="answer", answer="Checked.")
["tool call sequence mismatch: expected ['yt_transcribe', 'deep_check'], got ['deep_check']"]
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final, cast

from agents.evals.cases import CallExpectation, PromptCase

__all__ = ["READER_TOOLS", "CallRecord", "reference_id", "validate"]

READER_TOOLS: Final = frozenset(
    {
        "internal_resource_read",
        "internal_resource_read_slice",
        "internal_resource_length",
        "internal_resource_read_lines",
        "internal_resource_grep",
    }
)
"""The relay's tools that look inside a reference."""

_NOT_RUN: Final = frozenset({"parse", "unknown_tool", "invalid_arguments", "refused", "limit"})
_URI = re.compile(r"(?i:internal)://([A-Za-z0-9._~-]{1,200})")
_LONGEST = 1_000


@dataclass(frozen=True, slots=True)
class CallRecord:
    """One tool call of a run: as the model wrote it, and what it was shown back.

    ``error_kind`` is the ``ToolCallError`` kind when the call failed (``result`` is
    then the error text the model saw).
    """

    name: str
    args: Mapping[str, object]
    result: str = ""
    error_kind: str | None = None
    id: str = ""

    @property
    def ran(self) -> bool:
        """Whether the tool itself ran (it may still have failed)."""
        return self.error_kind not in _NOT_RUN


def reference_id(value: object, *, prefix: bool = False) -> str | None:
    """The id of an ``internal://`` reference written as the relay writes them.

    ``internal://<id>``, the resource link ``{"type": "resource_link", "uri": ...}`` as
    JSON text or as an object; ``prefix`` also accepts a reference followed by more
    text (a preview).

    >>> reference_id("internal://a1"), reference_id({"type": "resource_link", "uri": "internal://b2"})
    ('a1', 'b2')
    >>> reference_id("see internal://a1"), reference_id("internal://a1 (preview)", prefix=True)
    (None, 'a1')
    """
    if isinstance(value, str):
        text = value.strip()
        if len(text) > _LONGEST and not prefix:
            return None
        if text.startswith("{"):
            try:
                value = json.loads(text)
            except ValueError:
                return None
        else:
            found = _URI.match(text)
            if found is None or (not prefix and found.end() != len(text)):
                return None
            return found.group(1)
    if isinstance(value, Mapping):
        link = cast("Mapping[object, object]", value)
        uri = link.get("uri")
        if link.get("type", "resource_link") == "resource_link" and isinstance(uri, str):
            found = _URI.fullmatch(uri.strip())
            return found.group(1) if found else None
    return None


def _references_in(value: object) -> set[str]:
    """Every reference id written as an argument value, however nested."""
    found: set[str] = set()
    direct = reference_id(value)
    if direct is not None:
        found.add(direct)
    if isinstance(value, Mapping):
        for item in cast("Mapping[object, object]", value).values():
            found |= _references_in(item)
    elif isinstance(value, list | tuple):
        for item in cast("Sequence[object]", value):
            found |= _references_in(item)
    return found


def validate(
    case: PromptCase,
    calls: Sequence[CallRecord],
    *,
    stopped_by: str,
    answer: str | None,
    detail: str = "",
) -> list[str]:
    """Every way the run broke its case; empty when it passed.

    ``detail`` says more about how the run stopped (the limit, the error).
    """
    problems: list[str] = []
    if stopped_by != case.stopped_by:
        why = f" ({detail})" if detail else ""
        problems.append(f"the run stopped by {stopped_by}{why}, expected {case.stopped_by}")
    for tool in sorted(case.forbidden_tools):
        count = sum(1 for call in calls if call.name == tool)
        if count:
            problems.append(f"forbidden tool {tool} was called ({count}x)")
    ran = [call for call in calls if call.ran]
    problems += _sequence(case, ran)
    for tool, bound in case.call_counts.items():
        count = len(ran) if tool == "*" else sum(1 for call in ran if call.name == tool)
        problem = bound.check(count)
        if problem is not None:
            what = "tool calls" if tool == "*" else f"calls of {tool}"
            problems.append(f"{what}: {problem}")
    problems += _resolves(case, ran)
    if case.answer is not None:
        if answer is None:
            problems.append("there is no answer to check")
        else:
            problems += case.answer.check(answer)
    return problems


def _sequence(case: PromptCase, ran: Sequence[CallRecord]) -> list[str]:
    expected = case.tool_calls
    if not expected:
        return []
    names = {entry.tool_name for entry in expected}
    relevant = [(index, call) for index, call in enumerate(ran) if call.name in names]
    pairs: list[tuple[CallExpectation, int]] = []
    problems: list[str] = []
    if case.effective_order == "in_order":
        want = [entry.tool_name for entry in expected]
        got = [call.name for _, call in relevant]
        if want != got:
            return [f"tool call sequence mismatch: expected {want}, got {got}"]
        pairs = [(entry, index) for entry, (index, _) in zip(expected, relevant, strict=True)]
    else:
        for tool in dict.fromkeys(entry.tool_name for entry in expected):
            entries = [entry for entry in expected if entry.tool_name == tool]
            made = [index for index, call in relevant if call.name == tool]
            more_allowed = any(entry.allow_multiple for entry in entries)
            if len(made) < len(entries):
                problems.append(
                    f"expected at least {len(entries)} calls of {tool}, got {len(made)}"
                )
            elif len(made) > len(entries) and not more_allowed:
                problems.append(f"expected {len(entries)} calls of {tool}, got {len(made)}")
            pairs += list(zip(entries, made, strict=False))
    for entry, index in pairs:
        problems += _entry(entry, ran, index)
    return problems


def _returned(ran: Sequence[CallRecord], before: int) -> set[str]:
    """The references the calls before ``before`` returned."""
    found: set[str] = set()
    for call in ran[:before]:
        ref = reference_id(call.result, prefix=True)
        if ref is not None:
            found.add(ref)
    return found


def _entry(entry: CallExpectation, ran: Sequence[CallRecord], index: int) -> list[str]:
    call = ran[index]
    label = f"{call.name} (call {index + 1})"
    problems: list[str] = []
    if entry.opaque_id_input:
        earlier = _returned(ran, index)
        if not earlier:
            problems.append(f"{label}: expected a reference as input, but none was returned before")
        elif not _references_in(dict(call.args)) & earlier:
            problems.append(
                f"{label}: expected an earlier internal:// reference as an argument, "
                f"got {_shown(call.args)}"
            )
    if entry.opaque_id_result and reference_id(call.result, prefix=True) is None:
        problems.append(
            f"{label}: expected an internal:// reference as the result, got {_shown(call.result)}"
        )
    for name, matcher in entry.args.items():
        if name not in call.args:
            problems.append(f"{label}: argument {name} is missing ({matcher.describe()})")
            continue
        problem = matcher.check(call.args[name])
        if problem is not None:
            problems.append(f"{label}: argument {name}: {problem}")
    if entry.args_schema is not None:
        problem = entry.args_schema.check(dict(call.args))
        if problem is not None:
            problems.append(f"{label}: arguments {problem}")
    if entry.result is not None:
        problems += [
            f"{label}: the result {problem}" for problem in entry.result.check(call.result)
        ]
    return problems


def _resolves(case: PromptCase, ran: Sequence[CallRecord]) -> list[str]:
    if case.expect_internal_resolve is None:
        return []
    readers = [(index, call) for index, call in enumerate(ran) if call.name in READER_TOOLS]
    if case.expect_internal_resolve:
        for index, call in readers:
            if _references_in(dict(call.args)) & _returned(ran, index):
                return []
        return ["expected a reader tool (internal_resource_*) to open an earlier reference"]
    listed = {entry.tool_name for entry in case.tool_calls}
    extra = sorted({call.name for _, call in readers if call.name not in listed})
    return [f"no reader tool was expected, but {name} was called" for name in extra]


def _shown(value: object) -> str:
    text = (
        repr(dict(cast("Mapping[str, object]", value)))
        if isinstance(value, Mapping)
        else repr(value)
    )
    return text if len(text) <= 160 else text[:159] + "…"
