"""A durable run survives a crash: its worker is killed, and another process finishes it.

    python examples/durable.py        (needs the [durable] extra: pip install 'gent-py[durable]')

The script plays both parts, offline (a scripted model). It starts a worker process
(this file again, with ``--worker``) that runs a refund agent durably on a SQLite
database in a temporary directory: each model call and each tool call is a DBOS step,
recorded as it finishes. Once the refund is issued, the worker is killed with SIGKILL
before its next model call. Then this process launches DBOS on the same database, which
recovers the run: the two finished tool calls and two model calls are replayed from the
record (the refund is not issued twice), and only the last model call is made.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from agents import ReActAgent, StepRequest
from agents.models import Message, ScriptedModel
from toolchain import ExecutionContext, tool

try:
    from agents.durable import DurableAgent, launch, retrieve, shutdown
except ModuleNotFoundError as missing:  # without the [durable] extra: the error says so
    sys.exit(str(missing))

HERE = Path(os.environ.get("DURABLE_EXAMPLE_DIR", "."))
RUN = "refund-42"


def counted(name: str) -> int:
    path = HERE / f"{name}.count"
    return len(path.read_text()) if path.exists() else 0


def count(name: str) -> None:
    with (HERE / f"{name}.count").open("a") as file:
        file.write("|")


@tool(idempotent=True)  # a read: safe to run again if a crash cuts it off
def lookup_order(order_id: str) -> dict[str, object]:
    """Look an order up."""
    count("lookup_order")
    print(f'  -> lookup_order({{"order_id":"{order_id}"}})', flush=True)
    return {"order_id": order_id, "paid_eur": 20, "status": "delivered damaged"}


@tool  # not idempotent: running it twice would refund twice
def issue_refund(order_id: str, amount_eur: int) -> str:
    """Refund an order."""
    count("issue_refund")
    print(f'  -> issue_refund({{"order_id":"{order_id}","amount_eur":{amount_eur}}})', flush=True)
    return f"refund of {amount_eur} EUR for {order_id} issued"


def script(messages: Sequence[Message]) -> str:
    """The model's replies, by step (what a real model would write)."""
    count("model")
    step = sum(message.role == "assistant" for message in messages) + 1
    if step == 1:
        return '<action>{"tool": "lookup_order", "args": {"order_id": "A17"}}</action>'
    if step == 2:
        args = '{"order_id": "A17", "amount_eur": 20}'
        return f'<action>{{"tool": "issue_refund", "args": {args}}}</action>'
    return "<answer>Refunded 20 EUR for order A17.</answer>"


async def crash_point(ctx: ExecutionContext, step: StepRequest) -> None:
    """In the worker, before step 3: say so and wait to be killed."""
    if step.index == 3 and "--worker" in sys.argv:
        (HERE / "ready-to-die").write_text("")
        await asyncio.Event().wait()


# Built when the module loads, under a fixed name: a recovering process finds it so.
agent = ReActAgent(
    ScriptedModel(script), tools=[lookup_order, issue_refund], step_hooks=[crash_point]
)
durable = DurableAgent(agent, name="refunds")


async def work() -> None:
    launch(f"sqlite:///{HERE / 'runs.sqlite'}")
    await durable.start("Order A17 arrived damaged: refund it.", workflow_id=RUN)
    await asyncio.Event().wait()  # the run goes on until this process is killed


async def recover() -> None:
    launch(f"sqlite:///{HERE / 'runs.sqlite'}")  # recovers the pending run
    print(f"recovering run {RUN} in this process (pid {os.getpid()})")
    result = await (await retrieve(RUN)).result()
    print(f"answer: {result.answer}")
    shutdown()


def main() -> None:
    with tempfile.TemporaryDirectory() as directory:
        os.environ["DURABLE_EXAMPLE_DIR"] = directory
        global HERE
        HERE = Path(directory)
        worker = subprocess.Popen([sys.executable, __file__, "--worker"])
        print(f"worker (pid {worker.pid}): run {RUN} started", flush=True)
        while not (HERE / "ready-to-die").exists():
            if worker.poll() is not None:
                raise SystemExit("the worker stopped before the crash point")
            time.sleep(0.05)
        os.kill(worker.pid, signal.SIGKILL)
        worker.wait()
        print("worker killed with SIGKILL before step 3 (two tool calls done)")
        asyncio.run(recover())
        print(
            f"issue_refund ran {counted('issue_refund')} time(s), lookup_order "
            f"{counted('lookup_order')}; the model was called {counted('model')} times in all"
        )


if __name__ == "__main__":
    if "--worker" in sys.argv:
        asyncio.run(work())
    else:
        main()
