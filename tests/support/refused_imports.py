"""An interpreter that cannot import some installed packages, as one without them.

``refusing(tmp_path, "dbos")`` gives the environment of a subprocess whose import
system refuses ``dbos`` and every module under it: a ``sitecustomize`` module (found
through ``PYTHONPATH``) puts a meta-path finder first that raises
``ModuleNotFoundError`` for them. The packages stay installed in the venv the tests
share; only that process cannot see them. Nothing of ours is mocked.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["refusing"]

_SITECUSTOMIZE = """
import os, sys

_REFUSED = frozenset(os.environ["REFUSED_MODULES"].split(","))


class _Refuse:
    \"\"\"As if the refused packages were not installed.\"\"\"

    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in _REFUSED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, _Refuse())
"""


def refusing(folder: Path, *packages: str) -> dict[str, str]:
    """The process environment, with imports of ``packages`` refused (the finder's
    module is written into ``folder``)."""
    (folder / "sitecustomize.py").write_text(_SITECUSTOMIZE, encoding="utf-8")
    return {**os.environ, "PYTHONPATH": str(folder), "REFUSED_MODULES": ",".join(packages)}
