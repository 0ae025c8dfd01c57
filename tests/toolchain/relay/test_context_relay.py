"""ContextRelay on a bare chain: thresholds, modes, unboxing, scopes, stores shared by
workers and a store that goes down."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest
from pydantic import BaseModel

from formats import XMLFormat
from tests.support.valkey import Valkey
from toolchain import (
    ExecutionContext,
    Extension,
    JSONToolChain,
    TextContent,
    ToolChainResult,
    ToolResult,
    tool,
)
from toolchain.relay import ContextRelay, share_scope
from toolchain.stores import MemoryStore, SQLiteStore, Store
from toolchain.stores._results import results_of
from toolchain.variables import ToolVariables

BIG: dict[str, object] = {"rows": [{"id": n, "name": f"row {n}"} for n in range(2000)]}


class Row(BaseModel):
    id: int
    name: str


@tool
def table() -> dict[str, object]:
    """A large table."""
    return BIG


@tool
def count_rows(data: dict[str, list[Row]]) -> int:
    """Count the rows of a table."""
    return len(data["rows"])


@tool
def text_size(text: str) -> int:
    """The length of a text."""
    return len(text)


@tool
def many(items: list[str]) -> list[int]:
    """The length of each text."""
    return [len(item) for item in items]


@tool
def word() -> str:
    """One word, many times."""
    return "token " * 3000


@tool
def summary() -> ToolResult[dict[str, int]]:
    """Row counts, with the report they come from and a short note as text parts."""
    return ToolResult({"rows": 2000}, media=(TextContent("row\n" * 3000), TextContent("ok")))


@tool
def two_texts() -> ToolResult[str]:
    """A short text with two long text parts."""
    return ToolResult("short", media=(TextContent("a" * 700), TextContent("b" * 600)))


def chain(*extensions: Extension) -> JSONToolChain:
    made = JSONToolChain(extensions=extensions)
    for each in (table, count_rows, text_size, many, word, summary, two_texts):
        made.register_tool(each)
    return made


def run(made: JSONToolChain, ctx: ExecutionContext, name: str, **args: object) -> ToolChainResult:
    call = msgspec.json.encode({"tool": name, "args": args}).decode()
    return made.execute_sync(ctx, call, XMLFormat())


def test_a_structured_output_is_boxed_and_reaches_a_tool_wanting_structure() -> None:
    made, ctx = chain(ContextRelay(threshold=1000)), ExecutionContext()
    shown = run(made, ctx, "table").observations[0].text
    assert shown.startswith("internal://") and len(shown) < 40
    counted = run(made, ctx, "count_rows", data=shown)
    assert counted.raw.output(0, int) == 2000


def test_references_nested_in_lists_are_unboxed_and_strings_stay_strings() -> None:
    made, ctx = chain(ContextRelay(threshold=1000)), ExecutionContext()
    boxed = run(made, ctx, "word").observations[0].text
    sizes = run(made, ctx, "many", items=[boxed, "abc", boxed])
    assert sizes.raw.output(0, list) == [18000, 3, 18000]


def test_per_tool_thresholds_opt_outs_tokens_and_previews() -> None:
    relay = ContextRelay(threshold=1000, per_tool={"word": None}, preview=12)
    made, ctx = chain(relay), ExecutionContext()
    assert run(made, ctx, "word").observations[0].text.startswith("token token")
    shown = run(made, ctx, "table").observations[0].text
    assert shown.startswith("internal://")
    assert 'characters; it starts: \'{"rows":[{"i\'' in shown
    by_tokens = chain(ContextRelay(threshold=2500, unit="tokens"))
    # 3000 words of "token " are 3000 tokens: boxed; the same text is 18000 characters.
    assert run(by_tokens, ExecutionContext(), "word").observations[0].text.startswith("internal://")


def test_a_relay_that_measures_its_own_way_is_asked_each_call() -> None:
    # The hook measures an output itself only for a relay whose limit_for and size_of
    # are ContextRelay's: a subclass's own are called, whatever the unit says.
    class Lines(ContextRelay):
        def size_of(self, text: str) -> int:
            return text.count("\n") + 1

    class NotWords(ContextRelay):
        def limit_for(self, tool: str) -> int | None:
            return None if tool == "word" else super().limit_for(tool)

    def shown(relay: ContextRelay, name: str) -> str:
        return run(chain(relay), ExecutionContext(), name).observations[0].text

    assert shown(ContextRelay(threshold=10), "word").startswith("internal://")
    assert shown(Lines(threshold=10), "word").startswith("token token")  # one line
    assert shown(Lines(threshold=10), "summary").startswith("{")  # its parts are boxed
    assert shown(NotWords(threshold=10), "word").startswith("token token")
    assert shown(NotWords(threshold=10), "table").startswith("internal://")


def test_json_mode_shows_a_resource_link_and_unboxes_it_as_an_object() -> None:
    made, ctx = chain(ContextRelay(threshold=1000, mode="json")), ExecutionContext()
    link = msgspec.json.decode(run(made, ctx, "word").observations[0].text)
    assert link["type"] == "resource_link" and link["uri"].startswith("internal://")
    assert run(made, ctx, "text_size", text=link).raw.output(0, int) == 18000


def test_another_runs_reference_is_unknown_and_a_shared_scope_is_known() -> None:
    relay = ContextRelay(threshold=1000)
    made = chain(relay)
    first = ExecutionContext()
    boxed = run(made, first, "word").observations[0].text
    stolen = run(made, ExecutionContext(), "text_size", text=boxed)
    error = stolen.raw.errors[0]
    assert error is not None and error.kind == "invalid_arguments"
    assert "unknown reference" in error.message and "token" not in error.message
    later = ExecutionContext()
    share_scope(first, "conversation-7")
    share_scope(later, "conversation-7")
    shared = run(made, first, "word").observations[0].text
    assert run(made, later, "text_size", text=shared).raw.output(0, int) == 18000


def test_a_boxed_output_is_also_a_variable() -> None:
    made, ctx = chain(ContextRelay(threshold=1000), ToolVariables()), ExecutionContext()
    shown = run(made, ctx, "word").observations[0].text
    assert shown.startswith("$word_1 = internal://")
    reference = shown.removeprefix("$word_1 = ")
    by_name = run(made, ctx, "text_size", text="$word_1")
    by_reference = run(made, ctx, "text_size", text=reference)
    assert by_name.raw.output(0, int) == by_reference.raw.output(0, int) == 18000


def test_order_of_installation_does_not_change_what_the_model_sees() -> None:
    one = run(chain(ContextRelay(threshold=1000), ToolVariables()), ExecutionContext(), "word")
    two = run(chain(ToolVariables(), ContextRelay(threshold=1000)), ExecutionContext(), "word")
    assert one.observations[0].text.split("internal://")[0] == "$word_1 = "
    assert two.observations[0].text.split("internal://")[0] == "$word_1 = "


@pytest.mark.parametrize("order", ["relay first", "variables first"])
def test_a_run_does_not_keep_the_outputs_it_has_shown(order: str) -> None:
    relay, variables = ContextRelay(threshold=1000), ToolVariables()
    made = chain(relay, variables) if order == "relay first" else chain(variables, relay)
    ctx = ExecutionContext()
    for name in ("word", "table", "text_size"):
        args = {"text": "short"} if name == "text_size" else {}
        assert run(made, ctx, name, **args).raw.ok
    results = results_of(ctx)
    assert results.held == {}  # the serialisations were dropped once both hooks had run
    assert list(results.boxed) == [
        results_of(ctx).variables[n].call_id for n in ("word_1", "table_1")
    ]


@pytest.mark.parametrize("order", ["relay first", "variables first"])
def test_text_parts_count_toward_the_threshold_and_the_largest_are_boxed(order: str) -> None:
    relay, variables = ContextRelay(threshold=1000), ToolVariables()
    made = chain(relay, variables) if order == "relay first" else chain(variables, relay)
    ctx = ExecutionContext()
    result = run(made, ctx, "summary")
    [observed] = result.observations
    assert observed.text == '$summary_1 = {"rows":2000}'  # small: shown as it is
    boxed, note = observed.media
    assert isinstance(boxed, TextContent) and boxed.text.startswith("internal://")
    assert note == TextContent("ok")  # what fits stays
    assert result.media == observed.media
    assert "[1] text (" in result.text and "[2] text (2 characters)" in result.text
    summary_result = result.raw.results[0]  # the program keeps the real parts
    assert summary_result is not None
    assert summary_result.result.media[0] == TextContent("row\n" * 3000)
    assert run(made, ctx, "text_size", text=boxed.text).raw.output(0, int) == 12000
    # Neither piece is over the threshold alone, but together they are: the larger goes.
    both = run(made, ctx, "two_texts").observations[0]
    first, second = both.media
    assert isinstance(first, TextContent) and first.text.startswith("internal://")
    assert second == TextContent("b" * 600)
    assert both.text == "$two_texts_1 = short"


def test_the_readers_get_references_not_values() -> None:
    made, ctx = chain(ContextRelay(threshold=1000)), ExecutionContext()
    boxed = run(made, ctx, "word").observations[0].text
    length = run(made, ctx, "internal_resource_length", opaque_reference=boxed)
    assert "18000" in length.observations[0].text
    sliced = run(
        made, ctx, "internal_resource_read_slice", opaque_reference=boxed, start_index=-6, length=6
    )
    assert "token " in sliced.observations[0].text


# -- stores ---------------------------------------------------------------------------------


@pytest.fixture
def server() -> Iterator[Valkey]:
    started = Valkey.start()
    yield started
    started.stop()


def test_workers_sharing_a_redis_store_resolve_each_others_references(server: Valkey) -> None:
    from toolchain.stores import RedisStore

    worker_a = chain(ContextRelay(threshold=1000, store=RedisStore(server.url)))
    worker_b = chain(ContextRelay(threshold=1000, store=RedisStore(server.url)))
    ctx_a, ctx_b = ExecutionContext(), ExecutionContext()
    share_scope(ctx_a, "job-1")
    share_scope(ctx_b, "job-1")
    boxed = run(worker_a, ctx_a, "table").observations[0].text
    assert run(worker_b, ctx_b, "count_rows", data=boxed).raw.output(0, int) == 2000


def test_a_store_that_goes_down_keeps_results_and_says_so_without_its_address(
    server: Valkey, caplog: pytest.LogCaptureFixture
) -> None:
    from toolchain.stores import RedisStore

    store: Store = RedisStore(server.url, connect_timeout=0.5, socket_timeout=0.5)
    made, ctx = chain(ContextRelay(threshold=1000, store=store)), ExecutionContext()
    boxed = run(made, ctx, "word").observations[0].text
    done = run(made, ctx, "text_size", text="plain")
    server.stop()
    failed = run(made, ctx, "text_size", text=boxed)
    error = failed.raw.errors[0]
    assert error is not None and error.kind == "invalid_arguments"
    assert error.message == (
        f"invalid arguments for text_size: {boxed} could not be read: the store did not "
        "answer; try again later, or go on without it"
    )
    boxing = run(made, ctx, "word")  # it ran: its result is kept and shown, not an error
    assert boxing.raw.errors == (None,) and boxing.raw.output(0, str) == "token " * 3000
    assert boxing.observations[0].text == f"{UNSTORED}\n{'token ' * 3000}"
    assert done.raw.output(0, int) == 5  # what finished before is untouched
    address = f"127.0.0.1:{server.port}"
    assert address not in failed.text + boxing.text
    logged = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert any(address in line and "could not store" in line for line in logged)
    assert any(address in line and "could not read" in line for line in logged)


UNSTORED = "[this output could not be stored for reference, so it is shown in full]"


def held_lock(path: Path) -> sqlite3.Connection:
    """Another process's writer, in the middle of a transaction on ``path``."""
    SQLiteStore(path).close()  # the file and its table exist
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    return holder


@pytest.mark.parametrize("failure", ["not a database", "write lock held", "out of memory"])
def test_a_result_the_store_cannot_keep_is_shown_not_lost(
    failure: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "refs.db"
    holder: sqlite3.Connection | None = None
    full: Valkey | None = None
    if failure == "not a database":
        path.write_bytes(b"these are not the pages of a database" * 100)
        store: Store = SQLiteStore(path)
        secret_detail = str(path)
    elif failure == "write lock held":
        holder = held_lock(path)
        store = SQLiteStore(path, timeout=0.2)
        secret_detail = str(path)
    else:
        full = Valkey.start("--maxmemory", "1mb", "--maxmemory-policy", "noeviction")
        from toolchain.stores import RedisStore

        store = RedisStore(full.url)
        secret_detail = f"127.0.0.1:{full.port}"
    try:
        relay = ContextRelay(threshold=1000, store=store, max_read_chars=5_000)
        made, ctx = chain(relay, ToolVariables()), ExecutionContext()
        result = run(made, ctx, "word")
        summary = run(made, ctx, "summary")
    finally:
        if holder is not None:
            holder.close()
        if full is not None:
            full.stop()
    assert result.raw.errors == (None,) and result.raw.output(0, str) == "token " * 3000
    shown = result.observations[0].text
    assert shown == (
        "$word_1 = [this output could not be stored for reference, so it is shown here: "
        f"its first 5000 of 18000 characters]\n{('token ' * 3000)[:5000]}"
    )
    [part, note] = summary.observations[0].media  # a text part: kept and shown the same way
    assert note == TextContent("ok")
    assert part == TextContent(
        "[this output could not be stored for reference, so it is shown here: its first "
        f"5000 of 12000 characters]\n{('row' + chr(10)) * 1250}"
    )
    assert summary.raw.errors == (None,)
    for text in (result.text, summary.text, str(summary.media)):
        assert secret_detail not in text and "Store" not in text
    logged = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert any(
        secret_detail in line and "could not store an output of word" in line for line in logged
    )


@pytest.mark.parametrize("kind", ["react", "native"])
def test_an_agent_gets_the_result_of_a_call_the_store_could_not_keep(
    kind: str, tmp_path: Path
) -> None:
    from agents import ReActAgent, ToolCallingAgent
    from agents.models import ScriptedModel

    published: list[str] = []

    @tool
    def publish(title: str) -> str:
        """Publish a page; returns its text."""
        published.append(title)
        return "Hello, world. " * 1_000

    path = tmp_path / "refs.db"
    path.write_bytes(b"not a database" * 100)
    relay = ContextRelay(threshold=1000, store=SQLiteStore(path))
    chain = JSONToolChain(extensions=[relay]).register_tool(publish)
    if kind == "react":
        model = ScriptedModel(
            [
                '<action>{"tool": "publish", "args": {"title": "Hi"}}</action>',
                "<answer>done</answer>",
            ]
        )
        agent: ReActAgent[str] | ToolCallingAgent[str] = ReActAgent(model, tool_chain=chain)
    else:
        model = ScriptedModel([ScriptedModel.call("publish", title="Hi"), "done"])
        agent = ToolCallingAgent(model, tool_chain=chain)
    result = agent.run_sync("Publish a page titled Hi")
    assert result.ok and result.answer == "done" and published == ["Hi"]
    assert result.steps[0].tool_results[0].raw.errors == (None,)
    seen = model.requests[1].messages[-1].text_content()
    assert UNSTORED in seen and "Hello, world. Hello" in seen
    assert str(path) not in seen and "Error" not in seen  # nothing invites a second publish


def test_memory_is_the_default_store() -> None:
    assert isinstance(ContextRelay().store, MemoryStore)
