"""The test MCP server (``mcp_server.py`` beside this file), started as users start one:
over stdio by path (`SERVER`), or as an HTTP process on a loopback port (`HTTPServer`)."""

from __future__ import annotations

import select
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import IO

__all__ = ["SERVER", "HTTPServer"]

SERVER = Path(__file__).with_name("mcp_server.py")


class HTTPServer:
    """One ``mcp_server.py http`` process on a loopback port it picked itself."""

    def __init__(self, *options: str) -> None:
        self.log: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115  (closed by stop())
        self.process = subprocess.Popen(
            [sys.executable, str(SERVER), "http", *options],
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
        )
        assert self.process.stdout is not None
        ready, _, _ = select.select([self.process.stdout], [], [], 20)
        line = self.process.stdout.readline() if ready else ""
        if not line.startswith("listening on "):
            self.stop()
            raise RuntimeError(f"the test MCP server did not start: {line!r}")
        self.url = f"http://127.0.0.1:{int(line.split()[-1])}/mcp"

    def stop(self) -> None:
        self.process.kill()  # nothing of its own to save
        self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()
        self.log.close()
