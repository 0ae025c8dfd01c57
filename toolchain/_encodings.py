"""How tool outputs are written for the model: ``observations="json" | "yaml" | "toon" | "auto"``.

A chain's call syntax and the encoding of its observations are separate choices: a
``JSONToolChain(observations="toon")`` still reads JSON calls and shows each output as
TOON (Token-Oriented Object Notation, https://github.com/toon-format/spec): objects as
indented ``key: value`` lines, a list of primitives on one line (``tags[2]: a,b``) and a
list of records with the same keys as a table whose header names the fields once::

    users[2]{id,name}:
      1,Ada
      2,Bob

``auto`` writes each output as JSON and TOON, and as YAML too when its JSON is at most
``YAML_CANDIDATE_CHARS`` long, and keeps the text with the fewest o200k tokens
(``toolchain._tokens``), ties going to JSON, then YAML. Counts are exact, not estimated,
so ``auto`` never shows more tokens than compact JSON would. YAML is left out of large
outputs for speed: PyYAML writes about 1 ms per kilobyte where TOON takes tens of
microseconds, and where YAML beats both others at all, in our measurements, it is by a
few tokens (list items without TOON's ``[N]`` lengths), noise on a large output.
``python -m benchmarks --only observations`` prints the tokens of each encoding, what
``auto`` chose against the exact minimum of the three, and its time per output.

``toon`` writes JSON instead where TOON costs more, by three stated rules:

- where the TOON text would be longer than the JSON (a float ``toons`` spells in
  hundreds of digits, a short list whose ``[N]:`` header outweighs JSON's brackets),
  JSON: ``toon`` never shows more characters than JSON;
- where the TOON nests (a line indented four levels deep, or objects folded into a
  table's header, ``[2]{a{b},n}:``), the one of the two with fewer o200k tokens, ties
  going to TOON: TOON indents every line two spaces a level where JSON closes a level
  with one character, and folded headers are all braces, so a value nested 30 levels
  took six times JSON's characters and half as many tokens again, and one nested 8
  levels in single records took fewer characters and more tokens. Deep nesting is
  never shown in more tokens than JSON; flatter TOON is not counted (counting costs
  more than writing it);
- where the output holds an object of more than ``TOON_MAX_KEYS`` keys, JSON, TOON not
  tried: ``toons`` (and decoding the JSON view) takes time that grows faster than the
  output on objects that wide (10 records of 150,000 keys took 4 to 7 times as long as
  10 of 50,000), and a table that wide is not one a model reads by its columns.

``auto`` keeps the last rule; it decides the others exactly, by counting every text.

Whatever the encoding, a ``str`` output is shown as the tool wrote it, and a scalar as
JSON writes it. TOON is written from the JSON view of the output (JSON's text decoded
again), so every encoding shows the same values: ``NaN`` and infinities as ``null``,
number keys as strings, models and dataclasses as their fields; an output JSON refuses
is refused with the same ``OutputError``.

The encoder is ``toons`` (Rust, on PyPI), chosen over ``toon-format`` (the official pure
Python one) after comparing both on our outputs: over 5,000 generated JSON values their
texts were the same except for how they spell floats (``toons`` follows spec 4.1, digits
without an exponent; ``toon-format`` spec 4.4, an exponent past 1e21 and below 1e-6), each
decoded the other's text to the same values, and ``toons`` encoded 100 records about 25
times faster and imports in under a millisecond (``toon-format`` 50 ms), which matters
here because ``auto`` encodes every output. Both were released within weeks of each
other (toons 0.9.0, toon-format 1.2.0). What the choice costs: ``toons`` is a spec
behind, and writes a float such as 1.5e300 as its 301 digits (``auto`` then keeps JSON).
It loads with the first output written as TOON, never by ``import toolchain``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from types import ModuleType
from typing import Literal, TypeAlias, cast, get_args

import msgspec

from toolchain._output import OutputError, to_json, to_yaml

__all__ = [
    "TOON_MAX_KEYS",
    "YAML_CANDIDATE_CHARS",
    "ObservationEncoding",
    "check_observations",
    "encoder_for",
    "to_auto",
    "to_toon",
]

ObservationEncoding: TypeAlias = Literal["json", "yaml", "toon", "auto"]
"""How a chain writes tool outputs for the model (its ``observations`` option)."""

_ENCODINGS: tuple[str, ...] = get_args(ObservationEncoding)
YAML_CANDIDATE_CHARS = 4_096
"""``auto`` writes an output as YAML too only when its compact JSON is at most this long."""
TOON_MAX_KEYS = 10_000
"""An output holding an object of more keys than this is written as JSON by ``toon`` and
``auto`` (see the module text)."""
_SCALARS = (int, float, bool, type(None))  # the same text in every encoding: JSON's
_SCALAR_TYPES = frozenset({str, int, float, bool, type(None)})
_NESTING_TYPES = frozenset({dict, list, tuple})
_KNOWN_TYPES = _SCALAR_TYPES | _NESTING_TYPES
# TOON that nests: a line indented four levels (eight spaces), or a table header with
# objects folded into it (`{a{b}`): only there was TOON seen shorter than JSON yet more
# tokens. Literal runs and one character class: linear.
_DEEP_INDENT = "\n" + " " * 8
_FOLDED_HEADER = re.compile(r"\{[^{}\n]*\{")


@functools.cache
def _toons() -> ModuleType:
    import toons  # loaded with the first TOON output: most chains never write one

    return toons


def _json_view(value: object) -> tuple[str, object | None]:
    """Compact JSON for ``value``, and the JSON-model value that text decodes to; ``None``
    in its place when the output holds an object of more than ``TOON_MAX_KEYS`` keys
    (JSON is then written, and the text not decoded: decoding is slow there too)."""
    text = to_json(value)  # JSON's failures are the output's failures
    # Fewer colons than that bound, in C: no object can be as wide (the common case).
    if len(text) <= 4 * TOON_MAX_KEYS or text.count(":") <= TOON_MAX_KEYS:
        return text, msgspec.json.decode(text)
    wide = _wider_than(value, TOON_MAX_KEYS)
    if wide:
        return text, None
    data = msgspec.json.decode(text)
    if wide is None and _wider_than(data, TOON_MAX_KEYS):
        return text, None
    return text, data


def _wider_than(value: object, keys: int) -> bool | None:
    """Whether ``value`` holds a dict of more than ``keys`` keys, by a walk that meets each
    dict, list and tuple once; ``None`` when it holds another kind of object (a model, a
    dataclass …) whose fields the walk cannot see."""
    level: list[object] = [value]
    while level:
        below: list[object] = []
        for item in level:
            children: Iterable[object]
            if type(item) is dict:
                mapping = cast("dict[object, object]", item)
                if len(mapping) > keys:
                    return True
                children = mapping.values()
            elif type(item) is list or type(item) is tuple:
                children = cast("list[object]", item)
            else:
                return None
            kinds = set(map(type, children))  # at C speed: most values are scalars
            if kinds <= _SCALAR_TYPES:
                continue
            if not kinds <= _KNOWN_TYPES:
                return None
            below.extend([child for child in children if type(child) in _NESTING_TYPES])
        level = below
    return False


def _toon_of(data: object) -> str:
    """TOON for a JSON-model value (what ``msgspec.json.decode`` returns)."""
    if data == {}:
        # TOON writes an empty object at the top as an empty document, which would read
        # as "the tool returned nothing".
        return "{}"
    try:
        text: str = _toons().dumps(data)
    except (TypeError, ValueError) as error:  # e.g. nested deeper than toons allows
        raise OutputError(
            f"tool output cannot be written as TOON ({type(error).__name__}); return a "
            "flatter value, or use observations='json'"
        ) from error
    return text


def to_toon(value: object) -> str:
    """TOON for a tool output; a string is passed through as written, a scalar as JSON,
    and JSON is written where TOON would be longer, where TOON nests and JSON has fewer
    tokens, or where the output holds an object of more than ``TOON_MAX_KEYS`` keys
    (see the module text).

    >>> print(to_toon({"users": [{"id": 1, "name": "Ada"}, {"id": 2, "name": "Bob"}]}))
    users[2]{id,name}:
      1,Ada
      2,Bob
    >>> to_toon({"tags": ["a", "b"], "ok": True}), to_toon("plain text")
    ('tags[2]: a,b\\nok: true', 'plain text')
    >>> to_toon({"a": {"b": {"c": {"d": {"e": [1]}}}}})  # deep: TOON indents every level
    '{"a":{"b":{"c":{"d":{"e":[1]}}}}}'
    """
    if isinstance(value, str) or type(value) in _SCALARS:
        return to_json(value)
    json_text, data = _json_view(value)
    if data is None:
        return json_text
    text = _toon_of(data)
    if len(text) > len(json_text):
        return json_text
    if _DEEP_INDENT in text or _FOLDED_HEADER.search(text) is not None:
        from toolchain._tokens import count_tokens  # bpe-openai loads with the first count

        if count_tokens(text) > count_tokens(json_text):
            return json_text
    return text


def to_auto(value: object) -> str:
    """The output in whichever of JSON, YAML and TOON has the fewest o200k tokens (ties
    go to JSON, then YAML; YAML only for outputs of up to ``YAML_CANDIDATE_CHARS``).

    >>> to_auto({"temp": 21}), to_auto([1, 2])
    ('temp: 21', '[1,2]')
    """
    if isinstance(value, str) or type(value) in _SCALARS:
        return to_json(value)
    json_text, data = _json_view(value)
    if data is None:  # an object wider than TOON_MAX_KEYS: too large for YAML, too slow for TOON
        return json_text
    from toolchain._tokens import count_tokens  # bpe-openai loads with the first count

    best, fewest = json_text, count_tokens(json_text)
    small = len(json_text) <= YAML_CANDIDATE_CHARS
    for encode in (to_yaml, _toon_of) if small else (_toon_of,):
        try:
            text = encode(data)
        except OutputError:  # JSON could write it: the others are only candidates
            continue
        tokens = count_tokens(text)
        if tokens < fewest:
            best, fewest = text, tokens
    return best


_ENCODERS: dict[str, Callable[[object], str]] = {
    "json": to_json,
    "yaml": to_yaml,
    "toon": to_toon,
    "auto": to_auto,
}


def check_observations(observations: object) -> ObservationEncoding:
    """``observations`` if it names an encoding, else a ``ValueError`` listing them.

    >>> check_observations("toon")
    'toon'
    >>> check_observations("xml")
    Traceback (most recent call last):
    ...
    ValueError: observations must be one of 'json', 'yaml', 'toon', 'auto', not 'xml'
    """
    if isinstance(observations, str) and observations in _ENCODINGS:
        return cast("ObservationEncoding", observations)
    names = ", ".join(repr(name) for name in _ENCODINGS)
    raise ValueError(f"observations must be one of {names}, not {observations!r}")


def encoder_for(observations: ObservationEncoding) -> Callable[[object], str]:
    """The function that writes an output in that encoding.

    >>> encoder_for("toon")({"a": [1, 2]})
    'a[2]: 1,2'
    """
    return _ENCODERS[check_observations(observations)]
