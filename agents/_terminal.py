"""Text from outside (models, users, tools, files) shown on a terminal exactly as written.

rich reads a ``str`` as markup (``[/b]`` raises ``MarkupError``, ``[red]`` colors) and
emoji codes (``openai:x:`` prints a cross), and a terminal obeys the control characters
in it (``ESC]0;…`` sets the title, ``ESC[2J`` clears the screen). So the CLIs never hand
rich a ``str`` they did not write: `literal` makes a ``Text`` (no markup, no emoji) with
every control character but newline and tab shown as an escape such as ``\\x1b``, and
every credential blanked (`toolchain._redact.redact`: a reply or an error may repeat the
key a model adapter sent).
"""

from __future__ import annotations

from typing import Final

from rich.console import Console
from rich.text import Text

from toolchain.runtime import redact

__all__ = ["literal", "print_error", "visible"]

# C0 controls but tab and newline, DEL and the C1 controls (0x9b is a one-byte CSI).
_CONTROLS: Final = [c for c in (*range(0x20), *range(0x7F, 0xA0)) if c not in (0x09, 0x0A)]
_SHOWN: Final = {code: f"\\x{code:02x}" for code in _CONTROLS}
_SHOWN_JSON: Final = {code: f"\\u{code:04x}" for code in _CONTROLS}


def visible(text: str, *, json: bool = False) -> str:
    """``text`` with its control characters written out (``\\x1b``; ``\\u001b`` with
    ``json=True``, which keeps a JSON document valid). Linear in the text's length.

    >>> visible("\\x1b]0;pwned\\x07ok\\n")
    '\\\\x1b]0;pwned\\\\x07ok\\n'
    """
    return text.translate(_SHOWN_JSON if json else _SHOWN)


def literal(text: str, style: str = "") -> Text:
    """``text`` for ``console.print``: no markup, no emoji codes, controls made visible,
    credentials blanked.

    >>> literal("Is [/b] a tag? openai:x:").plain
    'Is [/b] a tag? openai:x:'
    >>> literal("your key sk-proj-abcdefghijklmnopqrstuvwx is invalid").plain
    'your key [REDACTED] is invalid'
    """
    return Text(visible(redact(text)), style=style)


def print_error(console: Console, message: str) -> int:
    """Print a usage or setup error as one line (``error: …``, never wrapped to the
    console's width); returns the exit status such errors end with, 2.

    >>> import io
    >>> out = io.StringIO()
    >>> print_error(Console(file=out, width=20), "--trace /tmp: a directory"), out.getvalue()
    (2, 'error: --trace /tmp: a directory\\n')
    """
    console.print(literal(f"error: {message}", "red"), soft_wrap=True)
    return 2
