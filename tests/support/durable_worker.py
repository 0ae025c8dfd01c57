"""One worker process of the many-worker tests; `tests.support.workers` starts and kills it.

``python -m tests.support.durable_worker DATABASE_URL EXECUTOR_ID DIRECTORY LIMIT [OPTION...]``

It builds two durable agents (``workers-react`` on `ReActAgent`, ``workers-native`` on
`ToolCallingAgent`), launches DBOS on the database as executor ``EXECUTOR_ID``, registers
the queue ``runs`` (at most ``LIMIT`` runs at once over all workers, 0 for no such limit;
one per worker) and
then serves the queue. Options: ``own-id`` launches without an executor id (``launch``
makes one; ``EXECUTOR_ID`` is then only the worker's name in the journal),
``lease=SECONDS`` passes ``lease_seconds``. Lines on stdin tell it more:

- ``start KIND RUN``: enqueue run ``RUN`` (its workflow id) of the ``KIND`` agent;
- ``direct KIND RUN``: start run ``RUN`` here, on no queue (it runs in this process);
- ``recover EXECUTOR...``: take over the runs those (dead) executors left pending
  (``refused EXECUTOR`` in the journal when one of them is alive);
- end of input: shut DBOS down and exit.

Every run does the same: model call 1 asks for ``gate(run=RUN)`` (idempotent; ``once``,
not idempotent, for runs named ``once…``); the tool runs until the test releases
``RUN.tool``; model call 2 waits for ``RUN.answer`` and answers ``RUN passed the gate``
(``RUN was told its call was interrupted`` when that is what the call came to).

The worker writes what it does, as it starts doing it, to the journal
``DIRECTORY/journal`` (one line each, appended in one write, so lines from all workers
stay whole and in the order they happened): ``ready``, ``model RUN N``,
``tool RUN``, ``tool-done RUN``, ``answered RUN`` (the second model call, past its gate),
``started RUN``, ``recovered RUN...``, each line ending with the executor id. Those lines
are how the tests count calls across processes and across a ``SIGKILL``. Besides:
``executor ID`` (the DBOS executor id it runs as), ``looked`` (its first look for runs
of processes gone is done) and ``took-over RUN...`` (it took those runs over by itself),
from its log.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import sys
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

from dbos import DBOS, DBOSConfig

from agents import ReActAgent, ToolCallingAgent
from agents.durable import DurableAgent, ExecutorInUseError, launch, recover, shutdown
from agents.models import (
    GenerateOptions,
    Message,
    ModelResponse,
    ScriptedModel,
    TextDelta,
)
from tests.support.agent_kinds import Kind, Output, answer, call
from toolchain import JSONToolChain, tool

QUEUE = "runs"
APPLICATION = "gent-workers"
TASK = "Take {run} through the gate."
_RUN = re.compile(r"Take (\S+) through the gate\.")


class Journal:
    """The append-only file every worker writes its events to."""

    def __init__(self, path: Path, executor: str) -> None:
        self.path = path
        self.executor = executor

    def write(self, *words: str) -> None:
        line = " ".join((*words, self.executor)) + "\n"
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line.encode())  # one write of one line: never torn nor mixed
        finally:
            os.close(fd)


class Gates:
    """Release files: a run waits at a gate until the test creates ``RUN.POINT``."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def is_open(self, run: str, point: str) -> bool:
        return (self.directory / f"{run}.{point}").exists()

    def wait(self, run: str, point: str) -> None:
        while not self.is_open(run, point):
            time.sleep(0.005)

    async def wait_async(self, run: str, point: str) -> None:
        # The gate is a file the test process creates: there is no event to await here.
        while not self.is_open(run, point):  # noqa: ASYNC110
            await asyncio.sleep(0.005)


def tool_for(run: str) -> str:
    """The tool a run calls: ``once`` (not idempotent) for runs named ``once…``, else
    ``gate`` (idempotent); both wait at the run's ``tool`` gate."""
    return "once" if run.startswith("once") else "gate"


def run_of(messages: Sequence[Message]) -> str:
    for message in messages:
        found = _RUN.search(message.text_content())
        if found:
            return found.group(1)
    raise LookupError("no run named in the conversation")


class GatedModel:
    """A scripted model that journals each call and holds the second at the run's gate."""

    def __init__(self, kind: Kind, journal: Journal, gates: Gates) -> None:
        self.kind = kind
        self.journal = journal
        self.gates = gates
        self.scripted = ScriptedModel(self.script, name=f"gated-{kind}")

    @property
    def name(self) -> str:
        return self.scripted.name

    def script(self, messages: Sequence[Message]) -> Output:
        run = run_of(messages)
        if not any(message.role == "assistant" for message in messages):
            return call(self.kind, tool_for(run), run=run)
        seen = messages[-1].text_content()  # what the tool call came to
        if f"{run} passed" in seen:
            return answer(self.kind, f"{run} passed the gate")
        if f"{tool_for(run)} was interrupted" in seen:  # agents.durable's words
            return answer(self.kind, f"{run} was told its call was interrupted")
        return answer(self.kind, f"{run} was stopped")

    async def generate(
        self, messages: Sequence[Message], options: GenerateOptions | None = None
    ) -> ModelResponse:
        run = run_of(messages)
        number = 1 + sum(message.role == "assistant" for message in messages)
        self.journal.write("model", run, str(number))
        if number == 1:
            return await self.scripted.generate(messages, options)
        await self.gates.wait_async(run, "answer")
        self.journal.write("answered", run)
        return await self.scripted.generate(messages, options)

    async def stream(
        self, messages: Sequence[Message], options: GenerateOptions | None = None
    ) -> AsyncIterator[TextDelta | ModelResponse]:
        yield await self.generate(messages, options)


def build_agents(journal: Journal, gates: Gates) -> dict[str, DurableAgent[str]]:
    """The two durable agents, under the names every worker gives them."""

    def through(run: str) -> str:
        journal.write("tool", run)
        gates.wait(run, "tool")
        journal.write("tool-done", run)
        return f"{run} passed"

    @tool(idempotent=True)
    def gate(run: str) -> str:
        """Take a run through the gate; safe to run again."""
        return through(run)

    @tool
    def once(run: str) -> str:
        """Take a run through the gate; not to be run twice."""
        return through(run)

    react = ReActAgent(GatedModel("react", journal, gates), tools=[gate, once])
    native_chain = JSONToolChain().register_tool(gate).register_tool(once)
    native = ToolCallingAgent(GatedModel("native", journal, gates), tool_chain=native_chain)
    return {
        "react": DurableAgent(react, name="workers-react"),
        "native": DurableAgent(native, name="workers-native"),
    }


class Watch(logging.Handler):
    """Journals what ``agents.durable`` logs about taking runs over."""

    def __init__(self, journal: Journal) -> None:
        super().__init__(logging.INFO)
        self.journal = journal

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if message.startswith("launched as executor"):
            self.journal.write("looked")
        elif message.startswith("took over"):  # "... which is gone: RUN, RUN"
            self.journal.write("took-over", *message.rpartition(": ")[2].split(", "))


async def serve(
    database_url: str, executor: str, directory: Path, limit: int, options: Sequence[str]
) -> None:
    journal = Journal(directory / "journal", executor)
    durable = build_agents(journal, Gates(directory / "gates"))
    logger = logging.getLogger("agents.durable")
    logger.setLevel(logging.INFO)
    logger.addHandler(Watch(journal))
    config: DBOSConfig = {} if "own-id" in options else {"executor_id": executor}
    leases = [float(option.removeprefix("lease=")) for option in options if "lease=" in option]
    if leases:
        launch(database_url, name=APPLICATION, config=config, lease_seconds=leases[0])
    else:
        launch(database_url, name=APPLICATION, config=config)
    journal.write("executor", DBOS.executor_id)
    queue = await DBOS.register_queue_async(
        QUEUE,
        global_concurrency=limit or None,
        worker_concurrency=1,
        polling_interval_sec=0.05,
    )
    journal.write("ready")
    loop = asyncio.get_running_loop()
    try:
        while line := await loop.run_in_executor(None, sys.stdin.readline):
            command, *words = line.split()
            if command == "start":
                kind, run = words
                await durable[kind].start(TASK.format(run=run), workflow_id=run, queue=queue)
                journal.write("started", run)
            elif command == "direct":
                kind, run = words
                await durable[kind].start(TASK.format(run=run), workflow_id=run)
                journal.write("started", run)
            elif command == "recover":
                try:
                    journal.write("recovered", *sorted(await recover(words)))
                except ExecutorInUseError as error:
                    journal.write("refused", error.executor_id)
    finally:
        shutdown()


def main(argv: Sequence[str]) -> None:
    database_url, executor, directory, limit, *options = argv
    asyncio.run(serve(database_url, executor, Path(directory), int(limit), options))


if __name__ == "__main__":
    main(sys.argv[1:])
