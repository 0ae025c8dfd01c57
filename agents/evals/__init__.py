"""Prompt-case evaluations: Markdown prompts with YAML frontmatter, run over models,
recorded once and replayed in CI.

- `agents.evals.cases` — case files (`load_case`, `PromptCase`, `CaseFileError`);
- `agents.evals.matchers` — argument, result and answer checks;
- `agents.evals.validation` — judging a run's calls (`CallRecord`, `validate`);
- `agents.evals.toolsets` — what a case runs against (``relay``, ``airline``, yours);
- `agents.evals.profiles` — models from profiles, ``.env`` files and model strings;
- `agents.evals.cassettes` — record and replay (`Cassette`, `CassetteModel`);
- `agents.evals.runner` — `run_case`, `run_cases`;
- `agents.evals.report` — `EvalReport`: Markdown, JSON, HTML, exit code;
- `agents.evals.cli` — ``python -m agents eval``.

It may import the agents and what they stand on (``agents.react``,
``agents.tool_calling``, ``agents.models``, ``agents.result``, the demo's tools for
the ``airline`` toolset), ``toolchain`` and ``formats``; only ``agents.cli`` imports it.

>>> import asyncio
>>> from agents.models import ScriptedModel
>>> case = parse_case('''---
... tool_calls: [{tool_name: yt_transcribe, args: {video_id: "999"}}]
... answer: {contains: welcome}
... ---
... Transcribe the video with video_id='999'.''')
>>> model = ScriptedModel([
...     '<action>{"tool": "yt_transcribe", "args": {"video_id": "999"}}</action>',
...     "<answer>It says: Hello and welcome to a short video.</answer>",
... ])
>>> results = asyncio.run(run_cases([case], [ModelTarget.of(model)], EvalSettings()))
>>> EvalReport(results).rows()[0][:4]
('scripted', 'prompt', '✔', '✅')
"""

from agents.evals.cases import (
    CallExpectation,
    CaseFileError,
    CountBound,
    PromptCase,
    load_case,
    load_cases,
    parse_case,
)
from agents.evals.cassettes import Cassette, CassetteMiss, CassetteModel, request_key
from agents.evals.matchers import AnswerCheck, TextCheck, ValueMatcher
from agents.evals.profiles import (
    ModelProfile,
    ModelTarget,
    eval_environment,
    load_env_file,
    resolve_profile,
)
from agents.evals.report import EvalReport
from agents.evals.runner import CaseResult, EvalSettings, run_case, run_cases
from agents.evals.toolsets import Toolset, ToolsetOptions, resolve_toolset
from agents.evals.validation import CallRecord, validate

__all__ = [
    "AnswerCheck",
    "CallExpectation",
    "CallRecord",
    "CaseFileError",
    "CaseResult",
    "Cassette",
    "CassetteMiss",
    "CassetteModel",
    "CountBound",
    "EvalReport",
    "EvalSettings",
    "ModelProfile",
    "ModelTarget",
    "PromptCase",
    "TextCheck",
    "Toolset",
    "ToolsetOptions",
    "ValueMatcher",
    "eval_environment",
    "load_case",
    "load_cases",
    "load_env_file",
    "parse_case",
    "request_key",
    "resolve_profile",
    "resolve_toolset",
    "run_case",
    "run_cases",
    "validate",
]
