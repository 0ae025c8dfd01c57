"""Files a user names on the command line (``--trace``, ``--report-json``, a cassette,
a ``.env`` file): used only when they are regular files, and their failures said in
one line.

Opening a FIFO waits for the other end forever (to read or to write), a directory
cannot be opened for writing, and a device such as ``/dev/full`` or ``/dev/zero``
fails or never ends. So a path that exists and is not a regular file is refused
before it is opened, by ``stat``, which never blocks; and the file is then opened
with ``O_NONBLOCK`` and checked again, so a FIFO put there in between cannot block
either. A write that fails (a full disk) is a `PathError` naming the path and the
reason, never a traceback.
"""

from __future__ import annotations

import io
import os
import stat
from pathlib import Path
from typing import TextIO

from typing_extensions import Buffer

from agents._errors import AgentError

__all__ = ["OutputFile", "PathError", "check_regular", "write_text"]


class PathError(AgentError):
    """A file the user named cannot be used: the message (one line) says which and why."""


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _refuse(path: Path, mode: int, what: str) -> PathError:
    kind = _kind(mode)
    named = kind if kind.startswith("not ") else f"{kind}, not a regular file"
    return PathError(f"{what}{path}: {named}")


def _reason(error: OSError) -> str:
    return error.strerror or str(error)


def check_regular(path: Path, what: str = "") -> bool:
    """Whether ``path`` exists; `PathError` if it exists and is not a regular file
    (``what`` starts the message, e.g. ``"--trace "``). Checked with ``stat``, which
    never opens the file.

    >>> check_regular(Path("/no/such/file"))
    False
    >>> check_regular(Path("/"), "--trace ")
    Traceback (most recent call last):
    ...
    agents._paths.PathError: --trace /: a directory, not a regular file
    """
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return False
    except OSError as error:
        raise PathError(f"{what}{path}: {_reason(error)}") from None
    if not stat.S_ISREG(mode):
        raise _refuse(path, mode, what)
    return True


def _open_regular(path: Path, what: str) -> int:
    """A descriptor of ``path`` opened for writing (truncated, its folders made), or
    `PathError`."""
    check_regular(path, what)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # O_NONBLOCK: a FIFO created since the check fails at once (ENXIO) or opens
        # without waiting, and is refused below; a regular file ignores the flag.
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NONBLOCK | os.O_CLOEXEC
        descriptor = os.open(path, flags, 0o666)
    except OSError as error:
        raise PathError(f"{what}{path}: cannot be written: {_reason(error)}") from None
    mode = os.fstat(descriptor).st_mode
    if not stat.S_ISREG(mode):
        os.close(descriptor)
        raise _refuse(path, mode, what)
    os.set_blocking(descriptor, True)
    return descriptor


def write_text(path: Path, text: str, what: str = "") -> None:
    """Write ``text`` (UTF-8) to ``path``, replacing it; `PathError` saying why not.

    >>> import tempfile
    >>> target = Path(tempfile.mkdtemp()) / "reports" / "out.json"
    >>> write_text(target, "{}")
    >>> target.read_text()
    '{}'
    """
    descriptor = _open_regular(path, what)
    try:
        with open(descriptor, "w", encoding="utf-8") as file:
            file.write(text)
    except OSError as error:  # ENOSPC, EFBIG, EIO: from a write or the final flush
        raise PathError(f"{what}{path}: cannot be written: {_reason(error)}") from None


class _Sink(io.RawIOBase):
    """Bytes to a descriptor; the first write that fails is kept and the rest dropped."""

    def __init__(self, descriptor: int) -> None:
        self._descriptor = descriptor
        self.error: OSError | None = None

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._descriptor

    def write(self, data: Buffer, /) -> int:
        size = len(memoryview(data))
        if self.error is None:
            try:
                return os.write(self._descriptor, data)
            except OSError as error:
                self.error = error
        return size

    def close(self) -> None:
        if not self.closed:
            os.close(self._descriptor)
        super().close()


class OutputFile:
    """A text file written as a run goes (a trace), that never raises while it is
    written: the first write that fails is kept, later ones are dropped, and `close`
    reports it, so a full disk ends the file, not the run.

    >>> import tempfile
    >>> output = OutputFile(Path(tempfile.mkdtemp()) / "run.jsonl", "--trace ")
    >>> _ = output.stream.write("{}\\n")
    >>> output.close()
    """

    def __init__(self, path: Path, what: str = "") -> None:
        self.path = path
        self._what = what
        self._sink = _Sink(_open_regular(path, what))
        self.stream: TextIO = io.TextIOWrapper(io.BufferedWriter(self._sink), encoding="utf-8")

    def close(self) -> None:
        """Flush and close; `PathError` if any write failed."""
        try:
            self.stream.close()
        except OSError as closing:  # not from the sink, which keeps its errors
            self._sink.error = self._sink.error or closing
        failed = self._sink.error
        if failed is not None:
            raise PathError(f"{self._what}{self.path}: cannot be written: {_reason(failed)}")
