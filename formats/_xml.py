"""XML-style sections: ``<name>content</name>``.

Encoding. Content is written raw except for the few sequences that could be read as
markup, so JSON, code and prose reach the model unchanged:

* a ``<`` that starts something tag-like (``<a``, ``</a``, ``<!``, ``<?``) becomes ``&lt;``;
* an ``&`` that starts ``&lt;``, ``&gt;`` or ``&amp;`` becomes ``&amp;``.

Parsing decodes exactly those three entities and nothing else, so
``parse(format_section(n, c))[n] == [c.strip()]`` for every string ``c``, and no tool
output can open or close a section in an observation.

Pairing. Only ``<name>`` / ``</name>`` of registered names are tags. Names are ASCII
(``[A-Za-z_][A-Za-z0-9_.-]*``) and letter case is ignored in ASCII only: ``<ANSWER>`` is
``answer``, but ``thin`` + U+212A KELVIN SIGN + ``ing`` is not ``thinking``.
A closing tag pairs with the nearest opening tag of its name: ``I will answer in
<answer> form`` inside ``<thinking>`` is prose, closed over by ``</thinking>``. An
opening tag that starts a line while a section is open closes that section first:
models that forget ``</thinking>`` still get their ``<action>`` run, and in
``I will answer in <answer> tags.\n<answer>42</answer>`` the real answer is the last
``answer``. The price: a registered tag alone on a line inside a code block in a
section splits it (write such examples inline). Text outside sections is ignored; a
section cut off by the end of the output is returned as it stands.

Cost. Parsing is linear in the output, however hostile: tags are found in one regex
pass with no nested repetition, and the registered opening tags nested in the open
section are kept as a stack with a count per name, so a closing tag finds its partner
(or learns it has none) in amortised constant time. The streaming scanner finds every
tag and looks its name up; a one-shot ``parse`` splits the whole output in C with a
pattern of the registered names only (``[before, "/"?, name, text, ...]``), so its loop
runs once per registered tag, not once per tag-like text, and keeps no stream state.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Self

from formats._collector import SectionCollector, as_is
from formats._registry import SectionRegistry
from formats._section import (
    NAME_PATTERN,
    FormatParseError,
    FormattedSection,
    TextSection,
    check_name,
    fold_name,
)
from formats._stream import SectionEvent, SectionStream

__all__ = ["XMLFormat", "xml_decode", "xml_encode"]

_TAG = re.compile(f"<(/?)({NAME_PATTERN})>")
# XML 1.0's NameStartChar: any "<" followed by one could start a tag for a reader.
_NAME_START = (
    ":A-Z_a-z\xc0-\xd6\xd8-\xf6\xf8-\u02ff\u0370-\u037d\u037f-\u1fff\u200c\u200d"
    "\u2070-\u218f\u2c00-\u2fef\u3001-\ud7ff\uf900-\ufdcf\ufdf0-\ufffd"
    "\U00010000-\U000effff"
)
_ESCAPE_LT = re.compile(f"<(?=[/!?{_NAME_START}]|[^\\W\\d])")
_ESCAPE_AMP = re.compile(r"&(?=(?:lt|gt|amp);)")
_ENTITY = re.compile(r"&(lt|gt|amp);")
_ENTITY_CHARS = {"lt": "<", "gt": ">", "amp": "&"}
# A chunk may end inside "&amp;": hold back a possible entity prefix so deltas decode right.
_PARTIAL_ENTITY = re.compile(r"&(?:a(?:m(?:p)?)?|l(?:t)?|g(?:t)?)?\Z")


def xml_encode(content: str) -> str:
    """Encode content so it cannot be read as markup (see the module docstring).

    >>> xml_encode("if a<b && x: </answer> &lt;")
    'if a&lt;b && x: &lt;/answer> &amp;lt;'
    """
    if "<" not in content and "&" not in content:
        return content  # the common case (JSON, YAML, prose): nothing to scan
    return _ESCAPE_LT.sub("&lt;", _ESCAPE_AMP.sub("&amp;", content))


def xml_decode(content: str) -> str:
    """Decode ``&lt;``, ``&gt;`` and ``&amp;``; leave everything else as written.

    >>> xml_decode("a &lt;b> &amp;lt; &nbsp;")
    'a <b> &lt; &nbsp;'
    """
    if "&" not in content:
        return content
    return _ENTITY.sub(lambda m: _ENTITY_CHARS[m.group(1)], content)


@functools.lru_cache(maxsize=64)
def _tag_splitter(folded: tuple[str, ...]) -> re.Pattern[str]:
    """A pattern matching the tags of ``folded`` names only, its groups the ``/`` of a
    closing tag and the name as written. ASCII-only case folding (``re.ASCII``): no
    non-ASCII letter matches a name's letter (KELVIN SIGN is not ``k``), as in
    ``fold_name``."""
    names = "|".join(re.escape(n) for n in sorted(folded, key=len, reverse=True))
    return re.compile(f"<(/?)({names})>", re.IGNORECASE | re.ASCII)


def _split_sections(
    output: str, names_by_fold: Mapping[str, str], splitter: re.Pattern[str], *, decode: bool
) -> dict[str, list[str]]:
    """The one-shot parse: every section's contents, as `_XMLScanner` finds them.

    The same rules, read off the split: a registered opening tag opens a section when
    none is open or it starts a line (only blanks before it since the last newline),
    and is text otherwise, kept on the inner stack; a closing tag pairs with the nearest
    inner opening tag of its name, else closes the open section if it is that one, else
    is text. A property test holds the two to the same result on any text.
    ``splitter`` is `_tag_splitter` of the names.

    Whether a tag starts a line is only asked of an opening tag inside an open section,
    so it is worked out there, from the text since the tag before (never before the
    first tag: nothing is open then): a well-formed output pays nothing for it.
    """
    if not names_by_fold:
        return {}
    parts = iter(splitter.split(output))
    next(parts)  # the text before the first tag: outside every section
    # Each section opened, in order, with its raw pieces (joined and decoded at the end).
    sections: list[tuple[str, list[str]]] = []
    pieces: list[str] = []
    current: str | None = None
    inner: list[str] = []
    inner_counts: dict[str, int] = {}
    previous = ""  # the text between the tag before and this one
    for slash, written, after in zip(parts, parts, parts, strict=True):  # slash, name, text
        name = names_by_fold[written.lower()]  # the pattern's names are ASCII
        if current is None:
            if not slash:
                current, pieces = name, []
                sections.append((name, pieces))
        elif not slash:
            newline = previous.rfind("\n")
            if newline != -1 and (
                newline == len(previous) - 1 or previous[newline + 1 :].isspace()
            ):
                current, pieces = name, []  # it starts a line: the open section ends
                sections.append((name, pieces))
                inner.clear()
                inner_counts.clear()
            else:
                inner.append(name)
                inner_counts[name] = inner_counts.get(name, 0) + 1
                pieces.append(f"<{written}>")
        elif inner and inner_counts.get(name):
            while True:  # each entry is pushed and popped once: linear overall
                popped = inner.pop()
                inner_counts[popped] -= 1
                if popped == name:
                    break
            pieces.append(f"</{written}>")
        elif name == current:
            current = None
            inner.clear()
            inner_counts.clear()
        else:
            pieces.append(f"</{written}>")
        if current is not None:
            pieces.append(after)
        previous = after
    result: dict[str, list[str]] = {}
    for name, raw in sections:
        content = "".join(raw)
        if decode and "&" in content:
            content = xml_decode(content)
        result.setdefault(name, []).append(content.strip())
    return result


@functools.lru_cache(maxsize=64)
def _folded(names: tuple[str, ...]) -> Mapping[str, str]:
    """Each name by its folded spelling; the same few sets are scanned for again and
    again (a format's sections), and the collector only reads it."""
    return MappingProxyType({fold_name(n): n for n in names})


class _XMLScanner:
    """Incremental scanner for one set of section names."""

    def __init__(
        self,
        names: Iterable[str],
        *,
        require_section: bool,
        decode: bool = True,
    ) -> None:
        names_by_lower = _folded(tuple(names))
        self._collector = SectionCollector(
            names_by_lower, xml_decode if decode else as_is, require_section=require_section
        )
        self._longest = max((len(n) for n in names_by_lower), default=0)
        self._pending = ""
        # Registered opening tags seen inside the open section (innermost last), and how
        # many of each name the stack holds: "is there one to pair with?" in O(1).
        self._inner: list[str] = []
        self._inner_counts: dict[str, int] = {}
        self._line_blank = True  # only whitespace since the last newline

    @property
    def open_section(self) -> str | None:
        return self._collector.open_section

    def events(self) -> list[SectionEvent]:
        return self._collector.events()

    def feed(self, chunk: str) -> list[SectionEvent]:
        if not self._pending and "<" not in chunk and "&" not in chunk:
            self._text(chunk)  # no tag or entity can start here: plain text
            return self._collector.take_new()
        text = self._pending + chunk
        cut = self._safe_end(text)
        self._scan(text, cut)
        self._pending = text[cut:]
        return self._collector.take_new()

    def close(self) -> dict[str, list[str]]:
        self._scan(self._pending, len(self._pending))
        self._pending = ""
        return self._collector.finish()

    def _safe_end(self, text: str) -> int:
        """Where scanning may stop without splitting a tag or an entity."""
        cut = len(text)
        lt = text.rfind("<", max(0, cut - self._longest - 3))
        if lt != -1 and ">" not in text[lt:]:
            cut = lt
        partial = _PARTIAL_ENTITY.search(text, max(0, cut - 4), cut)
        if partial is not None:
            cut = partial.start()
        return cut

    def _scan(self, text: str, end: int) -> None:
        pos = 0
        collector = self._collector
        for match in _TAG.finditer(text, 0, end):
            name = collector.canonical(fold_name(match.group(2)))
            if name is None:
                continue  # unknown tags are content; they stay in the running text
            self._text(text[pos : match.start()])
            pos = match.end()
            if match.group(1):
                self._closing(name, match.group(0))
            else:
                self._opening(name, match.group(0))
        self._text(text[pos:end])

    def _opening(self, name: str, tag: str) -> None:
        current = self._collector.open_section
        if current is None or self._line_blank:
            self._collector.open(name)
            self._clear_inner()
            self._line_blank = False
            return
        self._inner.append(name)
        self._inner_counts[name] = self._inner_counts.get(name, 0) + 1
        self._text(tag)

    def _closing(self, name: str, tag: str) -> None:
        current = self._collector.open_section
        if current is None:
            self._line_blank = False
            return
        if self._inner_counts.get(name):
            # Pair with the nearest inner opening tag of this name; those opened after it
            # stay unclosed. Each entry is pushed and popped once: linear overall.
            counts = self._inner_counts
            while True:
                popped = self._inner.pop()
                counts[popped] -= 1
                if popped == name:
                    break
            self._text(tag)
        elif name == current:
            self._collector.close_current()
            self._clear_inner()
            self._line_blank = False
        else:
            self._text(tag)

    def _clear_inner(self) -> None:
        self._inner.clear()
        self._inner_counts.clear()

    def _text(self, raw: str) -> None:
        if not raw:
            return
        self._collector.append(raw)
        newline = raw.rfind("\n")
        if newline == -1:
            self._line_blank = self._line_blank and raw.isspace()
        else:
            tail = raw[newline + 1 :]
            self._line_blank = not tail or tail.isspace()


class XMLFormat(SectionRegistry):
    """Sections as XML-style tags; observations inside ``<observation>``.

    The default format for agents. Parsing is linear in the output and never fails on
    text that is not well-formed XML: it only looks for the registered tags.

    >>> from formats import Section
    >>> fmt = XMLFormat().register_section(Section("thinking")).register_section(Section("answer"))
    >>> fmt.parse("<thinking>I will answer in <answer> tags.</thinking>\\n<answer>42</answer>")
    {'thinking': ['I will answer in <answer> tags.'], 'answer': ['42']}
    >>> print(fmt.format_section("weather", '{"temp": 21}'))
    <weather>
    {"temp": 21}
    </weather>
    """

    structure_intro = "Format your response using XML-style tags for each section:"
    # `_tag_splitter` of the registered names, made on the first parse after a section
    # is registered (`register_section` clears it): a parse then skips the cache lookup.
    _splitter: re.Pattern[str] | None = None

    def register_section(self, section: TextSection) -> Self:
        super().register_section(section)
        self._splitter = None
        return self

    def parse_nested(self, content: str, names: Iterable[str]) -> dict[str, list[str]]:
        """Sub-sections (nested tags) of a section's content; ``{}`` when none is present.

        ``content`` is what ``parse`` returned, already decoded, so it is not decoded again.

        >>> XMLFormat().parse_nested("<direct_call>[1]</direct_call>", ["direct_call"])
        {'direct_call': ['[1]']}
        """
        names_by_fold = {fold_name(check_name(n)): n for n in names}
        if not names_by_fold:
            return {}
        splitter = _tag_splitter(tuple(names_by_fold))
        return _split_sections(content, names_by_fold, splitter, decode=False)

    def parse(self, output: str) -> dict[str, list[str]]:
        """Every registered section's contents, in order (stripped of outer whitespace),
        as `stream` finds them over the whole text (see the module's *Cost*).

        Raises ``FormatParseError`` when no registered section is present.
        """
        names_by_fold = self._names_by_fold
        splitter = self._splitter
        if splitter is None:
            if not names_by_fold:
                raise FormatParseError([])
            splitter = self._splitter = _tag_splitter(tuple(names_by_fold))
        result = _split_sections(output, names_by_fold, splitter, decode=True)
        if not result:
            raise FormatParseError(list(names_by_fold.values()))
        return result

    def stream(self) -> SectionStream:
        """An incremental parser over the registered sections."""
        return _XMLScanner([s.name for s in self._sections.values()], require_section=True)

    def format_sections(self, sections: Sequence[FormattedSection]) -> str:
        """Several sections, children nested as tags, one per line block."""
        return "\n".join([_render(section) for section in sections])

    def wrap_observation(self, text: str) -> str:
        """Wrap tool output sections as ``<observation>``; ``""`` stays ``""``."""
        return f"<observation>\n{text}\n</observation>" if text else ""


# Names `_render` has checked: a chain writes the same few tool names every step. Short
# names only, and cleared when full, so it stays small whatever names come through.
_CHECKED: set[str] = set()
_CHECKED_NAME_CHARS = 64
_CHECKED_KEPT = 1024


def _checked(name: str) -> str:
    """``check_name(name)``, remembered for short names that passed."""
    if name in _CHECKED:
        return name
    check_name(name)
    if len(name) <= _CHECKED_NAME_CHARS:
        if len(_CHECKED) >= _CHECKED_KEPT:
            _CHECKED.clear()
        _CHECKED.add(name)
    return name


def _render(section: FormattedSection) -> str:
    name = _checked(section.name)
    content = xml_encode(section.content) if section.escape else section.content
    if section.children:
        body = [content] if content else []
        body.extend([_render(child) for child in section.children])
        inner = "\n".join(body)
    else:
        inner = content  # most sections (a tool's output) have no children
    return f"<{name}>\n{inner}\n</{name}>" if inner else f"<{name}>\n</{name}>"
