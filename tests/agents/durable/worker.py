"""A worker process for the durable-run tests: ``python -m tests.agents.durable.worker``.

    python -m tests.agents.durable.worker DIR KIND SCENARIO COMMAND WORKFLOW_ID [RELEASE]

It launches DBOS on ``DIR/runs.sqlite`` (or the URL in ``DURABLE_TEST_DATABASE``),
which recovers whatever a killed worker left pending, and then, by COMMAND:

- ``start``: starts the run ``WORKFLOW_ID`` of SCENARIO and waits for its result;
- ``recover``: waits for the result of the run ``WORKFLOW_ID`` (recovered at launch);
- ``start-and-leave``: starts the run, waits until it asks a person, prints the pending
  calls and exits (the run stays pending in the database);
- ``decide``: waits until the run asks a person again (recovered at launch), approves
  the call, and waits for the result;
- ``decide-as-client``: approves the waiting call through a ``DBOSClient`` (DBOS is not
  launched, no workflow runs here) and exits;
- ``start-and-wait``: starts the run, waits until it asks a person, prints the pending
  calls and blocks there (``DIR/block``): the test kills the process while the run waits;
- ``decide-when-asked``: takes the run over (at launch), waits until the run asks a person
  in this process (``DIR/asked.log``), approves the call, and waits for the result;
- ``fork``: forks the run keeping every recorded step (``DBOS.fork_workflow``) and
  waits for the fork's result;
- ``recover-built-late``: launches *before* it builds SCENARIO's agent (the mistake),
  waits until ``agents.durable`` warns that the recovered run waits for it, builds it,
  and waits for the result (printed with the warning, ``"warned"``).

A result is printed as one JSON line ``{"answer": ..., "stopped_by": ...}`` (with the
scenario's own details, see `details`), a run that ended in error as ``{"error":
KIND, "message": ..., "status": ...}``.

RELEASE is the code this process runs, as a release between a crash and its recovery
changes it: ``v1`` (the tool ``refund``, the model ``counting``), ``renamed`` (the tool
is ``issue_refund`` now), ``model`` (the model is ``counting-2`` now), ``unapproved``
(``publish`` needs no approval now); a different KIND
in the recovering process is another agent class. Run as ``python -c "from
tests.agents.durable import worker; worker.cli()" ARGS...``, the worker's classes live
in the module ``tests.agents.durable.worker`` instead of ``__main__``.

Everything the tests count is written to files in DIR, from whichever process does it:
``model_calls.jsonl`` (one line per model call actually made, with the text of the last
message it was sent), ``tool_<name>.log`` (one line per time a tool began to run) and
``asked.log`` (the pid of the process, each time a run asks a person in it).
While ``DIR/block`` exists, the scenario's blocking point (a tool call, or the hook
before step 2) writes ``DIR/blocked`` and waits for ever: the test kills the process
there. A recovering worker is started after the test removed ``DIR/block``.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import json
import logging
import os
import re
import sqlite3
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from dbos import DBOS
from typing_extensions import TypedDict

from agents import ReActAgent, StepRequest, ToolCallingAgent
from agents.durable import (
    DurableAgent,
    DurableError,
    DurablePrompt,
    client,
    decide,
    launch,
    pending,
    retrieve,
    shutdown,
    wait_for_person,
)
from agents.models import (
    GenerateOptions,
    Message,
    ModelResponse,
    ScriptedModel,
    ScriptedReply,
    ToolCallRequest,
)
from agents.models._scripted import ScriptItem
from agents.prompt import Prompt
from toolchain import ElicitationRequest, ExecutionContext, JSONToolChain, Tool, tool
from toolchain.code import PythonToolChain
from toolchain.composite import CompositeTool
from toolchain.discovery import Approval, ApprovalRequest, ToolIndex, ToolInfo, ToolSearch
from toolchain.mcp import MCPServer
from toolchain.relay import ContextRelay
from toolchain.variables import ToolVariables

ARGS = sys.argv[1:] if __name__ == "__main__" or sys.argv[0] == "-c" else []
DIR = Path(ARGS[0]) if ARGS else Path(".")
SHOP = Path(__file__).parents[2] / "toolchain" / "mcp" / "elicit_server.py"
"""A real MCP server whose ``refund`` asks the client first (the ``elicit`` scenario)."""
KIND = ARGS[1] if ARGS else "react"
RELEASE = ARGS[5] if len(ARGS) > 5 else "v1"
DATABASE = os.environ.get("DURABLE_TEST_DATABASE") or f"sqlite:///{DIR / 'runs.sqlite'}"
CARD = "4111 1111 1111 1111"
KEY = "sk-proj-Zq7Plk3VvXw9RtYuAbCdEfGh"
HANG_GUARD_SECONDS = 120.0
"""A guard against a hang only: far beyond any real wait."""


def note(name: str, line: str) -> None:
    with (DIR / name).open("a") as file:
        file.write(line + "\n")


def count(name: str) -> int:
    path = DIR / name
    return len(path.read_text().splitlines()) if path.exists() else 0


async def block_here() -> None:
    """Wait for ever while ``DIR/block`` exists, after saying so: the test kills us here."""
    if (DIR / "block").exists():
        (DIR / "blocked").write_text("blocked")
        await asyncio.Event().wait()


class CountingModel:
    """A scripted model whose every call is written down (so a test counts them across
    processes) and whose reply is a function of the conversation, not of how many
    calls this process made (a recovering process makes only the calls not recorded)."""

    def __init__(
        self,
        script: Callable[[Sequence[Message]], ScriptItem],
        *,
        block_at: int = 0,
        name: str = "counting",
    ) -> None:
        self._script = script
        self._block_at = block_at
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    async def generate(
        self, messages: Sequence[Message], options: GenerateOptions | None = None
    ) -> ModelResponse:
        note("model_calls.jsonl", json.dumps({"last": messages[-1].text_content()}))
        if step_of(messages) == self._block_at:
            await block_here()
        return await ScriptedModel(self._script).generate(messages, options)

    async def stream(
        self, messages: Sequence[Message], options: GenerateOptions | None = None
    ) -> Any:
        response = await self.generate(messages, options)
        yield response


def step_of(messages: Sequence[Message]) -> int:
    """Which step a request is for: 1 + the replies the model gave so far."""
    return 1 + sum(message.role == "assistant" for message in messages)


def call(name: str, id: str, **args: object) -> ScriptItem:
    if KIND == "native":
        return ScriptedModel.call(name, args, id=id)
    return f"<action>{json.dumps({'tool': name, 'args': args})}</action>"


def calls(*made: tuple[str, str, dict[str, object]]) -> ScriptItem:
    """Several calls in one action (they run concurrently)."""
    if KIND == "native":
        requests = tuple(ToolCallRequest(id, name, json.dumps(args)) for name, id, args in made)
        return ScriptedReply("", requests)
    listed = [{"tool": name, "args": args} for name, _, args in made]
    return f"<action>{json.dumps(listed)}</action>"


def answer(text: str) -> str:
    return text if KIND == "native" else f"<answer>{text}</answer>"


# -- tools --------------------------------------------------------------------------------


@tool
def record(n: int) -> str:
    """Record a number."""
    note("tool_record.log", str(n))
    return f"recorded {n}"


@tool
async def charge(n: int) -> str:
    """Charge a card (not safe to repeat)."""
    note("tool_charge.log", str(n))
    await block_here()
    return f"charged {n}"


@tool(idempotent=True)
async def lookup(n: int) -> str:
    """Look a number up (safe to repeat)."""
    note("tool_lookup.log", str(n))
    await block_here()
    return f"found {n}"


@tool
def report(n: int) -> dict[str, object]:
    """A long report."""
    note("tool_report.log", str(n))
    return {"n": n, "lines": [f"line {i} of the report" for i in range(40)]}


def record_finished() -> bool:
    with contextlib.closing(sqlite3.connect(DIR / "runs.sqlite")) as database:
        found = database.execute(
            "SELECT count(*) FROM operation_outputs WHERE function_name = 'tool:record'"
        ).fetchone()
    return bool(found and found[0])


@tool(idempotent=True)
async def lookup_later(n: int) -> str:
    """Look a number up once ``record`` finished (safe to repeat)."""
    note("tool_lookup_later.log", str(n))
    if (DIR / "block").exists():
        # Block only once record's outcome is in the database: the kill then cuts off
        # this call alone, whatever order the two calls ran in.
        while not record_finished():  # noqa: ASYNC110 - a table another thread writes
            await asyncio.sleep(0.01)
    await block_here()
    return f"found {n}"


@tool(idempotent=True)
async def measure(report: dict[str, Any]) -> str:
    """Measure a report (safe to repeat)."""
    note("tool_measure.log", str(report.get("n")))
    await block_here()
    return f"measured {len(report.get('lines', []))} lines"


@tool
def shout(text: str) -> str:
    """Shout a text."""
    note("tool_shout.log", text)
    return text.upper()


@tool
def publish(page: str) -> str:
    """Publish a page."""
    note("tool_publish.log", page)
    return f"published {page}"


@tool(requires_approval=True)
def wipe(disk: str) -> str:
    """Erase a disk (waits for a person's approval: no approver, so the run pauses)."""
    note("tool_wipe.log", disk)
    return f"{disk} erased"


@tool(name="issue_refund" if RELEASE == "renamed" else "refund")
async def refund(order: str) -> str:
    """Refund an order (not safe to repeat)."""
    note("tool_refund.log", order)
    if len(ARGS) > 2 and ARGS[2] == "release_mid":
        await block_here()
    return f"refunded {order}"


@dataclass(frozen=True)
class Receipt:
    """A tool output class defined in the script that runs the tool (``__main__``)."""

    order: str
    amount: Decimal
    issued: datetime.date


@tool
def issue_receipt(order: str) -> Receipt:
    """Issue a receipt for an order."""
    note("tool_issue_receipt.log", order)
    return Receipt(order, Decimal("20.50"), datetime.date(2026, 1, 27))


@tool
def charge_card(card: str) -> str:
    """Charge a card."""
    note("tool_charge_card.log", card[-4:])
    return "charged"


@tool
def export(rows: int) -> str:
    """Export rows of a table."""
    note("tool_export.log", str(rows))
    return "|".join(f"row {i} of the private table" for i in range(rows))


async def pause_before_step_2(ctx: ExecutionContext, step: StepRequest) -> None:
    if step.index == 2:
        await block_here()


def make_agent(
    script: Callable[[Sequence[Message]], ScriptItem],
    *tools: Tool[Any, Any],
    model_name: str = "counting",
    program: bool = False,
    block_at: int = 0,
    **options: Any,
) -> ReActAgent[str] | ToolCallingAgent[str]:
    chain = PythonToolChain() if program else JSONToolChain()
    for made in tools:
        chain.register_tool(made)
    model = CountingModel(script, name=model_name, block_at=block_at)
    if KIND == "native":
        return ToolCallingAgent(model, tool_chain=chain, **options)
    return ReActAgent(model, tool_chain=chain, **options)


# -- scenarios ----------------------------------------------------------------------------


def between(messages: Sequence[Message]) -> ScriptItem:
    if step_of(messages) == 1:
        return call("record", "c1", n=1)
    return answer("recorded once")


def interrupted(tool_name: str) -> Callable[[Sequence[Message]], ScriptItem]:
    def script(messages: Sequence[Message]) -> ScriptItem:
        if step_of(messages) == 1:
            return call(tool_name, "c1", n=7)
        last = messages[-1].text_content()
        if "was interrupted" in last:
            return answer("not charged again: it was interrupted")
        return answer(f"done: {'charged 7' if 'charged 7' in last else 'found 7'}")

    return script


def relayed(messages: Sequence[Message]) -> ScriptItem:
    step = step_of(messages)
    if step == 1:
        return call("report", "c1", n=3)
    if step == 2:
        found = re.search(r"internal://[A-Za-z0-9_-]+", messages[-1].text_content())
        return call("measure", "c2", report=found.group(0) if found else "no reference")
    found = re.search(r"measured \d+ lines|Error: [^\n<]*", messages[-1].text_content())
    return answer(found.group(0) if found else "no result")


def concurrent(messages: Sequence[Message]) -> ScriptItem:
    if step_of(messages) == 1:
        return calls(("record", "c1", {"n": 1}), ("lookup_later", "c2", {"n": 2}))
    last = since_last_reply(messages)
    return answer("both" if "recorded 1" in last and "found 2" in last else "missing")


def program_then(code: str, seen: str, done: str) -> Callable[[Sequence[Message]], ScriptItem]:
    """A model that writes one program (``code``), then answers ``done`` if its output
    holds ``seen``, else what was missing."""

    def reply(messages: Sequence[Message]) -> ScriptItem:
        if step_of(messages) == 1:
            if KIND == "native":
                return ScriptedModel.call("run_python", {"code": code}, id="c1")
            return f"<action>{code}</action>"
        last = since_last_reply(messages)
        return answer(done if seen in last else f"missing: {last[-200:]}")

    return reply


programmed = program_then(
    "r = await record(1)\nprint(r, await lookup_later(2))", "recorded 1 found 2", "both"
)
"""One program making two calls in turn: record finishes, lookup_later is cut off."""

programmed_wipe = program_then(
    "r = await record(1)\nprint(r, await wipe('sdb'))", "recorded 1 sdb erased", "wiped"
)
"""One program: record, then wipe (which waits for a person)."""


def since_last_reply(messages: Sequence[Message]) -> str:
    """The text of the messages after the model's last reply (its tool results)."""
    tail: list[str] = []
    for message in reversed(messages):
        if message.role == "assistant":
            break
        tail.append(message.text_content())
    return "\n".join(tail)


def refunding(messages: Sequence[Message]) -> ScriptItem:
    """A model that calls the refund tool by the name it is offered now, as a real one
    would, and again when told the tool it called does not exist."""
    name = "issue_refund" if RELEASE == "renamed" else "refund"
    seen = since_last_reply(messages)
    if step_of(messages) == 1:
        return call(name, "c1", order="A17")
    if "refunded A17" in seen:
        return answer("refunded once" if step_of(messages) == 2 else "refunded twice")
    if "was interrupted" in seen:
        return answer("not refunded again: it was interrupted")
    return call(name, "c2", order="A17")


def receipted(messages: Sequence[Message]) -> ScriptItem:
    if step_of(messages) == 1:
        return call("issue_receipt", "c1", order="A17")
    found = re.search(r'"amount":"([0-9.]+)"', since_last_reply(messages))
    return answer(f"receipt for {found.group(1)} EUR" if found else "no receipt")


def declined(messages: Sequence[Message]) -> ScriptItem:
    if step_of(messages) == 1:
        return call("charge_card", "c1", card=CARD)
    return answer("declined" if "was declined" in since_last_reply(messages) else "charged")


def exported(messages: Sequence[Message]) -> ScriptItem:
    if step_of(messages) == 1:
        return call("export", "c1", rows=500)
    found = re.search(r"Error: [^\n<]*", since_last_reply(messages))
    return answer(found.group(0) if found else "exported")


def chat(messages: Sequence[Message]) -> ScriptItem:
    asked = [i for i, m in enumerate(messages) if "what is my name" in m.text_content()]
    if not asked:  # the first turn
        return call("record", "c1", n=4) if step_of(messages) == 1 else answer("hello")
    turn = messages[asked[-1] :]
    if step_of(turn) == 1:
        return call("shout", "c2", text="$record_1")
    earlier = " ".join(m.text_content() for m in messages[: asked[-1]])
    name = "Ada" if "my name is Ada" in earlier else "unknown"
    shouted = "shouted" if "RECORDED 4" in since_last_reply(messages) else "lost"
    return answer(f"you are {name}; {shouted}")


def approved(messages: Sequence[Message]) -> ScriptItem:
    if step_of(messages) == 1:
        return call("publish", "c1", page="p1")
    last = messages[-1].text_content()
    return answer("published" if "published p1" in last else "not published")


def wiping(messages: Sequence[Message]) -> ScriptItem:
    """Calls ``wipe`` once; answers with what its result said."""
    if step_of(messages) == 1:
        return call("wipe", "c1", disk="sdb")
    seen = since_last_reply(messages)
    return answer("wiped" if "sdb erased" in seen else f"not wiped: {seen[-200:]}")


def wiping_in_ops(messages: Sequence[Message]) -> ScriptItem:
    """Calls the composite ``ops`` once: ``record``, then ``wipe`` (which waits for a
    person); answers with what its result said."""
    if step_of(messages) == 1:
        calls = [{"name": "record", "args": {"n": 7}}, {"name": "wipe", "args": {"disk": "sdb"}}]
        return call("ops", "c1", calls=calls)
    seen = since_last_reply(messages)
    return answer("wiped" if "sdb erased" in seen else f"not wiped: {seen[-200:]}")


def refunding_by_mcp(messages: Sequence[Message]) -> ScriptItem:
    """Calls the MCP server's ``refund`` once; answers with what its result said."""
    if step_of(messages) == 1:
        return call("refund", "c1", order="A7")
    seen = since_last_reply(messages)
    return answer("refunded" if "refunded A7" in seen else f"not refunded: {seen[-200:]}")


def approving() -> ToolSearch:
    """``publish`` waits for a person's approval (not in the release ``unapproved``)."""
    asks = RELEASE != "unapproved"
    info = ToolInfo("publish", risk="moderate", requires_confirmation=asks)
    return ToolSearch(ToolIndex([publish], [info]), defer=False, approve=wait_for_person)


def searched(messages: Sequence[Message]) -> ScriptItem:
    """A model that finds ``publish`` with ``tool_search`` first (it is deferred), as the
    README's approval example does, then calls it."""
    step = step_of(messages)
    if step == 1:
        return call("tool_search", "c1", query="publish a page")
    seen = since_last_reply(messages)
    if step == 2:
        return call("publish", "c2", page="p1") if '"publish"' in seen else answer("no tool")
    return answer("published" if "published p1" in seen else f"not published: {seen}")


async def asking(ctx: ExecutionContext, request: ApprovalRequest) -> Approval | None:
    """``wait_for_person``, noting in ``asked.log`` which process asks (a run taken over
    asks again in the process that took it)."""
    note("asked.log", str(os.getpid()))
    return await wait_for_person(ctx, request)


def searching() -> ToolSearch:
    """``publish`` is deferred (found by a search) and waits for a person's approval."""
    info = ToolInfo("publish", phrases=("publish a page",), requires_confirmation=True)
    return ToolSearch(ToolIndex([publish], [info]), defer=True, approve=asking)


async def asked_here(workflow_id: str) -> bool:
    """Wait until the run asks a person in this process; False if it ended first."""
    mine = str(os.getpid())
    while True:
        path = DIR / "asked.log"
        if path.exists() and mine in path.read_text().split():
            return True
        if await (await retrieve(workflow_id)).status() not in ("PENDING", "ENQUEUED"):
            return False
        await asyncio.sleep(0.02)


class SubTask(TypedDict):
    task: str


def build_sub_agents(prompt: Prompt) -> None:
    def sub_script(messages: Sequence[Message]) -> ScriptItem:
        if step_of(messages) == 1:
            return ScriptedModel.call("record", {"n": 5}, id="s1")
        return "sub recorded 5"

    def build(input: SubTask, sub: Prompt) -> None:
        sub.def_tool(record)
        sub.user(input["task"])

    prompt.def_agent(
        "recorder", "Records numbers.", SubTask, build, model=CountingModel(sub_script, block_at=2)
    )


def parent_script(messages: Sequence[Message]) -> ScriptItem:
    step = step_of(messages)
    if step == 1:
        return ScriptedModel.call("recorder", {"task": "record 5"}, id="p1")
    return "parent saw: " + messages[-1].text_content()


def build_held_sub_agent(prompt: Prompt) -> None:
    """A sub-agent ``wiper`` whose ``wipe`` waits for a person: the run pauses through it."""

    def wiper_script(messages: Sequence[Message]) -> ScriptItem:
        if step_of(messages) == 1:
            return ScriptedModel.call("wipe", {"disk": "sdb"}, id="w1")
        return "wiper saw: " + since_last_reply(messages)

    def build(input: SubTask, sub: Prompt) -> None:
        sub.def_tool(wipe)
        sub.user(input["task"])

    wiper = CountingModel(wiper_script, block_at=2, name="wiper")
    prompt.def_agent("wiper", "Wipes disks.", SubTask, build, model=wiper)


def held_parent_script(messages: Sequence[Message]) -> ScriptItem:
    if step_of(messages) == 1:
        return ScriptedModel.call("wiper", {"task": "wipe sdb"}, id="p1")
    return "parent saw: " + since_last_reply(messages)


SCENARIOS: dict[str, Callable[[], DurableAgent[Any] | DurablePrompt]] = {
    "between": lambda: DurableAgent(
        make_agent(between, record, step_hooks=[pause_before_step_2]), name="between"
    ),
    "mid_tool": lambda: DurableAgent(make_agent(interrupted("charge"), charge), name="mid_tool"),
    "mid_tool_idempotent": lambda: DurableAgent(
        make_agent(interrupted("lookup"), lookup), name="mid_tool_idempotent"
    ),
    "release": lambda: DurableAgent(
        make_agent(
            refunding,
            refund,
            model_name="counting-2" if RELEASE == "model" else "counting",
            step_hooks=[pause_before_step_2],
        ),
        name="release",
    ),
    "release_mid": lambda: DurableAgent(make_agent(refunding, refund), name="release_mid"),
    "receipt": lambda: DurableAgent(
        make_agent(receipted, issue_receipt, step_hooks=[pause_before_step_2]), name="receipt"
    ),
    "secrets": lambda: DurableAgent(make_agent(declined, charge_card), name="secrets"),
    "big": lambda: DurableAgent(make_agent(exported, export), name="big", max_output_bytes=2000),
    "relay": lambda: DurableAgent(
        make_agent(
            relayed,
            report,
            measure,
            extensions=[ContextRelay(threshold=200), ToolVariables()],
        ),
        name="relay",
    ),
    "concurrent": lambda: DurableAgent(
        make_agent(concurrent, record, lookup_later), name="concurrent"
    ),
    "held_program": lambda: DurableAgent(
        make_agent(programmed_wipe, record, wipe, program=True, block_at=2),
        name="held_program",
    ),
    "program": lambda: DurableAgent(
        make_agent(programmed, record, lookup_later, program=True), name="program"
    ),
    "chat": lambda: DurableAgent(
        make_agent(chat, record, shout, extensions=[ToolVariables()]), name="chat"
    ),
    "approval": lambda: DurableAgent(
        make_agent(approved, extensions=[approving()]), name="approval"
    ),
    "search_approval": lambda: DurableAgent(
        make_agent(searched, extensions=[searching()]), name="search_approval"
    ),
    "approval_release": lambda: DurableAgent(
        make_agent(approved, extensions=[approving()], step_hooks=[pause_before_step_2]),
        name="approval_release",
    ),
    # The model call after the approved wipe blocks (while DIR/block exists).
    "held": lambda: DurableAgent(make_agent(wiping, wipe, block_at=2), name="held"),
    "held_in_composite": lambda: DurableAgent(
        make_agent(
            wiping_in_ops, CompositeTool("ops", "Disk operations.", [record, wipe]), block_at=2
        ),
        name="held_in_composite",
    ),
    "sub_agent": lambda: DurablePrompt(
        build_sub_agents,
        model=CountingModel(parent_script),
        name="sub_agent",
    ),
    "held_sub_agent": lambda: DurablePrompt(
        build_held_sub_agent,
        model=CountingModel(held_parent_script),
        name="held_sub_agent",
    ),
}


TASKS = {"secrets": "Pay order A17 with the card I gave you."}
"""The task of a scenario, where it is not ``go``."""

HISTORY = {
    "secrets": [
        Message.text("user", f"My card is {CARD}; the shop's API key is {KEY}."),
        Message.text("assistant", "Noted."),
    ]
}
"""The conversation a scenario's run continues, where it continues one."""

STATES: dict[str, dict[str, object]] = {"secrets": {"session": threading.Lock()}}
"""The extension state a scenario's run is given: a lock, which no pickle takes."""


def printed(result: Any) -> None:
    shown = {"answer": result.answer, "stopped_by": result.stopped_by, **details(result)}
    print(json.dumps(shown), flush=True)


def details(result: Any) -> dict[str, object]:
    """What a scenario shows besides the answer: the first tool output's class and value
    (``receipt``), the first call's error (``big``)."""
    if ARGS[2] not in ("receipt", "big") or not result.steps[0].tool_results:
        return {}
    raw = result.steps[0].tool_results[0].raw
    if raw.results[0] is not None and not isinstance(raw.results[0].output, str):
        output = raw.results[0].output
        kind = type(output)
        return {"output_type": f"{kind.__module__}.{kind.__qualname__}", "output": repr(output)}
    if raw.errors[0] is not None:
        return {"error_kind": raw.errors[0].kind, "error_message": raw.errors[0].message}
    return {}


async def started(durable: Any, scenario: str, workflow_id: str) -> None:
    """Run the scenario's run here; print its result, or the error it was refused with."""
    try:
        result = await durable.run(
            TASKS.get(scenario, "go"),
            history=HISTORY.get(scenario, ()),
            extension_state=STATES.get(scenario),
            workflow_id=workflow_id,
        )
    except DurableError as error:
        print(json.dumps({"error": type(error).__name__, "message": str(error)}), flush=True)
    else:
        printed(result)


async def outcome(workflow_id: str) -> None:
    """Print the run's result, or the error its workflow ended with."""
    run = await retrieve(workflow_id)
    try:
        printed(await run.result())
    except DurableError as error:
        failed = {"error": type(error).__name__, "message": str(error)}
        print(json.dumps({**failed, "status": await run.status()}), flush=True)


async def decide_as_client(workflow_id: str) -> None:
    """Decide without launching DBOS (no workflow runs here): a ``DBOSClient``."""
    web = client(DATABASE)
    try:
        waiting = await pending(workflow_id, wait=60.0, client=web)
        await decide(workflow_id, waiting[0], Approval.granted("looks right"), client=web)
        print(json.dumps({"decided": [request.tool for request in waiting]}), flush=True)
    finally:
        web.destroy()


class Warned(logging.Handler):
    """Keeps the warning ``agents.durable`` logs for a run whose agent is not built, and
    says when it came."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.came = threading.Event()
        self.message = ""

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if "needs the durable agent or prompt" in message and not self.came.is_set():
            self.message = message
            self.came.set()


async def recover_built_late(scenario: str, workflow_id: str) -> None:
    warned = Warned()
    logging.getLogger("agents.durable").addHandler(warned)
    launch(DATABASE)
    try:
        if not await asyncio.to_thread(warned.came.wait, HANG_GUARD_SECONDS):
            raise SystemExit("no warning about the agent the recovered run needs")
        SCENARIOS[scenario]()
        result = await (await retrieve(workflow_id)).result()
        print(
            json.dumps(
                {"answer": result.answer, "stopped_by": result.stopped_by, "warned": warned.message}
            ),
            flush=True,
        )
    finally:
        shutdown()


async def main(scenario: str, command: str, workflow_id: str) -> None:
    if command == "decide-as-client":
        await decide_as_client(workflow_id)
        return
    if command == "recover-built-late":
        await recover_built_late(scenario, workflow_id)
        return
    async with contextlib.AsyncExitStack() as stack:
        durable = await built(scenario, stack)
        await commands(durable, scenario, command, workflow_id)


async def built(
    scenario: str, stack: contextlib.AsyncExitStack
) -> DurableAgent[Any] | DurablePrompt:
    """The scenario's durable agent or prompt; ``elicit``'s agent speaks to a real MCP
    server (started here, over stdio, for as long as this process runs the scenario)
    whose refunds are lines of ``tool_refund.log``."""
    if scenario != "elicit":
        return SCENARIOS[scenario]()
    shop = MCPServer.stdio(
        sys.executable,
        [str(SHOP)],
        mode="auto",
        env={**os.environ, "SHOP_LOG": str(DIR / "tool_refund.log")},
    )
    await stack.enter_async_context(shop)
    chain = shop.attach(JSONToolChain())
    model = CountingModel(refunding_by_mcp, block_at=2)
    agent = (
        ToolCallingAgent(model, tool_chain=chain)
        if KIND == "native"
        else ReActAgent(model, tool_chain=chain)
    )
    return DurableAgent(agent, name="elicit")


async def commands(
    durable: DurableAgent[Any] | DurablePrompt, scenario: str, command: str, workflow_id: str
) -> None:
    launch(DATABASE)
    try:
        if command == "start":
            await started(durable, scenario, workflow_id)
        elif command == "chat":  # two turns: the second continues the first
            first = await durable.run("my name is Ada", workflow_id=workflow_id)
            second = await durable.run(
                "what is my name?",
                history=first.messages,
                extension_state=first.extension_state,
                workflow_id=workflow_id + "-2",
            )
            printed(second)
        elif command == "recover":
            await outcome(workflow_id)
        elif command == "fork":  # keeping every recorded step
            steps = await DBOS.list_workflow_steps_async(workflow_id, load_output=False)
            last = max(step["function_id"] for step in steps)
            forked = await DBOS.fork_workflow_async(workflow_id, last + 1)
            await outcome(forked.get_workflow_id())
        elif command == "start-and-leave":
            await durable.start("go", workflow_id=workflow_id)
            waiting = await pending(workflow_id, wait=60.0)
            print(json.dumps({"pending": [request.tool for request in waiting]}), flush=True)
        elif command == "start-and-wait":
            await durable.start("go", workflow_id=workflow_id)
            waiting = await pending(workflow_id, wait=60.0)
            print(json.dumps({"pending": [request.tool for request in waiting]}), flush=True)
            await block_here()
        elif command == "decide-when-asked":
            if await asked_here(workflow_id):
                waiting = await pending(workflow_id)
                await decide(workflow_id, waiting[0], Approval.granted("looks right"))
            await outcome(workflow_id)
        elif command == "start-paused":  # then exit: the run waits in the database
            paused = await durable.run("go", workflow_id=workflow_id)
            shown = {"stopped_by": paused.stopped_by, "pending": [r.tool for r in paused.pending]}
            print(json.dumps(shown), flush=True)
        elif command == "start-paused-and-stay":  # and stay alive, running the run
            paused = await durable.run("go", workflow_id=workflow_id)
            shown = {"stopped_by": paused.stopped_by, "pending": [r.tool for r in paused.pending]}
            print(json.dumps(shown), flush=True)
            (DIR / "paused").write_text(str(os.getpid()))
            await asyncio.Event().wait()  # the test kills this process
        elif command == "resume-granted":  # the paused result, read back here, approved
            paused = await (await retrieve(workflow_id)).result()
            decisions = {paused.pending[0].call_id: Approval.granted("looks right")}
            printed(await durable.resume(paused, decisions))
        elif command == "resume-answered":  # the server's question, answered yes
            paused = await (await retrieve(workflow_id)).result()
            [question] = paused.pending
            assert isinstance(question, ElicitationRequest), question
            printed(await durable.resume(paused, {question.call_id: question.accept({"ok": True})}))
        elif command == "decide":
            waiting = await pending(workflow_id, wait=60.0)
            await decide(workflow_id, waiting[0], Approval.granted("looks right"))
            printed(await (await retrieve(workflow_id)).result())
    finally:
        shutdown()


def cli() -> None:
    asyncio.run(main(ARGS[2], ARGS[3], ARGS[4]))


if __name__ == "__main__":
    cli()
