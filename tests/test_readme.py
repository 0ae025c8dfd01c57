"""README.md is executable: every block runs here, the way a reader would run it.

- Every Python block runs from an empty directory, clean by the project's own ruff rules
  and format. Model strings such
  as ``"openai:gpt-4o-mini"`` reach a real OpenAI-compatible HTTP/1.1 keep-alive server on
  loopback (``OPENAI_API_BASE``), through the real SDK, which plays the block's script
  below; the whole script must be used, so a block that stops calling the model fails.
- Output the README shows is compared: ``#>`` lines under a ``print`` (pytest-examples),
  the blocks after a paragraph that starts with "prints", and transcripts said to be
  printed by ``python examples/NAME.py`` (each shown line, in order; a line ending in
  "..." is a prefix).
- Blocks that are pytest files (``# tests/test_x.py``) run under pytest, twice: with
  ``--snapshot-update`` (the files the README names are written, with the text it shows)
  and then as a check.
- Every shell command either runs here (``python -m agents ...``) or is one this test
  knows is checked elsewhere (`RUN_ELSEWHERE`).

A new block with no script here fails, saying what to add.
"""

from __future__ import annotations

import logging
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from pytest_examples import CodeExample, EvalExample, find_examples

from tests.support.chat_script import Calls, Turn, calls, chat_script
from tests.support.chat_script import last_tool_text as tool_text
from tests.support.loopback import LoopbackServer, RecordedRequest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
TEXT = README.read_text(encoding="utf-8")
LINES = TEXT.splitlines()


def _reference(request: RecordedRequest) -> str:
    found = re.search(r"internal://[\w-]+", tool_text(request))
    assert found, "the tool message holds no internal:// reference"
    return found.group()


def _check_and_read(request: RecordedRequest) -> Calls:
    ref = _reference(request)
    return calls(("deep_check", {"text": ref}))


def _read_the_end(request: RecordedRequest) -> Calls:
    ref = _reference(_first_tool_request(request))
    args = {"opaque_reference": ref, "start_index": -45, "length": 45}
    return calls(("internal_resource_read_slice", args))


def _first_tool_request(request: RecordedRequest) -> RecordedRequest:
    """The request as it was when only the first tool had answered (its message kept)."""
    body = request.json()
    first = next(i for i, m in enumerate(body["messages"]) if m.get("role") == "tool")
    kept = {**body, "messages": body["messages"][: first + 1]}
    import json

    return RecordedRequest(request.method, request.path, request.headers, json.dumps(kept).encode())


SCRIPTS: dict[str, list[Turn]] = {
    "Quick start": [],
    "Hooks change calls; observers only watch": [],
    "Observations in fewer tokens (TOON, auto)": [],  # a chain, no model
    "Watching a run: logs and traces": [],  # a ScriptedModel plays the model
    "Tracing runs with OpenTelemetry": [
        calls(("get_weather", {"city": "Oslo"})),
        "Yes: light rain and 9 °C in Oslo today, so take one.",
    ],
    "An agent": [
        '<thinking>Check the stock first.</thinking>\n<action>{"tool": "stock", "args": '
        '{"item": "tea"}}</action>',
        '<answer>{"item": "tea", "quantity": 2}</answer>',
        '<answer>{"item": "coffee", "quantity": 1}</answer>',
    ],
    "Native tool calling": [
        calls(("get_weather", {"city": "Oslo"})),
        "Yes: light rain and 9 °C in Oslo today, so take one.",
    ],
    "Approvals": [
        calls(("refund", {"order_id": "A17", "amount_eur": 80})),
        "Refunded 80 EUR on order A17.",
    ],
    "Tool-output variables": [
        calls(("get_weather", {"location": "NYC"}), ("get_weather", {"location": "London"})),
        calls(("compare_weather", {"a": "$weather_nyc", "b": "$weather_london"})),
        "$compare_weather_1",
    ],
    "Tool-output variables, 2": [],  # a ScriptedModel plays the model
    "Context relay (large outputs by reference)": [
        calls(("yt_transcribe", {"video_id": "123"})),
        _check_and_read,
        _read_the_end,
        'Nothing alarming in 10457 words; it ends: "Thanks for watching! The code is PELICAN-42."',
    ],
    "Tool discovery (many tools, few tokens)": [
        calls(("search_images", {"query": "mountains"})),
        calls(("publish_page", {"page_id": "page-7"})),
        calls(("publish_page", {"page_id": "page-7"})),
        "page-7 is live, with the mountain photo img-42.",
    ],
    "What a run saved": [],  # a ScriptedModel plays the model
    "run_prompt: a prompt built from `def_*` calls": [
        calls(("get_weather", {"city": "NYC"})),
        calls(("researcher", {"topic": "NYC summers"})),
        "NYC summers are warm and humid.",
        "John, it is sunny and 72°F in NYC; summers there are warm and humid.",
    ],
    "MCP servers": [calls(("add", {"a": 2, "b": 3})), "2 + 3 = 5"],
    "Durable runs: survive a crash, wait for a person": [
        calls(("lookup_order", {"order_id": "A17"})),
        calls(("issue_refund", {"order_id": "A17", "amount_eur": 20})),
        "Refunded 20 EUR for order A17.",
    ],
    "Local models without a tool parser": [  # a server with no tool parser: calls as text
        '<think>Rain?</think><tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}'
        "</tool_call>",
        "Yes: light rain in Oslo.",
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Bergen", "days": "2"}}'
        "</tool_call>",
        "<answer>Light rain in Bergen for both days.</answer>",
    ],
}
"""What the model says, turn by turn, for each Python block (a section's later blocks are
"Section, 2" and so on)."""

RUN_ELSEWHERE = {
    "make demo": "tests/test_cli.py runs the demo; CI runs make test itself",
    "make test": "CI runs it (.ci/run)",
    "pip install ./gent-py": "tests/test_install.py installs the built wheel; see the notes",
    "pip install './gent-py[mcp,redis]'": "as above",
    "pip wheel --no-deps -w dist ./gent-py": "tests/test_install.py builds the wheel",
    "pip install 'dist/gent_py-0.1.0-py3-none-any.whl[testing]'": "as above",
    "pip install './gent-py[testing]'": "as above",
}
"""Shell commands of the README this test does not run, and what checks them instead."""


@dataclass(frozen=True)
class Block:
    """A fenced block of the README: its language, text, first line (1-based), section."""

    lang: str
    text: str
    line: int
    section: str


def _blocks() -> list[Block]:
    found: list[Block] = []
    section = ""
    lines = iter(enumerate(LINES, start=1))
    for number, line in lines:
        if line.startswith("## "):
            section = line[3:].strip()
        elif line.startswith("```"):
            lang = line[3:].strip()
            body: list[str] = []
            for _, inner in lines:
                if inner.startswith("```"):
                    break
                body.append(inner)
            found.append(Block(lang, "\n".join(body) + "\n", number, section))
    return found


BLOCKS = _blocks()
PYTHON = [ex for ex in find_examples(str(README)) if ex.prefix == "python"]


def _section(example: CodeExample) -> str:
    """The block's README section, with ", 2", ", 3" … for its later Python blocks."""
    section = next(b.section for b in BLOCKS if b.line == example.start_line)
    before = [b for b in BLOCKS if b.section == section and b.lang == "python"]
    place = next(i for i, b in enumerate(before, start=1) if b.line == example.start_line)
    return section if place == 1 else f"{section}, {place}"


def _is_test_file(example: CodeExample) -> bool:
    return example.source.startswith("# tests/")


def _id(example: CodeExample) -> str:
    return f"line {example.start_line}"


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    """A block may configure logging (as a reader would); the next test must not see it."""
    root = logging.getLogger()
    handlers, levels = (
        list(root.handlers),
        {name: logging.getLogger(name).level for name in ("", "agents", "toolchain")},
    )
    yield
    root.handlers[:] = handlers
    for name, level in levels.items():
        logging.getLogger(name).setLevel(level)


@pytest.fixture(autouse=True)
def _uninstrument() -> Iterator[None]:
    """A block may instrument runs (as a reader would); the next test must not be traced."""
    yield
    from agents.otel import uninstrument

    uninstrument()


@pytest.fixture
def readme_server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[LoopbackServer]:
    """A keep-alive OpenAI-compatible server behind ``openai:*`` and ``ollama:*``, and an
    empty working directory."""
    with LoopbackServer() as server:
        for name in list(os.environ):
            if name.endswith(("_API_KEY", "_API_BASE", "_API_TYPE")) or name.startswith(
                "LM_MODEL_"
            ):
                monkeypatch.delenv(name)
        for provider in ("OPENAI", "OLLAMA"):  # the model strings the README uses
            monkeypatch.setenv(f"{provider}_API_KEY", "sk-readme-test")
            monkeypatch.setenv(f"{provider}_API_BASE", server.openai_base_url)
        monkeypatch.chdir(tmp_path)
        yield server


BROKEN: dict[str, str] = {}
"""README sections whose claims do not hold yet, and why (strict: they fail until fixed)."""


def _python_params() -> list[object]:
    params: list[object] = []
    for example in PYTHON:
        if _is_test_file(example):
            continue
        reason = BROKEN.get(_section(example))
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        params.append(pytest.param(example, id=_id(example), marks=marks))
    return params


@pytest.mark.parametrize("example", _python_params())
def test_python_block_runs_and_prints_what_it_shows(
    example: CodeExample,
    eval_example: EvalExample,
    readme_server: LoopbackServer,
    capsys: pytest.CaptureFixture[str],
) -> None:
    section = _section(example)
    assert section in SCRIPTS, (
        f"README section {section!r} has a Python block (line {example.start_line}) with no "
        "script in tests/test_readme.py SCRIPTS"
    )
    script = SCRIPTS[section]
    readme_server.respond_with(chat_script(script))
    _lint(example.source)
    # (its signature stops at py310; the value only shapes how "#>" output is wrapped)
    eval_example.set_config(line_length=100, target_version="py310")
    if "#>" in example.source:
        eval_example.run_print_check(example)
    else:
        eval_example.run(example)
    printed = capsys.readouterr().out
    requests = [r for r in readme_server.requests if r.path.endswith("/chat/completions")]
    assert len(requests) == len(script), f"the block used {len(requests)} of {len(script)} turns"
    shown = _shown_output(example)
    if shown is not None:
        assert _timeless(printed) == _timeless(shown)


def _timeless(text: str) -> str:
    """Text with durations ("0.013 s") made alike: they differ from run to run."""
    return re.sub(r"\b\d+\.\d+ s\b", "<t> s", text)


def _lint(source: str) -> None:
    """The project's own ruff rules and format, as if the block were a module of it."""
    name = str(ROOT / "readme_block.py")
    # "#>" lines show output (pytest-examples); the formatter would write them "# >".
    source = "".join(line for line in source.splitlines(keepends=True) if not line.startswith("#>"))
    for command in (["check", "--quiet"], ["format", "--check", "--quiet"]):
        completed = subprocess.run(
            [sys.executable, "-m", "ruff", *command, "--stdin-filename", name, "-"],
            input=source,
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        )
        assert completed.returncode == 0, completed.stdout + completed.stderr


def _shown_output(example: CodeExample) -> str | None:
    """The output a paragraph starting with "prints" shows right after the block."""
    after = example.end_line
    index = next(i for i, b in enumerate(BLOCKS) if b.line == example.start_line)
    following = BLOCKS[index + 1 : index + 3]
    prose = "\n".join(LINES[after : following[0].line - 1]).strip() if following else ""
    if not prose.startswith("prints"):
        return None
    shown = [following[0]]
    first_end = following[0].line + following[0].text.count("\n") + 1  # past its fence
    gap = "\n".join(LINES[first_end : following[1].line - 1]) if len(following) > 1 else "x"
    if not gap.strip():
        shown.append(following[1])
    return "".join(block.text for block in shown)


def _example_transcripts() -> list[tuple[str, Block]]:
    found: list[tuple[str, Block]] = []
    for index, block in enumerate(BLOCKS[1:], start=1):
        prose = "\n".join(LINES[BLOCKS[index - 1].line : block.line - 1])
        named = re.findall(r"`python examples/(\w+\.py)[^`]*` prints", prose)
        if named and block.lang == "text":
            found.append((named[-1], block))
    return found


@pytest.mark.parametrize(
    ("script", "block"), _example_transcripts(), ids=lambda v: v if isinstance(v, str) else ""
)
def test_transcripts_shown_are_what_the_examples_print(script: str, block: Block) -> None:
    completed = subprocess.run(
        [sys.executable, str(ROOT / "examples" / script)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    assert completed.returncode == 0, completed.stderr
    output = [_opaque(line) for line in completed.stdout.splitlines()]
    at = 0
    for shown in block.text.splitlines():
        pattern = re.compile(".*".join(map(re.escape, _opaque(shown).split("..."))))
        while at < len(output) and not pattern.fullmatch(output[at]):
            at += 1
        assert at < len(output), f"{script} does not print (in order): {shown}"
        at += 1


def _opaque(line: str) -> str:
    """A line with relay references (random per run) made alike."""
    return re.sub(r"internal://[\w-]+", "internal://<id>", line)


@pytest.mark.parametrize("example", [e for e in PYTHON if _is_test_file(e)], ids=_id)
def test_test_file_blocks_pass_under_pytest(example: CodeExample, tmp_path: Path) -> None:
    relative = example.source.splitlines()[0].removeprefix("# ").strip()
    target = tmp_path / relative
    target.parent.mkdir(parents=True)
    target.write_text(example.source, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", relative]
    for extra in (["--snapshot-update"], []):
        completed = subprocess.run(
            [*command, *extra], cwd=tmp_path, env=env, capture_output=True, text=True, check=False
        )
        assert completed.returncode == 0, completed.stdout + completed.stderr
    snapshots = tmp_path.rglob("__snapshots__/*/*")
    written = sorted(p.relative_to(tmp_path).as_posix() for p in snapshots)
    index = next(i for i, b in enumerate(BLOCKS) if b.line == example.start_line)
    named = [b for b in BLOCKS[index + 1 : index + 3] if b.text.startswith(("tests/", "# "))]
    if named and named[0].text.startswith("tests/"):
        assert written == named[0].text.split()
        shown = named[1] if len(named) > 1 else None
        if shown is not None:
            md = next(p for p in written if p.endswith(".md"))
            assert (tmp_path / md).read_text(encoding="utf-8") == shown.text.rstrip("\n")


def _shell_commands() -> list[str]:
    commands: list[str] = []
    for block in BLOCKS:
        if block.lang in ("sh", "bash"):
            for line in block.text.splitlines():
                command = line.split("  #")[0].strip()
                if command:
                    commands.append(command)
    return commands


def test_every_shell_command_is_run_here_or_known() -> None:
    unknown = [c for c in _shell_commands() if not c.startswith("python -m agents ")]
    assert sorted(set(unknown) - set(RUN_ELSEWHERE)) == []
    assert sorted(set(RUN_ELSEWHERE) - set(unknown)) == []


@pytest.mark.parametrize(
    "command", [c for c in _shell_commands() if c.startswith("python -m agents ")]
)
def test_agents_commands_run_from_an_empty_directory(command: str, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    args = [sys.executable, *shlex.split(command)[1:]]
    completed = subprocess.run(
        args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
