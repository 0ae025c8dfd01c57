"""Code mode's tests share the process's Monty worker pool: it is started here, once, by
a first program, so its workers are this session fixture's, not the first test's (the
leak guard counts a test's new child processes)."""

from __future__ import annotations

import pytest

from formats import XMLFormat
from toolchain import ExecutionContext


@pytest.fixture(scope="session", autouse=True)
def monty_pool_started() -> None:
    from toolchain.code import PythonToolChain

    PythonToolChain().execute_sync(ExecutionContext(), "1", XMLFormat())
