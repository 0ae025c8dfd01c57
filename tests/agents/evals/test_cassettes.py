"""Cassettes: request keys, secrets never written, replay and its misses."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from agents.evals.cassettes import (
    Cassette,
    CassetteError,
    CassetteMiss,
    CassetteModel,
    request_key,
    secret_values,
)
from agents.models import (
    GenerateOptions,
    Message,
    ModelResponse,
    ScriptedModel,
    TextDelta,
    ToolCallDelta,
    ToolSpec,
)

ASK = [Message.text("system", "Be brief."), Message.text("user", "6 * 7?")]
ADD = ToolSpec("add", "Add.", {"type": "object"})


def test_the_key_covers_what_decides_the_reply_and_nothing_else() -> None:
    base = request_key("m", ASK)
    assert request_key("m", ASK, GenerateOptions()) == base
    assert request_key("m", ASK, GenerateOptions(headers={"Authorization": "Bearer x"})) == base
    assert request_key("m", ASK, GenerateOptions(max_retries=0)) == base
    different = [
        request_key("other", ASK),
        request_key("m", [*ASK, Message.text("user", "and 6 * 9?")]),
        request_key("m", [ASK[0], Message.text("user", "6 * 8?")]),
        request_key("m", ASK, GenerateOptions(temperature=0.0)),
        request_key("m", ASK, GenerateOptions(stop=("<observation>",))),
        request_key("m", ASK, GenerateOptions(tools=(ADD,))),
        request_key("m", ASK, GenerateOptions(tools=(ADD,), tool_choice="required")),
    ]
    assert len({base, *different}) == len(different) + 1
    assert len(base) == 64


def record(path: Path, outputs: list[str], asks: list[list[Message]], **options: object) -> None:
    model = CassetteModel(
        ScriptedModel(outputs), Cassette(path, secrets=("s3cr3t-value-123",)), mode="record"
    )
    opts = GenerateOptions(**options)  # type: ignore[arg-type]
    for ask in asks:
        asyncio.run(model.generate(ask, opts))
    model.cassette.save()


def test_secrets_are_never_written(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    leaky = [
        Message.text("user", "my key is sk-proj-abcdefghijklmnopqrstuvwx and s3cr3t-value-123")
    ]
    record(
        path,
        ["Authorization: Bearer sk-ant-abcdefghijklmnopqrstu"],
        [leaky],
        headers={
            "Authorization": "Bearer sk-live-abcdefghijklmnop1234",
            "X-Api-Key": "hunter2hunter2",
        },
    )
    text = path.read_text()
    for secret in (
        "sk-proj-abc",
        "s3cr3t-value-123",
        "sk-ant-abc",
        "sk-live",
        "hunter2",
        "X-Api-Key",
    ):
        assert secret not in text
    assert "[REDACTED]" in text
    assert "Authorization" in text  # the reply's text, with its value blanked
    # the request still replays: its key was computed before scrubbing
    player = CassetteModel("scripted", Cassette.load(path), mode="replay")
    reply = asyncio.run(player.generate(leaky, GenerateOptions(headers={"Authorization": "other"})))
    assert reply.text == "Authorization: [REDACTED]"


def test_secret_values_come_from_secret_names() -> None:
    env = {
        "OPENAI_API_KEY": "sk-123456789",
        "LOCAL_COMPAT_API_KEY": "abcdefghij",
        "HF_TOKEN": "hf_abcdefgh",
        "DB_PASSWORD": "correct-horse",
        "OPENAI_MODEL": "gpt-4o-mini-long-name",
        "SHORT_KEY": "abc",
    }
    assert set(secret_values(env)) == {"sk-123456789", "abcdefghij", "hf_abcdefgh", "correct-horse"}


def test_the_file_is_readable_and_shares_what_repeats(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    second = [*ASK, Message.text("assistant", "42"), Message.text("user", "and 6 * 9?")]
    record(path, ["42", "54"], [ASK, second], temperature=0.2)
    document = json.loads(path.read_text())
    first, then = document["interactions"]
    assert first["request"]["earlier_messages"] == 0 and len(first["request"]["messages"]) == 2
    assert first["request"]["options"] == {"temperature": 0.2}
    assert then["request"]["earlier_messages"] == 2
    assert [m["role"] for m in then["request"]["messages"]] == ["assistant", "user"]
    assert then["request"]["options"] == "same as previous"
    assert then["response"]["text"] == "54"
    loaded = Cassette.load(path)
    assert [len(i.messages) for i in loaded.interactions] == [2, 4]
    assert loaded.interactions[1].options == {"temperature": 0.2}
    assert loaded.to_json() == path.read_text()  # load and write back: the same file


def test_replay_answers_each_recorded_request_and_repeats(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    record(path, ["first", "second"], [ASK, ASK])
    player = CassetteModel("scripted", Cassette.load(path), mode="replay")
    replies = [asyncio.run(player.generate(ASK)).text for _ in range(3)]
    assert replies == ["first", "second", "second"]


def test_misses_say_why(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    with pytest.raises(
        CassetteMiss, match=r"prompt changed\?\): request 1 to m; there is no cassette"
    ):
        asyncio.run(CassetteModel("m", Cassette.load(path), mode="replay").generate(ASK))
    record(path, ["42"], [ASK])
    player = CassetteModel("scripted", Cassette.load(path), mode="replay")
    changed = [ASK[0], Message.text("user", "6 * 8?")]
    with pytest.raises(CassetteMiss, match=r"request 1 to scripted differs .*: message 1 \(user\)"):
        asyncio.run(player.generate(changed))
    with pytest.raises(CassetteMiss, match=r"differs .*: the options"):
        asyncio.run(
            CassetteModel("scripted", Cassette.load(path), mode="replay").generate(
                ASK, GenerateOptions(seed=1)
            )
        )
    with pytest.raises(CassetteMiss, match=r"differs .*: the model \('scripted' recorded\)"):
        asyncio.run(CassetteModel("other", Cassette.load(path), mode="replay").generate(ASK))
    player = CassetteModel("scripted", Cassette.load(path), mode="replay")
    asyncio.run(player.generate(ASK))
    with pytest.raises(CassetteMiss, match="went further than the recording"):
        asyncio.run(player.generate([*ASK, Message.text("user", "more")]))


def test_a_miss_never_calls_a_model(tmp_path: Path) -> None:
    live = ScriptedModel(["should never be used"])
    player = CassetteModel(live, Cassette.load(tmp_path / "none.json"), mode="replay")
    with pytest.raises(CassetteMiss):
        asyncio.run(player.generate(ASK))
    assert live.requests == []


def test_streams_are_recorded_and_replayed(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    opts = GenerateOptions(tools=(ADD,))

    async def drain(model: CassetteModel) -> list[object]:
        return [item async for item in model.stream(ASK, opts)]

    recorder = CassetteModel(
        ScriptedModel([ScriptedModel.call("add", a=1, text="Adding.")]),
        Cassette(path),
        mode="record",
    )
    streamed = asyncio.run(drain(recorder))
    recorder.cassette.save()
    replayed = asyncio.run(drain(CassetteModel("scripted", Cassette.load(path), mode="replay")))
    assert replayed[0] == TextDelta("Adding.")
    assert replayed[1] == ToolCallDelta(0, "call_1", "add", '{"a":1}')
    final = replayed[-1]
    assert isinstance(final, ModelResponse) and final == streamed[-1]


def test_recording_needs_a_model() -> None:
    with pytest.raises(TypeError, match="needs a model"):
        CassetteModel("name only", Cassette("x.json"), mode="record")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("not json", "not JSON"),
        ('{"version": 2, "interactions": []}', "not a version 1 cassette"),
        ('{"version": 1, "interactions": {}}', "'interactions' must be a list"),
        ('{"version": 1, "interactions": [{"key": "k"}]}', "needs 'key', 'request' and 'response'"),
        (
            '{"version": 1, "interactions": [{"key": "k", "request": {"earlier_messages": 3, '
            '"messages": []}, "response": {"text": "", "stop_reason": "stop"}}]}',
            "shares 3 messages with a request that has fewer",
        ),
        (
            '{"version": 1, "interactions": [{"key": "k", "request": {"messages": '
            '[{"role": "robot", "content": []}]}, '
            '"response": {"text": "", "stop_reason": "stop"}}]}',
            r"interactions\[0\]: invalid conversation JSON",
        ),
        (
            '{"version": 1, "interactions": [{"key": "k", "request": {}, "response": {}}]}',
            "the response is malformed",
        ),
    ],
)
def test_malformed_cassettes(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "c.json"
    path.write_text(text)
    with pytest.raises(CassetteError, match=message):
        Cassette.load(path)
