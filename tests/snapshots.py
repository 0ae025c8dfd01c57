"""Former home of the suite's snapshot extensions, now ``toolchain.testing``'s.

Kept as aliases for any test that still imports them; new code imports
``MarkdownSnapshotExtension`` / ``XMLSnapshotExtension`` from ``toolchain.testing``.
"""

from __future__ import annotations

from toolchain.testing import MarkdownSnapshotExtension as MarkdownSnapshot
from toolchain.testing import XMLSnapshotExtension as XMLSnapshot

__all__ = ["MarkdownSnapshot", "XMLSnapshot"]
