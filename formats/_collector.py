"""State shared by the XML and Markdown scanners: the open section and what it holds.

A scanner decides *where* sections start and end; the collector keeps the content,
decodes it, emits events and builds the final ``name -> contents`` mapping.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from formats._section import FormatParseError
from formats._stream import SectionDelta, SectionEnd, SectionEvent, SectionStart


def as_is(content: str) -> str:
    """The decoder for content that is already decoded."""
    return content


class SectionCollector:
    def __init__(
        self,
        names: Mapping[str, str],
        decode: Callable[[str], str],
        *,
        require_section: bool,
    ) -> None:
        # names maps the spelling folded by fold_name (ASCII lower case) to the registered one.
        self._names = names
        self._decode = decode
        self._require = require_section
        self._current: str | None = None
        self._pieces: list[str] = []
        self._started = False  # has the open section received non-space text yet
        # Trailing whitespace not sent yet (it may end the section). A list joined once:
        # re-concatenating a growing string per piece made blank-line runs quadratic.
        self._held: list[str] = []
        self._events: list[SectionEvent] = []
        self._new: list[SectionEvent] = []
        self._result: dict[str, list[str]] = {}

    @property
    def open_section(self) -> str | None:
        return self._current

    def canonical(self, lowered: str) -> str | None:
        return self._names.get(lowered)

    def open(self, name: str) -> None:
        if self._current is not None:
            self.close_current()
        self._current = name
        self._pieces = []
        self._started = False
        self._held = []
        self._emit(SectionStart(name))

    def append(self, raw: str, *, decoded: str | None = None) -> None:
        """Add raw (still encoded) text to the open section; ignored between sections.

        ``decoded`` is the piece's decoded text when the scanner knows it better than
        decoding the piece alone would (a piece taken from the middle of a line).
        """
        if self._current is None or not raw:
            return
        self._pieces.append(raw)
        text = self._decode(raw) if decoded is None else decoded
        if not self._started:
            text = text.lstrip()
            if not text:
                return
            self._started = True
        sent = text.rstrip()
        if not sent:
            self._held.append(text)
            return
        tail = text[len(sent) :]
        if self._held:
            sent = "".join(self._held) + sent
        self._held = [tail] if tail else []
        self._emit(SectionDelta(self._current, sent))

    def close_current(self) -> None:
        if self._current is None:
            return
        name = self._current
        content = self._decode("".join(self._pieces)).strip()
        self._result.setdefault(name, []).append(content)
        self._current = None
        self._pieces = []
        self._emit(SectionEnd(name, content))

    def take_new(self) -> list[SectionEvent]:
        new, self._new = self._new, []
        return new

    def events(self) -> list[SectionEvent]:
        return list(self._events)

    def finish(self) -> dict[str, list[str]]:
        self.close_current()
        if self._require and not self._result:
            raise FormatParseError(list(dict.fromkeys(self._names.values())))
        return {name: list(contents) for name, contents in self._result.items()}

    def _emit(self, event: SectionEvent) -> None:
        self._events.append(event)
        self._new.append(event)
