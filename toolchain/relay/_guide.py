"""The prompt text that teaches the model how references work, in either mode, with
worked examples for small models."""

from __future__ import annotations

import string
from typing import get_args

from toolchain._errors import ToolchainValueError
from toolchain.relay._references import RelayMode

__all__ = ["relay_guide"]


_GUIDE = """\
Large tool results are kept out of the conversation: in their place the tool returns \
$refnoun such as $ref. It stands for the whole value.
- To give the value to another tool, pass $refit as that argument, exactly as returned. \
The tool receives the full value. Do not read the value first.
- Read the value only when you yourself need its content (to quote or check a \
detail), and only the part you need: internal_resource_grep finds matching lines, \
internal_resource_read_lines and internal_resource_read_slice return a part (a \
negative start counts from the end), internal_resource_length gives the size. \
internal_resource_read returns the whole value: use it only as a last resort.
- Never invent, edit or shorten a reference; references belong to this run and expire."""

_EXAMPLES = """\
Examples (tools other than internal_resource_* are made up):
1. Pass a value on without reading it.
User: Transcribe video 123 and save the transcript as transcript.txt.
Call transcribe(video_id="123") -> $ref
Call save_file(name="transcript.txt", content=$arg)
Wrong: reading the transcript first, or writing its text into content.
2. Read only the part you need.
User: Which number is said at the end of that transcript?
Call internal_resource_read_slice(opaque_reference=$arg, start_index=-300, length=300)
Answer with the number found in those last characters.
3. Search instead of reading.
User: Which images does the page https://example.com show?
Call fetch_page(url="https://example.com") -> $ref2
Call internal_resource_grep(opaque_reference=$arg2, pattern="<img", window=0)
Answer from the matching lines.
4. Mixed values.
User: Analyze the transcript, then save the transcript and the analysis.
Call analyze(text=$arg) -> "Calm tone; three topics." (short results stay plain text)
Call save_file(name="transcript.txt", content=$arg)
Call save_file(name="analysis.txt", content="Calm tone; three topics.")"""

_GUIDE_WORDS: dict[RelayMode, dict[str, str]] = {
    "opaque": {
        "refnoun": "a reference",
        "refit": "the reference string",
        "ref2": "internal://d4e5f6",
        "arg2": '"internal://d4e5f6"',
        "ref": "internal://a1b2c3",
        "arg": '"internal://a1b2c3"',
    },
    "json": {
        "refnoun": "a resource link",
        "refit": "the resource link",
        "ref2": '{"type":"resource_link","uri":"internal://d4e5f6"}',
        "arg2": '{"type":"resource_link","uri":"internal://d4e5f6"}',
        "ref": '{"type":"resource_link","uri":"internal://a1b2c3"}',
        "arg": '{"type":"resource_link","uri":"internal://a1b2c3"}',
    },
}


def relay_guide(mode: RelayMode, *, few_shot: bool) -> str:
    """The prompt text teaching the model how references work in ``mode``, with worked
    examples when ``few_shot`` (they decide success for small models).

    >>> print(relay_guide("opaque", few_shot=False).splitlines()[0])  # doctest: +ELLIPSIS
    Large tool results are kept out of the conversation: ... such as internal://a1b2c3. ...
    >>> '"uri":"internal://d4e5f6"' in relay_guide("json", few_shot=True)
    True
    """
    if mode not in get_args(RelayMode):
        raise ToolchainValueError(f"mode must be 'opaque' or 'json', not {mode!r}")
    text = _GUIDE + ("\n\n" + _EXAMPLES if few_shot else "")
    return string.Template(text).substitute(_GUIDE_WORDS[mode])
