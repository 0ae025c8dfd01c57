"""Text formats: the section convention a model writes in and reads observations in.

>>> from formats import XMLFormat, Section
>>> fmt = XMLFormat().register_section(Section("answer"))
>>> fmt.parse("Sure.\\n<answer>42</answer>")
{'answer': ['42']}
"""

# What lives here: the TextFormat protocol (_protocol), sections (_section), the library's
# root error GentError, formats' own FormatError and its usage error (_errors), the shared
# registry both formats keep (_registry), one module per format (_xml, _markdown) and the
# streaming parser (_stream, _collector). It imports nothing of toolchain or agents: both
# build on it.

from formats._errors import FormatError, FormatValueError, GentError
from formats._markdown import MarkdownFormat, markdown_decode, markdown_encode
from formats._protocol import TextFormat
from formats._section import FormatParseError, FormattedSection, Section, TextSection
from formats._stream import SectionDelta, SectionEnd, SectionEvent, SectionStart, SectionStream
from formats._xml import XMLFormat, xml_decode, xml_encode

__all__ = [
    "FormatError",
    "FormatParseError",
    "FormatValueError",
    "FormattedSection",
    "GentError",
    "MarkdownFormat",
    "Section",
    "SectionDelta",
    "SectionEnd",
    "SectionEvent",
    "SectionStart",
    "SectionStream",
    "TextFormat",
    "TextSection",
    "XMLFormat",
    "markdown_decode",
    "markdown_encode",
    "xml_decode",
    "xml_encode",
]
