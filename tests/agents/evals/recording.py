"""How the ported cases' cassettes are made: scripted "models" behind a loopback
OpenAI-compatible endpoint, recorded through `OpenAIChatModel` over real HTTP.

Each brain reads the chat completion request as the server received it (the JSON
body the SDK sent) and answers as a sensible model would: it takes the reference it
was shown and passes it on, reads the numbers in the observations, and so on. The
recordings therefore hold real request and response shapes.

Re-record every cassette (after a prompt or a system prompt changed)::

    .venv/bin/python -m tests.agents.evals.recording
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from agents.demo.script import demo_native_replies, demo_outputs
from agents.evals import CaseResult, EvalSettings, ModelTarget, PromptCase, load_cases, run_case
from agents.models import Model, OpenAIChatModel, ScriptedReply
from formats import XMLFormat
from tests.support.loopback import LoopbackServer, RecordedRequest, Reply, json_reply
from tests.support.openai_replies import openai_call, openai_calls, openai_completion, openai_usage

PROMPTS: Final = Path(__file__).resolve().parents[3] / "agents" / "evals" / "prompts"
MODEL_NAME: Final = "loopback:scripted"
API_KEY: Final = "sk-loopback-recording-key-0123456789abcdef"
"""Sent to the loopback server only; a cassette must never hold it."""

Protocol = Literal["text", "native"]
Calls = list[tuple[str, dict[str, object]]]
Step = Callable[[str, str], "Calls | str"]
"""(the text since the model last spoke, the whole conversation) -> calls or an answer."""

REFERENCE = re.compile(r"internal://[A-Za-z0-9_-]+")


@dataclass(frozen=True, slots=True)
class Variant:
    """One recorded combination of protocol and boxing (few-shot examples on)."""

    protocol: Protocol
    boxing: Literal["opaque", "json"] = "opaque"

    def settings(self, mode: Literal["record", "replay"], root: Path | None = None) -> EvalSettings:
        return EvalSettings(
            protocol=self.protocol, boxing=self.boxing, mode=mode, cassette_dir=root, env={}
        )


RELAY_VARIANTS: Final = (Variant("text"), Variant("native"), Variant("text", "json"))
AIRLINE_VARIANTS: Final = (Variant("text"), Variant("native"))


def _first_ref(text: str) -> str:
    found = REFERENCE.findall(text)
    assert found, f"no reference in {text[:300]!r}"
    return str(found[0])


def _case3_answer(seen: str, everything: str) -> str:
    numbers = re.findall(r"[0-9]{4}", seen)
    return f"The number at the end of the transcript is {numbers[-1]}."


def _case4_save(seen: str, everything: str) -> Calls:
    analysis = re.search(r"Analysis: [^\n<\"]*", seen)
    assert analysis is not None, seen
    return [
        (
            "google_drive_write_file",
            {"file_content": _first_ref(everything), "file_name": "transcript.txt"},
        ),
        (
            "google_drive_write_file",
            {"file_content": analysis.group(0), "file_name": "analysis.txt"},
        ),
    ]


def _short_transcript(seen: str, everything: str) -> Calls:
    found = re.search(r"Hello and welcome[^\"<\n]*", seen)
    assert found is not None, seen
    return [("deep_check", {"text": found.group(0)})]


def _images(seen: str, everything: str) -> str:
    return "The page has two images: " + ", ".join(re.findall(r'src=\\?"([^"\\]+)', seen))


def _bag_answer(seen: str, everything: str) -> str:
    fee = re.search(r"Checked bags cost \$([0-9]+) each in economy", seen)
    assert fee is not None, seen
    free = "carry-on" in seen and "are free" in seen
    return json.dumps({"checked_bag_fee_usd": int(fee.group(1)), "carry_on_free": free})


STEPS: Final[Mapping[str, Sequence[Step]]] = {
    "case0": (
        lambda seen, everything: [("yt_transcribe", {"video_id": "999"})],
        _short_transcript,
        lambda seen, everything: "Deep Check analysed the transcript: nothing alarming.",
    ),
    "case1": (
        lambda seen, everything: [("yt_transcribe", {"video_id": "123"})],
        lambda seen, everything: [("deep_check", {"text": _first_ref(everything)})],
        lambda seen, everything: "Deep Check analysed the transcript: nothing alarming.",
    ),
    "case2": (
        lambda seen, everything: [("yt_transcribe", {"video_id": "123"})],
        lambda seen, everything: [
            (
                "google_drive_write_file",
                {"file_content": _first_ref(everything), "file_name": "transcript.txt"},
            )
        ],
        lambda seen, everything: "The transcript is saved on Google Drive as transcript.txt.",
    ),
    "case3": (
        lambda seen, everything: [("yt_transcribe", {"video_id": "123"})],
        lambda seen, everything: [("deep_check", {"text": _first_ref(everything)})],
        lambda seen, everything: [
            (
                "internal_resource_read_slice",
                {"opaque_reference": _first_ref(everything), "start_index": -30, "length": 30},
            )
        ],
        _case3_answer,
    ),
    "case4": (
        lambda seen, everything: [("yt_transcribe", {"video_id": "123"})],
        lambda seen, everything: [("deep_check", {"text": _first_ref(everything)})],
        _case4_save,
        lambda seen, everything: "Both files are saved: transcript.txt and analysis.txt.",
    ),
    "web1": (
        lambda seen, everything: [("get_page", {"url": "https://demo.local/history"})],
        lambda seen, everything: [
            (
                "internal_resource_grep",
                {"opaque_reference": _first_ref(everything), "pattern": "<img", "window": 0},
            )
        ],
        _images,
    ),
    "baggage": (
        lambda seen, everything: [
            ("get_customer_info", {"email": "ana.lima@email.com"}),
            ("search_airline_policy", {"keyword": "baggage"}),
        ],
        _bag_answer,
    ),
}


def _text(message: Mapping[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def _reply(case_id: str, body: Mapping[str, Any]) -> tuple[str, Calls]:
    """(text, calls) this case's brain says next, given the request body."""
    messages: list[Mapping[str, Any]] = body["messages"]
    native = bool(body.get("tools"))
    turn = sum(1 for message in messages if message.get("role") == "assistant")
    if case_id == "reschedule":  # the demo's own script, step by step
        if native:
            reply = demo_native_replies()[turn]
            if isinstance(reply, ScriptedReply):
                calls = [(c.name, json.loads(c.arguments)) for c in reply.tool_calls]
                return reply.text, calls
            return reply, []
        return demo_outputs(XMLFormat(), "yaml")[turn], []
    last = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=0)
    seen = "\n".join(_text(m) for m in messages[last + 1 :])
    everything = "\n".join(_text(m) for m in messages if m.get("role") != "system")
    planned = STEPS[case_id][turn](seen, everything)
    if isinstance(planned, str):
        return (planned, []) if native else (f"<answer>{planned}</answer>", [])
    if native:
        return "", planned
    action = json.dumps([{"tool": name, "args": args} for name, args in planned])
    return f"<action>{action}</action>", []


def brain(case_id: str) -> Callable[[RecordedRequest], Reply]:
    """A loopback handler answering chat completion requests as ``case_id``'s model."""

    def handle(request: RecordedRequest) -> Reply:
        body = request.json()
        if body.get("stream"):
            return json_reply({"error": {"message": "streaming is not scripted"}}, status=400)
        text, calls = _reply(case_id, body)
        turn = sum(1 for message in body["messages"] if message.get("role") == "assistant")
        wire = [
            openai_call(f"call_{turn + 1}_{index + 1}", name, json.dumps(args))
            for index, (name, args) in enumerate(calls)
        ]
        # The token counts are recorded in the cassettes: count what the reply says.
        message: dict[str, object] = {"role": "assistant", "content": text or None}
        if calls:
            message["tool_calls"] = wire
        prompt, completion = len(request.body) // 4, len(text + json.dumps(message)) // 4
        if calls:
            usage = openai_usage(prompt, completion)
            return openai_calls(wire, text=text or None, usage=usage, model="scripted")
        return openai_completion(
            text, prompt_tokens=prompt, completion_tokens=completion, model="scripted"
        )

    return handle


def suites() -> list[tuple[PromptCase, tuple[Variant, ...]]]:
    """Every ported case with the variants recorded for it."""
    relay = load_cases(globs=[str(PROMPTS / "relay" / "*.md")])
    airline = load_cases(globs=[str(PROMPTS / "airline" / "*.md")])
    return [(case, RELAY_VARIANTS) for case in relay] + [
        (case, AIRLINE_VARIANTS) for case in airline
    ]


def record(root: Path | None = None) -> list[CaseResult]:
    """Record every ported case and variant; under ``root/<suite>`` when given (a test's
    temporary folder), else beside the case files."""
    return asyncio.run(_record(root))


async def _record(root: Path | None) -> list[CaseResult]:
    results: list[CaseResult] = []
    with LoopbackServer() as server:
        for case, variants in suites():
            server.respond_with(brain(case.id))
            assert case.path is not None
            where = None if root is None else root / case.path.parent.name
            for variant in variants:

                def build() -> Model:
                    return OpenAIChatModel(
                        "scripted",
                        api_key=API_KEY,
                        base_url=server.openai_base_url,
                        max_retries=0,
                        name=MODEL_NAME,
                    )

                target = ModelTarget(MODEL_NAME, build)
                results.append(await run_case(case, target, variant.settings("record", where)))
    return results


def main() -> int:
    results = record()
    for result in results:
        verdict = "passed" if result.passed else "FAILED: " + "; ".join(result.failures)
        print(f"{result.case.id} {result.settings.protocol} {result.settings.boxing}: {verdict}")
    return 0 if all(result.passed for result in results) else 1


if __name__ == "__main__":
    sys.exit(main())
