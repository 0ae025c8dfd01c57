"""Code mode (extra ``[code]``): the model writes one typed Python program that calls the
tools, run in the Monty sandbox (``pydantic-monty``).

>>> from toolchain.code import PythonToolChain
>>> from toolchain import tool
>>> @tool
... def add(a: int, b: int = 1) -> int:
...     '''Add two integers.'''
...     return a + b
>>> print(PythonToolChain().register_tool(add).available_tools_prompt())
```python
async def add(a: int, b: int = 1) -> int:
    \"\"\"Add two integers.\"\"\"
```

What a program may do. It runs in a Monty worker subprocess (a Rust interpreter of a
subset of Python), never in this process:

- call the chain's tools, as ``async`` functions it awaits (``asyncio.gather`` runs
  independent calls together); each call is a real call of the chain: validated,
  hooked, guarded, timed out, observed, in ``raw``;
- use Monty's own small standard library (``asyncio``, ``json``, ``re``, ``math``,
  ``datetime``, ...), print, and end with an expression whose value is shown;
- nothing else: no files (``open`` and ``pathlib`` are refused), no network (no
  ``socket``), no environment (``os.environ``, ``os.getenv`` refused), no other imports
  and no ``__import__``; it is type-checked against the tools' stubs first.

Each program is bounded (``PythonToolChain`` options): its own running time, its heap,
its tool calls, its printed output and its recursion. A worker that dies or hangs ends
that program with an error the model reads; the run goes on and the pool replaces it.
The run's cancellation ends a running program at once (its worker with it).

A call that needs approval (``Tool.requires_approval``) and that nobody decides in the
run pauses the program where it waits, and the run with it: the call is in
``result.pending`` with ``via == ("run_python",)``; resuming (``agent.resume``,
``chain.resume``) runs it as reviewed and the program goes on from there (Monty's
snapshot), not from its start. In a durable run (``agents.durable``) each call of a
program is a step: a recovered run runs the program again, and its finished calls
replay from the record instead of running again. Traces (``agents.otel``) show a
program as one ``execute_code`` span with its calls' ``execute_tool`` spans under it.
"""

# What lives here:
#   _stubs    typed stubs from tools (tool_stubs): the prompt listing and the checker's input
#   _sandbox  one program in Monty: the process's worker pool, limits, the drive from call
#             to call (run_program), the type check alone (type_check)
#   _chain    PythonToolChain and its call syntax: each program's calls through the chain
# Imports: the toolchain core and its chain stages; pydantic_monty (the [code] extra).

from toolchain._extras import requires_extra

with requires_extra("code", "toolchain.code", "pydantic_monty"):
    # Imported first so that a missing extra fails here, named, not deep in a module.
    import pydantic_monty  # noqa: F401  # pyright: ignore[reportUnusedImport]

from toolchain.code._chain import PROGRAM_TOOL, ProgramOutput, PythonToolChain

__all__ = ["PROGRAM_TOOL", "ProgramOutput", "PythonToolChain"]
