"""`run_case` and `run_cases` on scripted models: setups that fail, temperatures,
concurrency, and the calls recorded as the model wrote them."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from agents.evals import (
    EvalReport,
    EvalSettings,
    ModelTarget,
    PromptCase,
    Toolset,
    ToolsetOptions,
    parse_case,
    run_case,
    run_cases,
)
from agents.models import Message, ScriptedModel

RELAY_CASE = parse_case(
    """---
tool_calls:
  - {tool_name: yt_transcribe, opaque_id_result: true}
  - {tool_name: deep_check, opaque_id_input: true}
---
Transcribe video 123 and check it."""
)


def relay_brain(messages: Sequence[Message]) -> str:
    seen = messages[-1].text_content()
    if len(messages) == 2:
        return '<action>{"tool": "yt_transcribe", "args": {"video_id": "123"}}</action>'
    if "internal://" in seen and "deep_check" not in seen:
        reference = seen[seen.index("internal://") :].split()[0].split("<")[0]
        return f'<action>{{"tool": "deep_check", "args": {{"text": "{reference}"}}}}</action>'
    return "<answer>done</answer>"


def target() -> ModelTarget:
    return ModelTarget("scripted", lambda: ScriptedModel(relay_brain))


def test_calls_keep_what_the_model_wrote_not_what_the_tool_got() -> None:
    result = asyncio.run(run_case(RELAY_CASE, target(), EvalSettings()))
    assert result.passed, result.failures
    yt, check = result.calls
    assert check.args["text"] == yt.result and yt.result.startswith("internal://")
    assert result.uses_relay and "context_relay" in result.system_prompt


def test_reference_ids_repeat_from_run_to_run() -> None:
    first = asyncio.run(run_case(RELAY_CASE, target(), EvalSettings()))
    second = asyncio.run(run_case(RELAY_CASE, target(), EvalSettings()))
    assert first.calls[0].result == second.calls[0].result
    assert first.transcript == second.transcript


def test_a_model_that_cannot_be_set_up_is_a_failed_result() -> None:
    target = ModelTarget.from_string("nosuchprovider:model", {})
    result = asyncio.run(run_case(RELAY_CASE, target, EvalSettings()))
    assert result.stopped_by == "error" and not result.passed
    assert "the model could not be set up" in result.failures[0]
    assert "NOSUCHPROVIDER_API_BASE" in result.failures[0]


def test_an_unknown_toolset_is_a_failed_setup() -> None:
    case = PromptCase(id="x", prompt="Go.", toolset="nothing")  # a case file says so sooner
    result = asyncio.run(run_case(case, target(), EvalSettings()))
    assert result.failures == (
        "toolset: unknown toolset 'nothing': use relay, airline or package.module:factory",
    )
    assert result.setup_failed and EvalReport([result]).exit_code == 2


def failing_toolset(options: ToolsetOptions) -> Toolset:
    raise RuntimeError("the fixture database is down")


def test_a_toolset_that_raises_is_a_failed_setup_naming_it() -> None:
    case = PromptCase(id="x", prompt="Go.", toolset=f"{__name__}:failing_toolset")
    result = asyncio.run(run_case(case, target(), EvalSettings()))
    assert result.failures == (
        f"toolset: toolset '{__name__}:failing_toolset' failed: "
        "RuntimeError: the fixture database is down",
    )
    assert result.setup_failed


def test_temperatures_reach_the_model_except_reasoning_models() -> None:
    models: list[ScriptedModel] = []

    def build() -> ScriptedModel:
        models.append(ScriptedModel(["<answer>ok</answer>"]))
        return models[-1]

    case = parse_case("Hi.")
    asyncio.run(
        run_case(case, ModelTarget("openai:gpt-4o", build, 0.3), EvalSettings(max_retries=2))
    )
    sent = models[-1].requests[0].options
    assert (sent.temperature, sent.max_retries) == (0.3, 2)
    result = asyncio.run(
        run_case(case, ModelTarget("openai:gpt-5-mini", build), EvalSettings(temperature=0.7))
    )
    reasoning = models[-1].requests[0].options
    assert reasoning.temperature is None
    assert result.notes == ("temperature 0.7 ignored: openai:gpt-5-mini is a reasoning model",)


def test_the_matrix_keeps_its_order_whatever_finishes_first() -> None:
    async def slow_then_fast() -> list[str]:
        cases = [parse_case(f"---\nid: c{n}\n---\nSay {n}.") for n in range(5)]
        finished: list[str] = []
        targets = [
            ModelTarget(f"m{n}", lambda: ScriptedModel(lambda messages: "<answer>ok</answer>"))
            for n in range(2)
        ]
        results = await run_cases(
            cases,
            targets,
            EvalSettings(),
            concurrency=3,
            on_result=lambda result: finished.append(result.case.id),
        )
        assert sorted(finished) == sorted(r.case.id for r in results)
        return [f"{r.model}/{r.case.id}" for r in results]

    order = asyncio.run(slow_then_fast())
    assert order == [f"m{m}/c{c}" for m in range(2) for c in range(5)]


def test_record_then_replay_a_plain_prompt(tmp_path: Path) -> None:
    case = parse_case("---\nanswer: {contains: ok}\n---\nSay ok.")
    record = EvalSettings(mode="record", cassette_dir=tmp_path, env={})
    made = asyncio.run(
        run_case(case, ModelTarget.of(ScriptedModel(["<answer>ok</answer>"])), record)
    )
    assert made.passed and made.cassette is not None and made.cassette.is_file()
    assert made.cassette.parent == tmp_path / "prompt"
    replay = EvalSettings(mode="replay", cassette_dir=tmp_path, env={})
    again = asyncio.run(run_case(case, ModelTarget("scripted", lambda: ScriptedModel([])), replay))
    assert again.passed and again.answer == "ok"
