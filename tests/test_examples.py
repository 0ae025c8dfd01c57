"""Every example runs from a clean interpreter and prints what its docstring promises."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

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
        "publish_page needs a person's approval; it is held and the run pauses",
        'approve publish_page({"page_id": "page-7"})? [y/N]',
        "==== tool publish_page [call_6] ====\npage-7 is live",
        "answer: The About page is live, with a mountain hero image.",
        "remembered: {'entities': [['image', 'img-42', 'mountains at dawn'], ['page', 'page-7'",
    ],
    "run_prompt.py": [
        "John, it is sunny and 72°F in NYC today. Summers there are warm and humid",
        "stopped by: answer; tool calls: ['get_weather', 'researcher']",
        "<USER_DATA>\nage: 30\ncity: NYC\n</USER_DATA>",
    ],
    "durable.py": [
        '  -> issue_refund({"order_id":"A17","amount_eur":20})',
        "worker killed with SIGKILL before step 3 (two tool calls done)",
        "answer: Refunded 20 EUR for order A17.",
        "issue_refund ran 1 time(s), lookup_order 1; the model was called 3 times in all",
    ],
    "relay.py": [
        "==== tool yt_transcribe [call_1] ====\ninternal://",
        '-> deep_check({"text":"internal://',
        "internal_resource_read_slice [call_3] ====\nching! The code is PELICAN-42.",
        "the model saw 33 characters of yt_transcribe: internal://",
        "deep_check received 50284 characters: the whole transcript",
    ],
}

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


def test_the_readme_hooks_section_is_the_code_of_examples_hooks() -> None:
    readme = (EXAMPLES.parent / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Hooks change calls; observers only watch", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    example = (EXAMPLES / "hooks.py").read_text(encoding="utf-8")
    hook_class = code.split("\n\n\nctx = ", 1)[0].split("\n\n\n", 1)[1]
    assert hook_class in example
    for line in code.splitlines()[-3:]:
        assert line.strip() in example
