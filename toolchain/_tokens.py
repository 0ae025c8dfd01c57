"""Offline o200k token counts (the GPT-4o family's encoding), for thresholds and benchmarks.

Any text can be counted, in time linear in its length. The encoder (``bpe-openai``)
refuses a text of a million characters or more and one that makes more than 200,000
tokens, so a long text is counted in pieces of at most ``CHUNK_CHARS`` characters.
The pieces are cut only where o200k's own pre-tokenizer always splits, whatever comes
before or after, so the sum is the exact count of the whole text:

- before a space that follows a character other than whitespace (``word| next``);
- after a line break, before a character other than whitespace or ``/``;
- before an ASCII digit that follows an ASCII letter or punctuation (``id=|42``);
- after an ASCII letter, before ASCII punctuation other than ``'`` (``name|":``).

(o200k splits text into pieces by a regular expression, a letter run, a run of up to
three digits, a punctuation run, a whitespace run, and encodes each piece on its own.
No piece can hold both characters at one of those positions, and no piece's extent
depends on what lies past one.) Only a stretch of more than ``CHUNK_CHARS // 2``
characters with none of these positions (a long run of letters or of one symbol,
base64 without line breaks, a long run of whitespace) is cut where it must be, and the
count may then be off by a few tokens per such cut: at most ``FORCED_CUT_TOKENS`` over
every cut of many random texts (``tests/toolchain/test_tokens.py``), a measured bound,
not a proven one. Such a stretch holds thousands of tokens, so the error stays under
0.1 %.
"""

from __future__ import annotations

import functools
import re
import warnings
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    import bpe_openai

__all__ = ["CHUNK_CHARS", "FORCED_CUT_TOKENS", "SAFE_CUTS", "chunks", "count_tokens", "encoding"]

CHUNK_CHARS: Final = 32_768
"""The longest piece counted at once: at most 4 tokens a character (one a UTF-8 byte),
so a piece stays far below the encoder's 200,000 tokens and million characters."""

FORCED_CUT_TOKENS: Final = 3
"""How far a count moved at most, in our measurements, at a cut inside one of o200k's
pieces (only a stretch of ``CHUNK_CHARS // 2`` characters without a safe place needs one)."""

# The four kinds of position named in the module text (zero-width: a cut goes there).
# `\s` is Python's whitespace, a superset of the Unicode White_Space o200k's `\s` means,
# so every position found here is one in o200k's eyes too.
SAFE_CUTS = re.compile(
    r"(?<=\S)(?= )"
    r"|(?<=[\r\n])(?=[^\s/])"
    r"|(?<=[!-/:-~])(?=[0-9])"
    r"|(?<=[A-Za-z])(?=[!-&(-/:-@\[-`{-~])"
)


@functools.cache
def encoding() -> bpe_openai.Encoding:
    """The o200k encoding, loaded on first use."""
    with warnings.catch_warnings():
        # bpe-openai reads its data (at import, too) with importlib.resources.open_binary,
        # deprecated since Python 3.11; the warning is theirs, not our users' concern.
        warnings.filterwarnings("ignore", "open_binary is deprecated", DeprecationWarning)
        import bpe_openai  # loaded on first count: most runs never count tokens

        loaded = bpe_openai.get_encoding("o200k_base")
        loaded.encode_ordinary("")  # its tables load on first use: inside the filter
        return loaded


def count_tokens(text: str, *, minus: str | None = None) -> int:
    """How many o200k tokens ``text`` is (special-token text counted as plain text), for
    a text of any length (see the module text); with ``minus``, how many more than
    ``minus`` (fewer: below 0), in time that grows with where they differ, not with
    their length.

    >>> count_tokens("Hello world")
    2
    >>> count_tokens("Hello world " * 200_000)  # 2.4 million characters
    400001
    >>> output = '{"temp": 21, "sky": "clear"}' * 10_000
    >>> count_tokens("$weather_1 = " + output, minus=output)
    5
    """
    if minus is not None:
        return _difference(text, minus)
    encode = encoding().encode_ordinary
    if len(text) <= CHUNK_CHARS:  # nearly every text: one call, no scan
        return len(encode(text))
    total = 0
    for piece in chunks(text):
        total += len(encode(piece))
    return total


_REACH: Final = 256
"""Characters searched on each side of a change for a position where o200k splits."""

_BLOCK: Final = 16
"""The first block of characters compared when measuring the shared start and end (the
blocks double from there): a section's head is shorter."""

_SHORT: Final = 64
"""The longest stretch counted once per process (``_window_tokens``)."""


def _difference(text: str, other: str) -> int:
    """``count_tokens(text) - count_tokens(other)``, counted over their differing stretch
    widened to a safe position on each side (see the module text), or to the texts'
    ends when none is within ``_REACH``."""
    if text == other:
        return 0
    shorter = min(len(text), len(other))
    if text.endswith(other) or other.endswith(text):  # only put before (a name): in C
        head, tail = 0, shorter
    else:
        head = _shared(text, other, shorter, from_end=False)
        if text.endswith(other[head:]) or other.endswith(text[head:]):  # put in at `head`
            tail = shorter - head
        else:
            tail = _shared(text, other, shorter - head, from_end=True)
    # A cut at c depends on the characters at c-1 and c only: before `head` both are
    # in the common start, from `len(text) - tail + 1` on both are in the common end,
    # so each cut found there is one in both texts at once.
    start = 0  # the nearest cut before the change: tried position by position, back
    for cut in range(head - 1, max(0, head - _REACH), -1):
        if SAFE_CUTS.match(text, cut):
            start = cut
            break
    at = len(text) - tail + 1
    found_end = SAFE_CUTS.search(text, at, at + _REACH) if tail else None
    end = found_end.start() if found_end is not None else len(text)
    other_end = end - len(text) + len(other)
    return _window_tokens(text[start:end]) - _window_tokens(other[start:other_end])


def _window_tokens(text: str) -> int:
    """``count_tokens(text)`` for the stretch a difference counts; a short one counted
    once per process: it is mostly a name and the first word of an output
    (``$weather_3 = {"temp``), which recur run after run, and the encoder costs more per
    call (its tables cold after a step's other work) than a lookup does."""
    return _short_tokens(text) if len(text) <= _SHORT else count_tokens(text)


@functools.lru_cache(maxsize=4096)
def _short_tokens(text: str) -> int:
    return len(encoding().encode_ordinary(text))


def _shared(a: str, b: str, limit: int, *, from_end: bool) -> int:
    """How long a start (or end) ``a`` and ``b`` share, at most ``limit``: blocks
    compared in C, doubling, then the failing one halved down to the character (linear
    in the shared length, never a Python loop per character)."""

    def same(low: int, high: int) -> bool:
        if from_end:
            return a[len(a) - high : len(a) - low] == b[len(b) - high : len(b) - low]
        return a[low:high] == b[low:high]

    done, step = 0, _BLOCK
    while done < limit:
        upto = min(limit, done + step)
        if not same(done, upto):
            while upto - done > 1:  # the first difference is in [done, upto)
                middle = (done + upto) // 2
                if same(done, middle):
                    done = middle
                else:
                    upto = middle
            return done
        done, step = upto, step * 2
    return limit


def chunks(text: str, size: int = CHUNK_CHARS) -> list[str]:
    """``text`` in pieces of at most ``size`` characters, cut where o200k always splits
    (a forced cut only where a stretch of ``size // 2`` characters has no such place).

    >>> chunks("alpha beta gamma delta", 10)
    ['alpha', ' beta', ' gamma', ' delta']
    >>> "".join(chunks("x" * 25, 10)) == "x" * 25
    True
    """
    pieces: list[str] = []
    start, end = 0, len(text)
    while end - start > size:
        limit = start + size
        # The first cut in the second half of the window: every piece is at least half
        # a window long, and each character is searched at most once.
        found = SAFE_CUTS.search(text, start + size // 2, limit)
        cut = found.start() if found is not None else _forced(text, limit)
        pieces.append(text[start:cut])
        start = cut
    pieces.append(text[start:])
    return pieces


def _forced(text: str, at: int) -> int:
    """A cut at ``at``, moved back one so a surrogate pair (a str may hold one as two
    code points) stays whole."""
    return at - 1 if "\ud800" <= text[at - 1] <= "\udbff" else at
