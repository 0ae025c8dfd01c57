"""Every format family and the openers the scanner looks for."""

from __future__ import annotations

import functools

from toolchain._errors import ToolchainValueError
from toolchain.dialects import _bare_json as bare_json
from toolchain.dialects import _deepseek as deepseek
from toolchain.dialects import _functionary as functionary
from toolchain.dialects import _gemma as gemma
from toolchain.dialects import _glm as glm
from toolchain.dialects import _harmony as harmony
from toolchain.dialects import _hermes as hermes
from toolchain.dialects import _invoke
from toolchain.dialects import _kimi as kimi
from toolchain.dialects import _mistral as mistral
from toolchain.dialects import _pythonic as pythonic
from toolchain.dialects import _qwen_xml as qwen_xml
from toolchain.dialects import _react as react
from toolchain.dialects import _reasoning as reasoning
from toolchain.dialects import _token_json as token_json
from toolchain.dialects import _tokens as tokens
from toolchain.dialects import _xml_tags as xml_tags
from toolchain.dialects._opener import Opener, Openers

__all__ = ["ALWAYS", "FAMILIES", "openers_for"]

_OPENERS: tuple[Opener, ...] = (
    *reasoning.OPENERS,
    *tokens.OPENERS,
    *hermes.OPENERS,
    *qwen_xml.OPENERS,
    *glm.OPENERS,
    *mistral.OPENERS,
    *deepseek.OPENERS,
    *kimi.OPENERS,
    *harmony.OPENERS,
    *token_json.OPENERS,
    *gemma.OPENERS,
    *xml_tags.OPENERS,
    *functionary.OPENERS,
    *pythonic.OPENERS,
    *bare_json.OPENERS,
)
ALWAYS = frozenset({reasoning.FAMILY, tokens.FAMILY})
"""Read whatever families are chosen: thinking is never content, tokens never text."""

FAMILIES: frozenset[str] = frozenset(o.family for o in _OPENERS) - ALWAYS | {
    react.FAMILY,
    _invoke.OLMO,
}
"""The families a ``DialectPolicy`` may choose from."""


@functools.cache
def openers_for(families: frozenset[str] | None) -> Openers:
    if families is not None:
        unknown = families - FAMILIES
        if unknown:
            known = sorted(FAMILIES)
            raise ToolchainValueError(f"unknown format families: {sorted(unknown)}; known: {known}")
    allowed = FAMILIES | ALWAYS if families is None else families | ALWAYS
    chosen = [opener for opener in _OPENERS if opener.family in allowed]
    # Gemma's call blocks: read when gemma is chosen, else their tokens are removed.
    chosen += [
        Opener(marker, tokens.FAMILY, tokens.read_token)
        for marker in gemma.BLOCKS
        if gemma.FAMILY not in allowed
    ]
    # Blocks of calls whose body decides the family: one reader for the chosen ones.
    for marker, family in _invoke.WRAPPERS.items():
        invoke, olmo = family in allowed, marker == "<function_calls>" and _invoke.OLMO in allowed
        if invoke or olmo:
            read = _invoke.wrapper_reader(marker, invoke=invoke, olmo=olmo)
            chosen.append(Opener(marker, family if invoke else _invoke.OLMO, read, repeats=True))
        else:
            chosen.append(Opener(marker, tokens.FAMILY, tokens.read_token))
    # `[` opens a JSON list of calls or a Python-style one: one opener reads the chosen.
    json, python = bare_json.FAMILY in allowed, pythonic.FAMILY in allowed
    if json or python:
        read = bare_json.bracket_reader(json=json, python=python)
        chosen.append(
            Opener(
                bare_json.BRACKET,
                bare_json.FAMILY if json else pythonic.FAMILY,
                read,
                gate=bare_json.BRACKET_GATE,
            )
        )
    return Openers(chosen)
