"""README.md and every page of docs/ are executable: each block runs here, as a reader would run it.

- Every Python block runs from an empty directory, clean by the project's own ruff rules
  and format, one test each, its id naming the file and line (``docs/relay.md:12``).
  Model strings such as ``"openai:gpt-4o-mini"`` (and ``ollama:``, ``vllm:``, ``lmstudio:``)
  reach a real OpenAI-compatible HTTP/1.1 keep-alive server on loopback
  (``OPENAI_API_BASE`` …), through the real SDK, which plays the block's script below;
  the whole script must be used, so a block that stops calling the model fails.
- Output a page shows is compared: ``#>`` lines under a ``print`` (pytest-examples),
  the blocks after a paragraph that starts with "prints", and transcripts said to be
  printed by ``python examples/NAME.py`` (each shown line, in order; a line ending in
  "..." is a prefix).
- Blocks that are pytest files (``# tests/test_x.py``) run under pytest, twice: with
  ``--snapshot-update`` (the files the page names are written, with the text it shows)
  and then as a check.
- Every shell command either runs here (``python -m agents ...``) or is one this test
  knows is checked elsewhere (`RUN_ELSEWHERE`).
- The README stays a front door: at most 200 lines, an agent that runs within its first
  60, and a map naming every page of the docs; the docs home runs one as early.

A new block with no script here fails, saying what to add. Scripts are keyed by file and
section: ``"docs/relay.md: Context relay"`` (a section's later Python blocks are
``"…, 2"`` and so on).
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import pytest
from pytest_examples import CodeExample, EvalExample, find_examples

from tests.support.chat_script import Calls, Turn, calls, chat_script
from tests.support.chat_script import last_tool_text as tool_text
from tests.support.loopback import LoopbackServer, RecordedRequest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"


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
    "README.md: A typed tool and an agent": [],  # a ScriptedModel plays the model
    "docs/index.md: A typed tool and an agent": [],  # a ScriptedModel plays the model
    "docs/tools.md: A tool, a chain, an observation": [],  # a chain, no model
    "docs/tools.md: Tools from functions": [],  # a chain, no model
    "docs/chains.md: One section convention, both ways": [],  # formats alone
    "docs/chains.md: Hooks change calls; observers only watch": [],
    "docs/chains.md: Observations in fewer tokens (TOON, auto)": [],  # a chain, no model
    "docs/chains.md: Composite tools": [],  # a chain, no model
    "docs/agents.md: ReAct, with a typed answer": [
        '<thinking>Check the stock first.</thinking>\n<action>{"tool": "stock", "args": '
        '{"item": "tea"}}</action>',
        '<answer>{"item": "tea", "quantity": 2}</answer>',
        '<answer>{"item": "coffee", "quantity": 1}</answer>',
    ],
    "docs/agents.md: Native tool calling": [
        calls(("get_weather", {"city": "Oslo"})),
        "Yes: light rain and 9 °C in Oslo today, so take one.",
    ],
    "docs/approvals.md: Approve in the run, or pause and resume": [
        calls(("refund", {"order_id": "A17", "amount_eur": 80})),
        "Refunded 80 EUR on order A17.",
    ],
    "docs/agents.md: Step hooks and compaction": [],  # a ScriptedModel plays the model
    "docs/models.md: Model strings": [],  # no model is built
    "docs/models.md: Local servers": [
        calls(("get_weather", {"city": "Oslo"})),
        "Yes: light rain and 9 °C in Oslo.",
    ],
    "docs/models.md: Models built by hand": [],  # built, never called
    "docs/variables.md: Passing outputs by name": [
        calls(("get_weather", {"location": "NYC"}), ("get_weather", {"location": "London"})),
        calls(("compare_weather", {"a": "$weather_nyc", "b": "$weather_london"})),
        "$compare_weather_1",
    ],
    "docs/variables.md: Conversations, stores and programs": [],  # a ScriptedModel plays the model
    "docs/relay.md: Large outputs by reference": [
        calls(("yt_transcribe", {"video_id": "123"})),
        _check_and_read,
        _read_the_end,
        'Nothing alarming in 10457 words; it ends: "Thanks for watching! The code is PELICAN-42."',
    ],
    "docs/discovery.md: Many tools, few tokens": [
        calls(("search_images", {"query": "mountains"})),
        calls(("publish_page", {"page_id": "page-7"})),
        "page-7 is live, with the mountain photo img-42.",
    ],
    # a ScriptedModel plays the model:
    "docs/approvals.md: Tool discovery's tools (`ToolSearch`)": [],
    "docs/run-prompt.md: A prompt built from `def_*` calls": [
        calls(("get_weather", {"city": "NYC"})),
        calls(("researcher", {"topic": "NYC summers"})),
        "NYC summers are warm and humid.",
        "John, it is sunny and 72°F in NYC; summers there are warm and humid.",
    ],
    "docs/savings.md: Tokens kept out, and what they cost": [],  # a ScriptedModel plays the model
    "docs/code-mode.md: One program instead of many calls": [],  # a ScriptedModel plays the model
    "docs/code-mode.md: What the model sees: typed stubs": [],  # a chain, no model
    "docs/code-mode.md: Hostile programs": [],  # a chain, no model
    "docs/code-mode.md: Approvals and resume": [],  # a ScriptedModel plays the model
    "docs/durable.md: Survive a crash, wait for a person": [
        calls(("lookup_order", {"order_id": "A17"})),
        calls(("issue_refund", {"order_id": "A17", "amount_eur": 20})),
        "Refunded 20 EUR for order A17.",
    ],
    "docs/durable.md: Paused for a person, resumed from any process": [
        calls(("issue_refund", {"order_id": "A17", "amount_eur": 80})),
        "Refunded 80 EUR for order A17.",
    ],
    # A server with no tool parser: the calls come as text.
    "docs/dialects.md: Local models without a tool parser": [
        '<think>Rain?</think><tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}'
        "</tool_call>",
        "Yes: light rain in Oslo.",
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Bergen", "days": "2"}}'
        "</tool_call>",
        "<answer>Light rain in Bergen for both days.</answer>",
    ],
    "docs/mcp.md: The tools of an MCP server": [calls(("add", {"a": 2, "b": 3})), "2 + 3 = 5"],
    "docs/approvals.md: Sub-agents pause with their parent": [],  # ScriptedModels
    "docs/approvals.md: Streaming a resume": [],  # a ScriptedModel
    "docs/run-prompt.md: Pausing for a person, and resuming": [],  # a ScriptedModel
    "docs/mcp.md: A server that asks a question (elicitation)": [],  # a ScriptedModel
    "docs/tracing.md: Watching a run: logs and traces": [],  # a ScriptedModel plays the model
    "docs/ui.md: An agent behind AG-UI": [],  # a ScriptedModel plays the model
    "docs/tracing.md: Tracing runs with OpenTelemetry": [
        calls(("get_weather", {"city": "Oslo"})),
        "Yes: light rain and 9 °C in Oslo today, so take one.",
    ],
}
"""What the model says, turn by turn, for each Python block, by file and section (a section's
later blocks are "<file>: <section>, 2" and so on)."""

RUN_ELSEWHERE = {
    "make demo": "tests/agents/test_cli.py runs the demo; CI runs make test itself",
    "make test": "CI runs it (.ci/run)",
    "pip install ./gent-py": "tests/test_install.py installs the built wheel; see the notes",
    "pip install './gent-py[mcp,redis]'": "as above",
    "pip wheel --no-deps -w dist ./gent-py": "tests/test_install.py builds the wheel",
    "pip install 'dist/gent_py-0.1.0-py3-none-any.whl[testing]'": "as above",
    "pip install './gent-py[testing]'": "as above",
    "make docs": "tests/docs/test_site.py builds the same site with --strict",
    "make docs-serve": "tests/docs/test_site_in_browser.py serves the built site on loopback",
    "make web": "tests/agents/ui/test_playground_in_browser.py serves the playground on loopback",
}
"""Shell commands of the pages this test does not run, and what checks them instead."""


@dataclass(frozen=True)
class Block:
    """A fenced block of a page: its language, text, first line (1-based) and section."""

    lang: str
    text: str
    line: int
    section: str


@dataclass(frozen=True)
class Page:
    """README.md or a page of docs/: its name (relative to the repository), lines, blocks."""

    path: Path
    name: str
    lines: list[str]
    blocks: list[Block]

    @classmethod
    def read(cls, path: Path) -> Page:
        lines = path.read_text(encoding="utf-8").splitlines()
        return cls(path, path.relative_to(ROOT).as_posix(), lines, _blocks(lines))

    def block_at(self, line: int) -> int:
        """The index in ``blocks`` of the block whose fence opens on ``line``."""
        return next(i for i, b in enumerate(self.blocks) if b.line == line)


def _blocks(lines: list[str]) -> list[Block]:
    """The fenced blocks, each under the last ``#`` or ``##`` heading before it."""
    found: list[Block] = []
    section = ""
    numbered = iter(enumerate(lines, start=1))
    for number, line in numbered:
        if line.startswith(("# ", "## ")):
            section = line.lstrip("#").strip()
        elif line.startswith("```"):
            lang = line[3:].strip()
            body: list[str] = []
            for _, inner in numbered:
                if inner.startswith("```"):
                    break
                body.append(inner)
            found.append(Block(lang, "\n".join(body) + "\n", number, section))
    return found


PAGES = [Page.read(README), *(Page.read(p) for p in sorted(DOCS.rglob("*.md")))]
BY_PATH = {page.path: page for page in PAGES}
PYTHON = [ex for page in PAGES for ex in find_examples(str(page.path)) if ex.prefix == "python"]


def _page(example: CodeExample) -> Page:
    return BY_PATH[Path(example.path).resolve()]


def _key(example: CodeExample) -> str:
    """``"<file>: <section>"``, with ", 2", ", 3" … for the section's later Python blocks."""
    page = _page(example)
    section = page.blocks[page.block_at(example.start_line)].section
    before = [b for b in page.blocks if b.section == section and b.lang == "python"]
    place = next(i for i, b in enumerate(before, start=1) if b.line == example.start_line)
    key = f"{page.name}: {section}"
    return key if place == 1 else f"{key}, {place}"


def _is_test_file(example: CodeExample) -> bool:
    return example.source.startswith("# tests/")


def _id(example: CodeExample) -> str:
    return f"{_page(example).name}:{example.start_line}"


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


DOCS_DAY = dt.date(2026, 11, 28)
"""The day the pages' blocks run on. An agent's prompt says the date and the weekday, so
the token counts a page prints (its request's size) would change with the weekday's name:
they were written on this day."""


class _DocsDate(dt.date):
    """``datetime.date`` whose ``today`` is `DOCS_DAY`."""

    @classmethod
    def today(cls) -> _DocsDate:
        return cls(DOCS_DAY.year, DOCS_DAY.month, DOCS_DAY.day)


@pytest.fixture(autouse=True)
def _docs_day(monkeypatch: pytest.MonkeyPatch) -> None:
    """Agents built in a block default to a clock that says `DOCS_DAY`."""
    monkeypatch.setattr("agents._engine.dt", SimpleNamespace(date=_DocsDate))


PROVIDERS = ("OPENAI", "OLLAMA", "VLLM", "LLAMACPP", "LMSTUDIO")
"""The providers of the model strings the pages use, all pointed at the loopback server."""


@pytest.fixture
def docs_server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[LoopbackServer]:
    """A keep-alive OpenAI-compatible server behind every model string the pages use, and
    an empty working directory."""
    with LoopbackServer() as server:
        for name in list(os.environ):
            if name.endswith(("_API_KEY", "_API_BASE", "_API_TYPE")) or name.startswith(
                "LM_MODEL_"
            ):
                monkeypatch.delenv(name)
        for provider in PROVIDERS:
            monkeypatch.setenv(f"{provider}_API_KEY", "sk-docs-test")
            monkeypatch.setenv(f"{provider}_API_BASE", server.openai_base_url)
        monkeypatch.chdir(tmp_path)
        yield server


BROKEN: dict[str, str] = {}
"""Sections whose claims do not hold yet, and why (strict: they fail until fixed)."""


def _python_params() -> list[object]:
    params: list[object] = []
    for example in PYTHON:
        if _is_test_file(example):
            continue
        reason = BROKEN.get(_key(example))
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        params.append(pytest.param(example, id=_id(example), marks=marks))
    return params


@pytest.mark.parametrize("example", _python_params())
def test_python_block_runs_and_prints_what_it_shows(
    example: CodeExample,
    eval_example: EvalExample,
    docs_server: LoopbackServer,
    capsys: pytest.CaptureFixture[str],
) -> None:
    key = _key(example)
    assert key in SCRIPTS, (
        f"{key!r} has a Python block (line {example.start_line}) with no script in "
        "tests/test_readme.py SCRIPTS"
    )
    script = SCRIPTS[key]
    docs_server.respond_with(chat_script(script))
    _lint(example.source)
    # (its signature stops at py310; the value only shapes how "#>" output is wrapped)
    eval_example.set_config(line_length=100, target_version="py310")
    if "#>" in example.source:
        eval_example.run_print_check(example)
    else:
        eval_example.run(example)
    printed = capsys.readouterr().out
    requests = [r for r in docs_server.requests if r.path.endswith("/chat/completions")]
    assert len(requests) == len(script), f"the block used {len(requests)} of {len(script)} turns"
    shown = _shown_output(example)
    if shown is not None:
        assert _timeless(printed) == _timeless(shown)


def test_every_script_has_its_block() -> None:
    """A script whose block moved or went is stale: its section's block runs unscripted."""
    keys = {_key(example) for example in PYTHON if not _is_test_file(example)}
    assert sorted(set(SCRIPTS) - keys) == []


def _timeless(text: str) -> str:
    """Text with durations ("0.013 s") made alike: they differ from run to run."""
    return re.sub(r"\b\d+\.\d+ s\b", "<t> s", text)


def _lint(source: str) -> None:
    """The project's own ruff rules and format, as if the block were a module of it."""
    name = str(ROOT / "docs_block.py")
    # "#>" lines show output (pytest-examples); the formatter would write them "# >".
    kept = source.splitlines(keepends=True)
    source = "".join(line for line in kept if not line.lstrip().startswith("#>"))
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
    page = _page(example)
    after = example.end_line
    index = page.block_at(example.start_line)
    following = page.blocks[index + 1 : index + 3]
    prose = "\n".join(page.lines[after : following[0].line - 1]).strip() if following else ""
    if not prose.startswith("prints"):
        return None
    shown = [following[0]]
    first_end = following[0].line + following[0].text.count("\n") + 1  # past its fence
    gap = "\n".join(page.lines[first_end : following[1].line - 1]) if len(following) > 1 else "x"
    if not gap.strip():
        shown.append(following[1])
    return "".join(block.text for block in shown)


def _example_transcripts() -> list[tuple[str, Block]]:
    found: list[tuple[str, Block]] = []
    for page in PAGES:
        for index, block in enumerate(page.blocks[1:], start=1):
            prose = "\n".join(page.lines[page.blocks[index - 1].line : block.line - 1])
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
    page = _page(example)
    index = page.block_at(example.start_line)
    named = [b for b in page.blocks[index + 1 : index + 3] if b.text.startswith(("tests/", "# "))]
    if named and named[0].text.startswith("tests/"):
        assert written == named[0].text.split()
        shown = named[1] if len(named) > 1 else None
        if shown is not None:
            md = next(p for p in written if p.endswith(".md"))
            assert (tmp_path / md).read_text(encoding="utf-8") == shown.text.rstrip("\n")


def _shell_commands() -> list[str]:
    commands: list[str] = []
    for page in PAGES:
        for block in page.blocks:
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
    "command", sorted({c for c in _shell_commands() if c.startswith("python -m agents ")})
)
def test_agents_commands_run_from_an_empty_directory(command: str, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    args = [sys.executable, *shlex.split(command)[1:]]
    completed = subprocess.run(
        args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr


# -- the front door ----------------------------------------------------------------------

FRONT_DOORS = (README, DOCS / "index.md")


def _first_agent_block(page: Page) -> Block:
    """The first Python block that builds an agent and runs it."""
    return next(
        b
        for b in page.blocks
        if b.lang == "python" and "Agent(" in b.text and re.search(r"\.run(_sync)?\(", b.text)
    )


def test_the_readme_is_at_most_200_lines() -> None:
    assert len(BY_PATH[README].lines) <= 200


@pytest.mark.parametrize("path", FRONT_DOORS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_an_agent_runs_within_the_first_60_lines(path: Path) -> None:
    page = BY_PATH[path]
    block = _first_agent_block(page)
    closing = block.line + block.text.count("\n") + 1  # the line of its closing fence
    assert closing <= 60, f"{page.name}: the first agent ends on line {closing}"
    # It is one of the blocks run above, with the script that plays its model offline.
    ran = [e for e in PYTHON if _page(e) is page and e.start_line == block.line]
    assert ran and "ScriptedModel" in block.text


def test_the_readme_maps_every_page_of_the_docs() -> None:
    """One line per page: every top-level page but the home (the README's twin) and the
    API reference's index, each link to a file that exists."""
    linked = set(re.findall(r"\]\((docs/[\w/.-]+\.md)\)", "\n".join(BY_PATH[README].lines)))
    pages = {p.relative_to(ROOT).as_posix() for p in DOCS.glob("*.md")} - {"docs/index.md"}
    assert sorted(pages | {"docs/reference/index.md"}) == sorted(linked)
