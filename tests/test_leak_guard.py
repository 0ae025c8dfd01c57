"""The leak guard (``tests/support/leaks.py``) fails each test that leaves running what
it started, and no other: checked in a pytest of its own, on tests that leak on purpose."""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]

LEAKY_TESTS = '''
import asyncio
import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from formats import XMLFormat
from toolchain import ExecutionContext, JSONToolChain, tool

stop = threading.Event()
left: list[object] = []


@pytest.fixture(scope="module")
def module_server():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    yield server
    server.close()


@pytest.fixture(scope="module")
def module_pool():
    pool = ThreadPoolExecutor(thread_name_prefix="module-pool")
    pool.submit(lambda: None).result()
    yield pool
    pool.shutdown()


@pytest.fixture(scope="module")
def tool_worker_child():
    # A process pool started from a tool worker (code mode's sandbox pool): the tool
    # worker exits idle later, and its child moves to the main thread.
    spawned, done = [], threading.Event()

    def spawn():
        spawned.append(subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]))
        done.wait()

    worker = threading.Thread(target=spawn, name="tool-worker", daemon=True)
    worker.start()
    while not spawned:
        time.sleep(0.01)
    yield done, worker
    spawned[0].kill()
    spawned[0].wait()


def test_a_tool_workers_child_moves_to_the_main_thread(tool_worker_child):
    done, worker = tool_worker_child
    done.set()
    worker.join()  # its child is the main thread's now: known, not new


def test_clean(module_server):
    threading.Thread(target=lambda: None).start()  # ends by itself


def test_a_module_pool_grows(module_pool):
    module_pool.submit(stop.wait)
    module_pool.submit(stop.wait)  # a second thread, the module's pool's own


def test_pool_left_running():
    pool = ThreadPoolExecutor(thread_name_prefix="left-pool")
    pool.submit(stop.wait)
    left.append(pool)


def test_thread():
    threading.Thread(target=stop.wait, name="left-waiting").start()


def test_child():
    left.append(subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]))


def test_listener():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    left.append(server)


async def test_task():
    left.append(asyncio.get_running_loop().create_task(asyncio.sleep(60), name="sleeper"))


def test_stuck_sync_tool():
    @tool(timeout=0.05)
    def hang() -> int:
        """Waits for the end of the file."""
        stop.wait()
        return 1

    chain = JSONToolChain(cancel_grace=0.05).register_tool(hang)
    chain.execute_sync(ExecutionContext(), '{"tool": "hang"}', XMLFormat())


def test_zz_cleanup():
    stop.set()
    for thing in left:
        if isinstance(thing, subprocess.Popen):
            thing.kill()
            thing.wait()
        elif isinstance(thing, socket.socket):
            thing.close()
        elif isinstance(thing, ThreadPoolExecutor):
            thing.shutdown()
'''


def test_each_kind_of_leak_fails_its_own_test_and_only_it(tmp_path: pathlib.Path) -> None:
    (tmp_path / "test_leaky.py").write_text(LEAKY_TESTS)
    finished = subprocess.run(
        [
            sys.executable,
            *("-m", "pytest", "-p", "tests.support.leaks", "-p", "no:cacheprovider"),
            *("-o", "leak_grace=0.3", "-o", "asyncio_mode=auto", "-rA", "--rootdir", tmp_path),
            tmp_path / "test_leaky.py",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,  # where tests.support.leaks is imported from
        timeout=120,  # a hang guard, not a speed limit
        check=False,
    )
    outcomes: dict[str, str] = {}
    for outcome, name in re.findall(
        r"^(PASSED|ERROR) \S*test_leaky\.py::(\w+)", finished.stdout, re.M
    ):
        outcomes[name] = outcome  # a test that errs in teardown passed first
    assert outcomes == {
        "test_a_tool_workers_child_moves_to_the_main_thread": "PASSED",
        "test_clean": "PASSED",
        "test_a_module_pool_grows": "PASSED",
        "test_pool_left_running": "ERROR",
        "test_thread": "ERROR",
        "test_child": "ERROR",
        "test_listener": "ERROR",
        "test_task": "ERROR",
        "test_stuck_sync_tool": "ERROR",
        "test_zz_cleanup": "PASSED",
    }, finished.stdout[-3000:]
    errors = finished.stdout
    assert "test_thread leaked: non-daemon threads still running: left-waiting" in errors
    assert "test_pool_left_running leaked: non-daemon threads still running: left-pool_0" in errors
    assert "leaked: child processes still alive: " in errors
    assert "import time; time.sleep(60)" in errors
    assert "test_listener leaked: sockets still listening: socket:[" in errors
    assert "test_task leaked: asyncio tasks still pending: sleeper" in errors
    assert "leaked: sync tool calls still stuck in the worker pool: hang (call_1)" in errors
