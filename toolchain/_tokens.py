"""Offline o200k token counts (the GPT-4o family's encoding), for thresholds and benchmarks."""

from __future__ import annotations

import functools
import warnings
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import bpe_openai

__all__ = ["count_tokens"]


@functools.cache
def _encoding() -> bpe_openai.Encoding:
    with warnings.catch_warnings():
        # bpe-openai reads its data (at import, too) with importlib.resources.open_binary,
        # deprecated since Python 3.11; the warning is theirs, not our users' concern.
        warnings.filterwarnings("ignore", "open_binary is deprecated", DeprecationWarning)
        import bpe_openai  # loaded on first count: most runs never count tokens

        encoding = bpe_openai.get_encoding("o200k_base")
        encoding.encode_ordinary("")  # its tables load on first use: inside the filter
        return encoding


def count_tokens(text: str) -> int:
    """How many o200k tokens ``text`` is (special-token text counted as plain text).

    >>> count_tokens("Hello world")
    2
    """
    return len(_encoding().encode_ordinary(text))
