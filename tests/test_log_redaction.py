"""No credential in a log record of ours: every logger the library makes (``toolchain``,
``agents`` and each one under them) blanks its records' messages and tracebacks.

A filter on a logger sees only the records logged to that very logger, not those its
children pass up; so each logger needs its own, and these tests log on the children
(``toolchain.mcp``, ``agents.durable``, ``agents.otel``) as well as on the parents.
"""

from __future__ import annotations

import importlib
import logging
import pkgutil
import re
from pathlib import Path

import pytest

import agents
import toolchain

ROOT = Path(__file__).resolve().parents[1]
KEY = "sk-proj-" + "Lg5Tq2Wz8Xc1Vb4Nm7Kj0Hf3Dsa"  # built in two: a scanner reads tests too
AWS_KEY_ID = "AKIA" + "IOSFODNN7EXAMPLE"


def _import_everything() -> None:
    """Import every module of both packages that imports here (the extras installed), so
    that every logger the library makes exists."""
    for package in (toolchain, agents):
        for found in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            if found.name.endswith("__main__"):
                continue
            try:
                importlib.import_module(found.name)
            except ImportError:  # an extra this environment lacks
                continue


def our_loggers() -> dict[str, logging.Logger]:
    _import_everything()
    return {
        name: found
        for name, found in logging.root.manager.loggerDict.items()
        if isinstance(found, logging.Logger) and re.match(r"(toolchain|agents)(\.|$)", name)
    }


def test_no_module_of_ours_makes_a_logger_of_its_own() -> None:
    """Loggers come from ``toolchain._redact.logger``, which puts the filter on each."""
    making = [
        str(path.relative_to(ROOT))
        for package in ("formats", "toolchain", "agents")
        for path in sorted((ROOT / package).rglob("*.py"))
        if "logging.getLogger(" in path.read_text(encoding="utf-8")
    ]
    assert making == ["toolchain/_redact.py"]


def test_every_logger_of_ours_redacts_the_records_logged_to_it() -> None:
    found = our_loggers()
    assert {"toolchain", "toolchain.mcp", "agents", "agents.otel", "agents.durable"} <= set(found)
    for name, made in found.items():
        kinds = [type(each).__name__ for each in made.filters]
        assert kinds.count("RedactingFilter") == 1, name


@pytest.mark.parametrize(
    "name", ["toolchain.mcp", "agents.durable", "agents.otel", "toolchain", "agents"]
)
def test_a_record_s_message_and_traceback_lose_their_keys(
    name: str, caplog: pytest.LogCaptureFixture
) -> None:
    our_loggers()  # made by the library, as its modules load
    log = logging.getLogger(name)  # the very logger the library made: the filter is its
    caplog.set_level(logging.DEBUG)
    try:
        raise RuntimeError(f"the server refused {KEY} (id {AWS_KEY_ID})")
    except RuntimeError as error:
        log.warning("a call failed with %s", f"key={KEY}", exc_info=error)
    log.info("nothing to hide here: %d calls", 3)
    secret, plain = (r for r in caplog.records if r.name == name)
    assert KEY not in caplog.text and AWS_KEY_ID not in caplog.text
    assert secret.getMessage() == "a call failed with key=[REDACTED]"
    assert secret.exc_text is not None and "RuntimeError: the server refused [REDACTED]" in (
        secret.exc_text
    )
    # The exception, whose own text holds the key, is no longer on the record: a handler
    # that writes its own traceback from it (a JSON formatter) cannot show the key.
    assert secret.exc_info is None
    assert KEY not in logging.Formatter().format(secret)
    # A record with nothing to blank is left as it was: its template and arguments.
    assert plain.msg == "nothing to hide here: %d calls" and plain.args == (3,)


def test_a_traceback_without_a_key_keeps_its_exception(caplog: pytest.LogCaptureFixture) -> None:
    our_loggers()
    caplog.set_level(logging.WARNING)
    try:
        raise KeyError("city")
    except KeyError as error:
        logging.getLogger("toolchain").warning("a tool raised", exc_info=error)
    (record,) = caplog.records
    assert record.exc_info is not None and record.exc_info[0] is KeyError
    assert record.exc_text is not None and "KeyError: 'city'" in record.exc_text
