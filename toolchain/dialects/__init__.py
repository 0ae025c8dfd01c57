"""Tool calls written as text in the native formats of local models.

``parse`` reads one output, ``DialectStream`` reads one as it streams, and
``DialectToolChain`` runs what they read like any other chain.
"""

from toolchain.dialects._catalog import INPUT_KEY, ToolSpec
from toolchain.dialects._chain import DialectToolChain
from toolchain.dialects._registry import FAMILIES
from toolchain.dialects._result import DialectParse, DialectPolicy
from toolchain.dialects._stream import DialectStream, parse

__all__ = [
    "FAMILIES",
    "INPUT_KEY",
    "DialectParse",
    "DialectPolicy",
    "DialectStream",
    "DialectToolChain",
    "ToolSpec",
    "parse",
]
