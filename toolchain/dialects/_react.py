"""ReAct text: ``Thought:`` / ``Action:`` / ``Action Input:`` / ``Observation:`` /
``Final Answer:`` (LangChain, CrewAI, LlamaIndex's ``Answer:``), labels indented, bold
or spread over blank lines, and the JSON action blob of LangChain's structured agents.

ReAct is read from the whole output, never from a prefix: a later ``Final Answer``
changes what the action means. The rules, and why:

- an answer written *before* any action is the answer (the rest is a continuation the
  model should not have written); an action followed by a final answer is ambiguous
  and reads as no call, with an error (acting on half of it would be a guess);
- text after the first ``Observation:`` is the model imagining the tool's result: it
  is ignored, and a stop word cut short (``Obs``) is not part of the input;
- an ``Action Input`` that is a JSON object (or a Python-style dict, or one wrapped in
  ``Tool(…)``, or cut off before its closing brace) is the arguments; any other text is
  the tool's single input, with surrounding quotes and markdown bold removed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from toolchain._errors import ToolchainError
from toolchain._result import ToolCall
from toolchain.dialects._catalog import Catalog
from toolchain.dialects._json import call_of, decode_exact
from toolchain.dialects._literals import LiteralError, LiteralReader, Syntax
from toolchain.dialects._scan import rejected_call
from toolchain.dialects._values import as_mapping

__all__ = ["FAMILY", "ReActRead", "read_react"]

FAMILY = "react"
_FINAL = "Final Answer:"
# Anchored at a line start; alternatives are fixed words, and no two runs of blanks
# meet with only optional text between them (`[ \t]*(?:\*\*)?[ \t]*` splits a run of n
# blanks n ways, and a failing match tries them all: a line of blanks was quadratic), so
# a line costs at most its label's length, or its run of blanks, to match.
_LABEL = re.compile(
    r"[ \t]*(?:(?:\*\*|__)[ \t]*)?(thought|action input|action|observation|final answer|answer)"
    r"[ \t]*(?:\d+[ \t]*)?(?:(?:\*\*|__)[ \t]*)?:(?:[ \t]*(?:\*\*|__))?",
    re.IGNORECASE,
)
# The same, after the newline that starts its line: a literal first character lets the
# regex engine skip to each line at C speed.
_LINE_LABEL = re.compile("\n" + _LABEL.pattern, re.IGNORECASE)
# A label names one of these words: text holding none of them has no ReAct step.
_WORDS = ("thought", "action", "observation", "answer")
_NO_INPUT = "an 'Action:' has no 'Action Input:' after it"
_CALL_WRAPPER = re.compile(r"[\w.]+\(")
_REPAIRS = ("}", '"}', "]}", '"]}', "}}", '"}}')
_STOP_WORD = "Observation:"


@dataclass(frozen=True, slots=True)
class ReActRead:
    calls: tuple[ToolCall, ...]
    answer: str | None
    reasoning: str | None
    problems: tuple[str, ...]
    unread: bool = False
    """A step the model meant was not read: an action followed by a final answer, or an
    ``Action:`` naming an offered tool with no input. Other problems are stray labels
    in text that stays text (``Action: call your bank.`` in prose)."""


@dataclass(frozen=True, slots=True)
class _Section:
    label: str
    line: int  # where its line starts
    value: str


def read_react(text: str, catalog: Catalog) -> ReActRead | None:
    """The ReAct step in ``text``; ``None`` when the text has no ReAct action or answer."""
    lowered = text.lower()
    if not any(word in lowered for word in _WORDS):
        return None
    if _actions_only(text, lowered, catalog):
        # Only `Action:` labels, no input and no JSON: no call can be read, however many
        # labels there are (a model looping on `Action:` must not cost a pass per label).
        first = _LINE_LABEL.search("\n" + text)
        if first is None:
            return None
        reasoning = text[: first.start()].strip() or None
        return ReActRead((), None, reasoning, (_NO_INPUT,))
    sections, preamble = _sections(text)
    labels = {section.label for section in sections}
    if not labels & {"action", "action input", "final answer"} and not (
        {"answer", "thought"} <= labels
    ):
        return None
    thoughts = [preamble] + [s.value for s in sections if s.label == "thought"]
    reasoning = "\n".join(t.strip() for t in thoughts if t.strip()) or None
    actions = [s for s in sections if s.label in ("action", "action input")]
    final_at = text.find(_FINAL)
    if final_at >= 0 and (not actions or final_at < actions[0].line):
        return ReActRead((), _answer(text, final_at, sections), reasoning, ())
    if actions and final_at > actions[0].line:
        problem = "the output holds both an action and a final answer; write one of them"
        return ReActRead((), None, reasoning, (problem,), unread=True)
    if not actions:
        answer = next(s.value.strip() for s in sections if s.label in ("answer", "final answer"))
        return ReActRead((), answer, reasoning, ())
    calls, problems, unread = _calls(sections, catalog)
    return ReActRead(tuple(calls), None, reasoning, tuple(dict.fromkeys(problems)), unread=unread)


def _actions_only(text: str, lowered: str, catalog: Catalog) -> bool:
    """Whether every label in ``text`` can only be an ``Action:`` with no input, none
    of them a JSON action nor naming an offered tool: then no call can be read and the
    reading does not depend on the labels. Decided by searches of the whole text."""
    if any(word in lowered for word in ("thought", "observation", "answer", "input")):
        return False
    if "{" in text:
        return False
    return catalog.names is None or not any(name in text for name in catalog.names)


def _sections(text: str) -> tuple[list[_Section], str]:
    # In "\n" + text, a label's newline is at the index its line starts at in text.
    found = [
        (label.group(1).lower(), label.start(), label.end() - 1)
        for label in _LINE_LABEL.finditer("\n" + text)
    ]
    sections = [
        _Section(label, start, text[value : found[i + 1][1] if i + 1 < len(found) else len(text)])
        for i, (label, start, value) in enumerate(found)
    ]
    preamble = text[: found[0][1]] if found else text
    return sections, preamble


def _answer(text: str, final_at: int, sections: list[_Section]) -> str:
    start = final_at + len(_FINAL)
    stop = next((s.line for s in sections if s.line > final_at), len(text))
    return text[start:stop].strip()


def _calls(sections: list[_Section], catalog: Catalog) -> tuple[list[ToolCall], list[str], bool]:
    """The calls, the problems, and whether a problem is a call to an offered tool."""
    calls: list[ToolCall] = []
    problems: list[str] = []
    unread = False
    index = 0
    while index < len(sections):
        section = sections[index]
        if section.label == "observation":
            break  # the rest is the model imagining what the tool returned
        if section.label == "action input":
            problems.append("an 'Action Input:' has no 'Action:' before it")
        elif section.label == "action":
            following = sections[index + 1] if index + 1 < len(sections) else None
            if following is not None and following.label == "action input":
                name = _action_name(section.value)
                if name:
                    name = catalog.resolve(name)
                    try:
                        calls.append(ToolCall(name, _input(name, following.value, catalog)))
                    except _NotJSON as refused:  # read, but holds NaN, bytes …: say so
                        calls.append(rejected_call(name, f"{name}: {refused}"))
                else:
                    problems.append("an 'Action:' names no tool")
                index += 1
            else:
                blob = _json_action(section.value, catalog)
                if blob is None:
                    problems.append(_NO_INPUT)
                    named = catalog.resolve(_action_name(section.value))
                    unread = unread or (catalog.names is not None and named in catalog.names)
                else:
                    calls.append(blob)
        index += 1
    return calls, problems, unread


def _action_name(value: str) -> str:
    line = next((part.strip() for part in value.splitlines() if part.strip()), "")
    if line.endswith(")") and " (" in line:
        line = line[: line.index(" (")]
    return line.strip().strip("*`'\"[]").strip()


def _json_action(value: str, catalog: Catalog) -> ToolCall | None:
    """LangChain's structured agent: ``Action:`` then a (fenced) ``{"action", …}`` blob."""
    brace = value.find("{")
    if brace < 0:
        return None
    try:
        found = _object(value[brace:].rstrip().rstrip("`").rstrip())
    except _NotJSON:
        return None
    call = call_of(found, catalog, bare=False) if found is not None else None
    return call if isinstance(call, ToolCall) else None


def _input(name: str, raw: str, catalog: Catalog) -> dict[str, object]:
    text = raw.strip()
    lines = text.rsplit("\n", 1)
    tail = lines[-1].strip()
    if len(lines) == 2 and len(tail) >= 2 and _STOP_WORD.startswith(tail):
        text = lines[0].rstrip()
    text = text.removeprefix("**").removesuffix("**").strip()
    candidate = text
    wrapper = _CALL_WRAPPER.match(text)
    if wrapper is not None and text.endswith(")"):
        candidate = text[wrapper.end() : -1].strip()
    if candidate.startswith("{"):
        found = _object(candidate)
        if found is not None:
            return found
    return catalog.bind(name, _unquoted(text))


class _NotJSON(ToolchainError, ValueError):
    """An object read leniently holds values JSON cannot (``NaN``, ``b'x'``): the reasons."""


def _object(text: str) -> dict[str, object] | None:
    """A JSON object, or a lenient reading of one (single quotes, comments, trailing
    prose, a missing closing brace); raises ``_NotJSON`` when that reading holds values
    JSON cannot carry."""
    try:
        exact = as_mapping(decode_exact(text))
    except ValueError:
        exact = None
    if exact is not None:
        return exact
    for suffix in ("", *_REPAIRS):
        reader = LiteralReader(text + suffix, Syntax(comments=True))
        try:
            found, _ = reader.value(0)
        except LiteralError as error:
            if error.at_end:
                continue
            return None
        if reader.problems and isinstance(found, dict):
            raise _NotJSON("; ".join(reader.problems))
        return None if reader.problems else as_mapping(found)
    return None


def _unquoted(text: str) -> str:
    for quote in ('"', "'"):
        if text.startswith(quote):
            return text[1:-1] if len(text) > 1 and text.endswith(quote) else text[1:]
    return text
