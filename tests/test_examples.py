"""Every example runs from a clean interpreter and prints what its docstring promises."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.loopback import LoopbackServer
from tests.support.openai_replies import openai_error
from tests.support.refused_imports import refusing

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

EXPECTED = {
    "quickstart.py": [
        "# observation\n\n## forecast\ncity: Paris",
        "<forcast>\nError: unknown tool",
    ],
    "custom_loop.py": ['{"converted":110.4}', "answer: 120 USD is 110.40 EUR."],
    "typed_answer.py": ["we only have 10 in stock", "order: item='tea' quantity=10"],
    "image_tool.py": ["[1] image (image/png, 70 bytes)", "TextContent\nImageContent"],
    "hooks.py": [
        "Error: delete_booking was refused: deleting needs a human's approval",
        "refused: True",
        "flight: AA102",
        "observed: get_booking",
    ],
    "chat.py": [
        'you> Weather in Paris?\n  -> get_weather({"city":"Paris"})',
        'assistant> get_weather says: {"city":"Paris","sky":"sunny"',
        'you> And the time there?\n  -> get_local_time({"city":"Paris"})',
        "(conversation: 9 messages)",
    ],
    "variables.py": [
        '==== tool get_weather [call_1] ====\n$weather_nyc = {"temperature":28.4,',
        '$weather_london = {"temperature":17.2,',
        '-> compare_weather({"a":"$weather_nyc","b":"$weather_london"})',
        "answer: New York is 11.2 °C warmer than London: Clear sky at 28.4 °C against",
    ],
    "discovery.py": [
        '-> tool_search({"query":["find an image","add a new page",',
        "waiting for approval: publish_page (call_5)",
        'approve publish_page({"page_id": "page-7"})? [y/N]',
        "==== tool publish_page [call_5] ====\npage-7 is live",
        "answer: The About page is live, with a mountain hero image.",
        "remembered: {'entities': [['image', 'img-42', 'mountains at dawn'], ['page', 'page-7'",
    ],
    "run_prompt.py": [
        "John, it is sunny and 72°F in NYC today. Summers there are warm and humid",
        "stopped by: answer; tool calls: ['get_weather', 'researcher']",
        "<USER_DATA>\nage: 30\ncity: NYC\n</USER_DATA>",
    ],
    "web.py": [
        '{"type": "tool-approval-request", "approvalId": "call_2", "toolCallId": "call_2"}',
        '{"type": "tool-output-available", "toolCallId": "call_2", "output": "deleted n3: \'buy',
        # the answer after the approval streams in pieces, as the model writes it
        '{"type": "text-delta", "delta": "Delete"}\n   {"type": "text-delta", "delta": "d n3, w"}',
        '{"type": "text-delta", "delta": " milk)."}\n   {"type": "text-end"}',
        "notes left: ['n1', 'n2']; tokens: ",
    ],
    "durable.py": [
        '  -> issue_refund({"order_id":"A17","amount_eur":20})',
        "worker killed with SIGKILL before step 3 (two tool calls done)",
        "answer: Refunded 20 EUR for order A17.",
        "issue_refund ran 1 time(s), lookup_order 1; the model was called 3 times in all",
    ],
    "code_mode.py": [
        "== ReActAgent ==\nthe model read: Error: the program was not run (no tool ran)",
        'Unknown key "total" for TypedDict `Order`',
        "the model read: 6 paid EU orders, total 114.0\nanswer: 6 paid EU orders, 114.0 EUR.\n"
        "tool runs: {'list_orders': 1, 'get_order': 20}\n\n== ToolCallingAgent ==",
        "== ToolCallingAgent ==\nthe model read: Error: the program was not run (no tool ran)",
    ],
    "relay.py": [
        "==== tool yt_transcribe [call_1] ====\ninternal://",
        '-> deep_check({"text":"internal://',
        "internal_resource_read_slice [call_3] ====\nching! The code is PELICAN-42.",
        "the model saw 33 characters of yt_transcribe: internal://",
        "deep_check received 50284 characters: the whole transcript",
    ],
}

Completed = subprocess.CompletedProcess[str]

STDIN = {"chat.py": "Weather in Paris?\nAnd the time there?\n", "discovery.py": "y\n"}
"""What is typed into an example that reads stdin; the others get an empty stdin."""


def test_every_example_is_covered() -> None:
    assert sorted(p.name for p in EXAMPLES.glob("*.py")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example_runs(name: str) -> None:
    completed = subprocess.run(
        [sys.executable, str(EXAMPLES / name)],
        input=STDIN.get(name, ""),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    for expected in EXPECTED[name]:
        assert expected in completed.stdout


@pytest.mark.parametrize("closed", [False, True], ids=["empty stdin", "no stdin"])
def test_chat_ends_cleanly_without_input(closed: bool) -> None:
    completed = subprocess.run(
        [sys.executable, str(EXAMPLES / "chat.py")],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        preexec_fn=(lambda: os.close(0)) if closed else None,  # then sys.stdin is None
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout == "(conversation: 0 messages)\n"


def test_chat_saves_and_resumes_the_conversation(tmp_path: Path) -> None:
    saved = tmp_path / "chat.json"

    def chat(lines: str) -> str:
        completed = subprocess.run(
            [sys.executable, str(EXAMPLES / "chat.py"), "--save", str(saved)],
            input=lines,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert completed.returncode == 0, completed.stderr
        return completed.stdout

    chat("Weather in Oslo?\n")
    resumed = chat("And the time there?\n")  # a new process: only the file remembers Oslo
    assert resumed.startswith(f"(resumed 5 messages from {saved})")
    assert '-> get_local_time({"city":"Oslo"})' in resumed


def test_the_docs_hooks_section_is_the_code_of_examples_hooks() -> None:
    page = (EXAMPLES.parent / "docs" / "chains.md").read_text(encoding="utf-8")
    section = page.split("## Hooks change calls; observers only watch", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    example = (EXAMPLES / "hooks.py").read_text(encoding="utf-8")
    hook_class = code.split("\n\n\nctx = ", 1)[0].split("\n\n\n", 1)[1]
    assert hook_class in example
    for line in code.splitlines()[-3:]:
        assert line.strip() in example


# -- what an example's README section names, handled (issue 32, item 3) ------------------
#
# quickstart, hooks: a tool's error and a refused call are values in the observation
# (shown above). custom_loop: FormatParseError and ToolCallParseError, fed back. typed
# answers: the validator's feedback. chat: messages_to_json / messages_from_json, whose
# ValueError (and an unreadable file) the --save file meets. durable: the [durable]
# extra. chat, discovery, relay, variables, run_prompt on a model string: a missing key
# (ModelError at construction) and a model call that fails (the run's error).

DEEP = '{"version": 1, "messages": ' + "[" * 100_000 + "]" * 100_000 + "}"
BAD_SAVES = {
    "not JSON": b"this is not JSON",
    "nested 100,000 levels": DEEP.encode(),
    "wrong types": b'{"version": 1, "messages": [{"role": 7, "content": "hi"}]}',
    "unknown version": b'{"version": 99, "messages": []}',
    "not UTF-8": b'{"version": 1, "messages": [\xff]}',
}


def _example(name: str, *args: str, **options: Any) -> Completed:
    """``python examples/NAME ARGS`` in a subprocess; ``options`` go to ``subprocess.run``
    (``input`` defaults to what `STDIN` types into the example)."""
    if "stdin" not in options:
        options.setdefault("input", STDIN.get(name, ""))
    return subprocess.run(
        [sys.executable, str(EXAMPLES / name), *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        **options,
    )


def _chat(*args: str, **options: Any) -> Completed:
    return _example("chat.py", *args, input="Weather in Paris?\n", **options)


def _one_line_exit(completed: Completed, message: str) -> None:
    assert completed.returncode == 1, completed.stdout + completed.stderr
    assert completed.stderr == message + "\n"  # one line, no traceback


@pytest.mark.parametrize("kind", sorted(BAD_SAVES))
def test_chat_says_why_it_cannot_resume_and_leaves_the_file_alone(
    tmp_path: Path, kind: str
) -> None:
    saved = tmp_path / "chat.json"
    saved.write_bytes(BAD_SAVES[kind])
    completed = _chat("--save", str(saved))
    assert completed.returncode == 1, completed.stderr
    assert completed.stderr.startswith(f"cannot resume from {saved}: ")
    assert completed.stderr.count("\n") == 1 and "Traceback" not in completed.stderr
    assert len(completed.stderr) < 500  # the reason, not the file
    assert "assistant>" not in completed.stdout  # the chat never started
    assert saved.read_bytes() == BAD_SAVES[kind]  # not overwritten


@pytest.mark.parametrize("kind", ["fifo", "directory"])
def test_chat_refuses_a_save_path_that_is_no_regular_file(tmp_path: Path, kind: str) -> None:
    saved = tmp_path / "chat.json"
    if kind == "fifo":
        os.mkfifo(saved)  # reading it would wait for a writer forever
    else:
        saved.mkdir()
    _one_line_exit(_chat("--save", str(saved)), f"cannot resume from {saved}: not a regular file")


def test_chat_says_why_it_cannot_save(tmp_path: Path) -> None:
    saved = tmp_path / "chat.json"

    def small_files() -> None:  # a full disk, for this process: a write past 64 bytes fails
        resource.setrlimit(resource.RLIMIT_FSIZE, (64, 64))

    completed = _chat("--save", str(saved), preexec_fn=small_files)
    _one_line_exit(completed, f"cannot save to {saved}: File too large")
    assert "assistant> get_weather says:" in completed.stdout  # the answer came first


def test_durable_without_its_extra_says_what_to_install(tmp_path: Path) -> None:
    completed = _example("durable.py", env=refusing(tmp_path, "dbos"))
    _one_line_exit(
        completed,
        "agents.durable needs dbos, which is not installed: pip install 'gent-py[durable]'",
    )


def test_discovery_without_stdin_denies_the_publication() -> None:
    completed = _example(
        "discovery.py",
        stdin=subprocess.DEVNULL,
        preexec_fn=lambda: os.close(0),  # then sys.stdin is None
    )
    assert completed.returncode == 0, completed.stderr
    assert "answer: The About page is ready as a draft; publishing it was not approved." in (
        completed.stdout
    )


ON_A_MODEL_STRING = ["chat.py", "discovery.py", "relay.py", "run_prompt.py", "variables.py"]


@pytest.mark.parametrize("name", ON_A_MODEL_STRING)
def test_a_model_call_that_fails_is_reported_not_a_traceback(
    name: str, loopback: LoopbackServer
) -> None:
    loopback.respond_with(
        lambda request: openai_error(401, "Incorrect API key", error_type="invalid_request_error")
    )
    env = {
        **os.environ,
        "OPENAI_API_KEY": "sk-examples-test-0123456789",
        "OPENAI_API_BASE": loopback.openai_base_url,
    }
    completed = _example(name, "openai:gpt-4o-mini", env=env)
    assert "Traceback" not in completed.stderr, completed.stderr
    assert "HTTP 401: Incorrect API key" in completed.stdout + completed.stderr
    assert loopback.requests  # it did reach the model


@pytest.mark.parametrize("name", ON_A_MODEL_STRING)
def test_a_model_string_without_its_key_says_which_variable_to_set(name: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    completed = _example(name, "openai:gpt-4o-mini", env=env)
    assert completed.returncode == 1
    assert completed.stderr.splitlines() == [
        "model 'openai:gpt-4o-mini' needs an API key: set OPENAI_API_KEY"
    ]
