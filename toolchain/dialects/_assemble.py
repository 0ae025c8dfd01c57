"""From scanned pieces to a ``DialectParse``: the rules that need the whole output.

In order: blocks of which only one may appear; calls to tools not offered; runs of
adjacent bare JSON holding data (all of it is data then); ReAct (only when no call was
written in explicit markup, and only when it yields a call or an answer: otherwise the
text stays content); whole-output forms (Functionary's first recipient,
GLM-4.7's ``name k=v``); a closing ``</think>`` with no opening tag; and last the
content, with code fences, wrapper tags and line numbers around calls removed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import replace

from toolchain._result import ToolCall
from toolchain.dialects import _functionary as functionary
from toolchain.dialects import _glm as glm
from toolchain.dialects import _react as react
from toolchain.dialects._catalog import Catalog
from toolchain.dialects._engine import Piece, Placed
from toolchain.dialects._result import DialectParse, DialectPolicy
from toolchain.dialects._scan import WS, Block

__all__ = ["assemble", "settled_calls"]

_SEPARATORS = WS + ",;"
_CONTENT_WRAPPERS = (("<response>", "</response>"),)


def settled_calls(
    pieces: Sequence[Piece], start: int, catalog: Catalog, policy: DialectPolicy
) -> tuple[list[ToolCall], int]:
    """Calls certain before the output ends: those of marked blocks, up to the first
    block whose calls still depend on what follows. Returns them and where to go on."""
    calls: list[ToolCall] = []
    index = start
    while index < len(pieces):
        piece = pieces[index]
        if isinstance(piece, Placed) and piece.block.calls:
            block = piece.block
            if not block.marked or block.exclusive is not None:
                break
            if _keeps_all(catalog, policy):
                calls.extend(block.calls)
            else:
                calls.extend(c for c in block.calls if _keeps(c, block, catalog, policy))
        index += 1
    return calls, index


def assemble(
    pieces: Sequence[Piece], catalog: Catalog, policy: DialectPolicy, truncated: bool
) -> DialectParse:
    items = _functionary_header(_exclusive(_merged(pieces)))
    offered = [_offered(item, catalog, policy) for item in items]
    items = _data_runs([item for item, _ in offered])
    problems = [p for item in items if isinstance(item, Placed) for p in item.block.problems]
    # Markup that will not run is "unread" (the model must hear of it); unmarked text
    # naming a tool not offered is only noted: it stays content, as written.
    unread = bool(problems) or truncated
    for item, note in offered:
        if note:
            problems.append(note)
            unread = unread or isinstance(item, Placed)
    if truncated:
        problems.append(f"only the first {policy.max_chars} characters were read")
    marked_calls = any(
        isinstance(item, Placed) and item.block.marked and item.block.calls for item in items
    )
    if not marked_calls:
        unmarked = "".join(_unmarked_text(items))
        found = react.read_react(unmarked, catalog) if _chosen(policy, react.FAMILY) else None
        if found is not None and (found.calls or found.answer is not None):
            return _react_result(items, found, problems, policy, unread)
        if found is not None:  # labels but no step: the text stays content, the why is told
            problems += found.problems
            unread = unread or found.unread
        if not any(isinstance(item, Placed) and _is_markup(item.block) for item in items):
            call = _whole_output_call(unmarked, catalog, policy)
            if call is not None:
                items = [item for item in items if _kept_markup(item)]
                items.append(Placed(Block(0, 0, call[1], calls=(call[0],), marked=False), ""))
    if policy.reasoning == "inline":
        items = [_inline(item) for item in items]
    else:
        items = _opened_by_template(items)
    return _result(items, problems, unread)


def _merged(pieces: Sequence[Piece]) -> list[Piece]:
    """Adjacent prose joined (the scanner settles prose in as many runs as it likes)."""
    out: list[Piece] = []
    run: list[str] = []
    for piece in pieces:
        if isinstance(piece, str):
            run.append(piece)
            continue
        if run:
            out.append("".join(run))
            run = []
        out.append(piece)
    if run:
        out.append("".join(run))
    return out


def _functionary_header(items: list[Piece]) -> list[Piece]:
    """Functionary v3.2 starts a text answer with its recipient, ``all``: not content."""
    first = items[0] if items else None
    if (
        isinstance(first, str)
        and first.startswith("all\n")
        and any(isinstance(i, Placed) and i.block.family == functionary.FAMILY for i in items)
    ):
        return [first[len("all\n") :], *items[1:]]
    return items


def _chosen(policy: DialectPolicy, family: str) -> bool:
    return policy.families is None or family in policy.families


def _keeps_all(catalog: Catalog, policy: DialectPolicy) -> bool:
    """Whether every call is kept, whatever it names (no call need be looked at)."""
    return catalog.names is None or policy.unknown_tools == "keep"


def _keeps(call: ToolCall, block: Block, catalog: Catalog, policy: DialectPolicy) -> bool:
    if catalog.known(call.name) or policy.unknown_tools == "keep":
        return True
    return policy.unknown_tools == "keep_marked" and block.marked


def _exclusive(items: list[Piece]) -> list[Piece]:
    counts = Counter(
        item.block.exclusive
        for item in items
        if isinstance(item, Placed) and item.block.exclusive is not None
    )
    if all(count < 2 for count in counts.values()):
        return items
    out: list[Piece] = []
    reported: set[str] = set()
    for item in items:
        key = item.block.exclusive if isinstance(item, Placed) else None
        if isinstance(item, Placed) and key is not None and counts[key] > 1:
            problems: tuple[str, ...] = ()
            if key not in reported:
                reported.add(key)
                problems = (f"{counts[key]} blocks of {key} where one is expected; none was read",)
            item = Placed(replace(item.block, calls=(), problems=problems), item.raw)
        out.append(item)
    return out


def _offered(item: Piece, catalog: Catalog, policy: DialectPolicy) -> tuple[Piece, str]:
    """Unmarked calls to tools not offered are text; ``drop`` removes marked ones too.
    Returns the piece and a note saying what was not taken as a call."""
    if not isinstance(item, Placed) or not item.block.calls or _keeps_all(catalog, policy):
        return item, ""
    block = item.block
    if all(_keeps(call, block, catalog, policy) for call in block.calls):
        return item, ""
    kept = tuple(call for call in block.calls if _keeps(call, block, catalog, policy))
    dropped = ", ".join(sorted({c.name for c in block.calls if c not in kept}))
    if not block.marked:
        return item.raw, f"read as text, not as calls: {dropped} (not offered)"
    note = f"calls to tools that are not offered were ignored: {dropped}"
    return Placed(replace(block, calls=kept), item.raw), note


def _data_runs(items: list[Piece]) -> list[Piece]:
    """Bare JSON values next to each other form one run; a run holding data is data,
    calls and all (an Ollama rule: a call must not be picked out of a JSON dump)."""
    out: list[Piece] = []
    run: list[int] = []  # indexes into `out` of the current run's bare JSON blocks
    tainted = False
    for item in items:
        bare = isinstance(item, Placed) and not item.block.marked and item.block.family == "json"
        if bare:
            assert isinstance(item, Placed)
            tainted = tainted or item.block.kind == "data"
            run.append(len(out))
        elif not (isinstance(item, str) and run and not item.strip(_SEPARATORS)):
            tainted = _close_run(out, run, tainted)
        out.append(item)
    _close_run(out, run, tainted)
    return [
        item.raw if isinstance(item, Placed) and item.block.kind == "data" else item for item in out
    ]


def _close_run(out: list[Piece], run: list[int], tainted: bool) -> bool:
    if tainted:
        for index in run:
            placed = out[index]
            assert isinstance(placed, Placed)
            out[index] = placed.raw
    run.clear()
    return False


def _unmarked_text(items: Sequence[Piece]) -> Iterator[str]:
    """The text ReAct and whole-output forms are read from: prose and unmarked blocks."""
    for item in items:
        if isinstance(item, str):
            yield item
        elif not item.block.marked:
            yield item.raw


def _is_markup(block: Block) -> bool:
    """A block of call markup (not thinking, not a token): its presence rules out reading
    the whole output as one call."""
    return block.family not in ("reasoning", "tokens") and block.kind != "data"


def _kept_markup(item: Piece) -> bool:
    """Pieces that stay beside a whole-output call: reasoning and tokens."""
    return isinstance(item, Placed) and item.block.marked


def _whole_output_call(
    text: str, catalog: Catalog, policy: DialectPolicy
) -> tuple[ToolCall, str] | None:
    for reader, family in ((functionary.start_call, functionary.FAMILY), (glm.kv_call, glm.FAMILY)):
        call = reader(text, catalog) if _chosen(policy, family) else None
        if call is not None and (catalog.known(call.name) or policy.unknown_tools == "keep"):
            return call, family
    return None


def _react_result(
    items: list[Piece],
    found: react.ReActRead,
    problems: list[str],
    policy: DialectPolicy,
    unread: bool,
) -> DialectParse:
    kept = [item for item in items if _kept_markup(item)]
    if policy.reasoning == "inline":
        kept = [_inline(item) for item in kept]
    base = _result(kept, [], unread=False)
    reasoning = "\n".join(r for r in (base.reasoning, found.reasoning) if r) or None
    content = "\n".join(c for c in (base.content, found.answer) if c) or None
    valid = tuple(c for c in found.calls if c.rejected is None)
    return DialectParse(
        calls=valid,
        content=content,
        reasoning=reasoning,
        answer=found.answer,
        format=react.FAMILY if valid or found.answer is not None else base.format,
        error=_said_once([*problems, *found.problems]),
        rejected=tuple(c for c in found.calls if c.rejected is not None),
        unread=unread or found.unread,
    )


def _inline(item: Piece) -> Piece:
    if isinstance(item, Placed) and item.block.family == "reasoning":
        return item.raw
    return item


def _opened_by_template(items: list[Piece]) -> list[Piece]:
    """``…</think>`` with no opening tag: the template opened the block, so the text
    before it is reasoning, as long as nothing but text came before it."""
    for index, item in enumerate(items):
        if isinstance(item, Placed) and item.block.kind == "think_close":
            before = items[:index]
            if all(_is_text(p) for p in before):
                thought = "".join(p for p in before if isinstance(p, str))
                block = Block(0, 0, "reasoning", kind="reasoning", reasoning=thought)
                return [Placed(block, thought), *items[index + 1 :]]
            return items
        if not _is_text(item):
            return items
    return items


def _is_text(item: Piece) -> bool:
    """Prose, or a mark removed from inside it (a citation)."""
    return isinstance(item, str) or item.block.kind == "inline"


def _result(items: list[Piece], problems: list[str], unread: bool) -> DialectParse:
    items = _absorb_wrappers(items)
    segments: list[str] = []
    reasoning: list[str] = []
    calls: list[ToolCall] = []
    rejected: list[ToolCall] = []
    answer: str | None = None
    call_family = answer_family = ""
    prose: list[str] = []
    for item in items:
        if isinstance(item, str):
            prose.append(item)
            continue
        if item.block.kind == "inline":
            continue
        segments.append("".join(prose))
        prose = []
        block = item.block
        if block.content is not None:
            segments.append(block.content)
        if block.reasoning is not None:
            reasoning.append(block.reasoning.strip())
        if block.answer is not None and answer is None:
            answer, answer_family = block.answer, block.family
        valid = [call for call in block.calls if call.rejected is None]
        if valid:
            calls += valid
            call_family = call_family or block.family
        if len(valid) < len(block.calls):
            rejected += [call for call in block.calls if call.rejected is not None]
    segments.append("".join(prose))
    content = "\n".join(s.strip() for s in segments if s.strip()) or None
    return DialectParse(
        calls=tuple(calls),
        content=_unwrapped(content),
        reasoning="\n".join(r for r in reasoning if r) or None,
        answer=answer,
        format=call_family or answer_family or "text",
        error=_said_once(problems),
        rejected=tuple(rejected),
        unread=unread,
    )


def _said_once(problems: list[str]) -> str | None:
    """The problems joined, each once however often it recurs (copies of a block may be
    read as one block or as many, depending on how the text arrived)."""
    return "; ".join(dict.fromkeys(problems)) or None


def _unwrapped(content: str | None) -> str | None:
    if content is None:
        return None
    for opening, closing in _CONTENT_WRAPPERS:
        if content.startswith(opening) and content.endswith(closing):
            return content[len(opening) : -len(closing)].strip() or None
    return content


def _absorb_wrappers(items: list[Piece]) -> list[Piece]:
    """Strip what wraps a block of markup in the text on both sides of it: code fences,
    ad-hoc tags (``<json>``, ``<response>``, ``<function_call>`` …) and line numbers."""
    out = list(items)
    for index, item in enumerate(out):
        if not isinstance(item, Placed) or item.block.kind not in ("calls", "token"):
            continue
        before = out[index - 1] if index > 0 else None
        after = out[index + 1] if index + 1 < len(out) else None
        if not isinstance(before, str) and not isinstance(after, str):
            continue  # between two blocks: nothing wraps it
        new_before, new_after = _unwrap(
            before if isinstance(before, str) else "", after if isinstance(after, str) else ""
        )
        if isinstance(before, str):
            out[index - 1] = new_before
        if isinstance(after, str):
            out[index + 1] = new_after
    return out


def _unwrap(before: str, after: str) -> tuple[str, str]:
    for _ in range(4):  # a fence around a tag around the call, at most a few deep
        head, tail = before.rstrip(WS), after.lstrip(WS)
        cut = _opening_wrapper(head)
        if cut is not None and tail.startswith(cut[1]):
            before, after = head[: cut[0]], tail[len(cut[1]) :]
            continue
        number = before[before.rfind("\n") + 1 :]
        if number[-1:] in (" ", "\t") and number.rstrip(" \t").isdigit():
            before = before[: len(before) - len(number)]  # `12 ` before a call: a line number
            continue
        break
    return before, after


def _opening_wrapper(head: str) -> tuple[int, str] | None:
    """Where a wrapper that ``head`` ends with starts, and the text that closes it."""
    line_at = head.rfind("\n") + 1
    line = head[line_at:].strip()
    if line.startswith("```"):
        fence = line[: len(line) - len(line.lstrip("`"))]
        label = line[len(fence) :]
        if all(c.isalnum() or c in "+-_" for c in label):
            return line_at + (len(head[line_at:]) - len(head[line_at:].lstrip())), fence
    if head.endswith(">"):
        lt = head.rfind("<")
        name = head[lt + 1 : -1]
        if lt >= 0 and name[:1].isalpha() and all(c.isalnum() or c in "_:-" for c in name):
            return lt, f"</{name}>"
    return None
