# toolchain.composite: CompositeTool, several sub-tools behind one tool (the tool and its
# sequence of sub-calls, running one sub-call, the schema it shows). It imports the
# toolchain core (`toolchain`'s public names, a few private core helpers); never another
# extension, never agents. `toolchain` loads it on first use of `CompositeTool`.
"""``CompositeTool``: several sub-tools behind one tool, called many times in one call.

The model calls the composite with a list of sub-calls, in lmthing's shape::

    {"calls": [{"name": "write", "args": {"path": "a.txt", "content": "Hi"}},
               {"name": "read", "args": {"path": "a.txt"}}]}

and reads one entry per sub-call, in call order::

    {"results": [{"name": "write", "result": {"ok": true}},
                 {"name": "read", "error": "no file 'a.txt'"}]}

An entry holds either ``result`` (the sub-tool's output) or ``error`` (a message the
model can act on), never both. lmthing nests the error inside ``result``
(``{"result": {"error": ...}}``); here it stands beside ``name`` instead, so a failure
can never be mistaken for a sub-tool whose real output has an ``error`` field (an API
client passing on an error body, say), by the model or by a program reading ``raw``.

How sub-calls run:

- one after another, in the order given, each after the previous one ended: a write,
  an append and a read in one call see each other's effects. A failed sub-call
  (unknown sub-tool, invalid arguments, a raise, its own ``timeout`` passed, output
  that cannot be shown) is reported in its place and the later ones still run.
- each sub-call's arguments are validated by its sub-tool's own input type, as the
  chain validates a top-level call's.
- sub-tools get the run's own context, as when the model calls them directly: the
  same state, cancellation, ``pause`` and ``run_id`` (which scopes relay references).
  A child run (``ctx.child``) would hide a sub-tool's ``ctx.pause`` (an approval) or
  ``ctx.cancel`` from the run. Sub-calls count as the run's tool calls, per tool as
  ``<composite>.<sub-tool>``, so the run's ``max_tool_calls`` bounds them too.
- each sub-call emits ``ToolCallStarted`` / ``ToolCallFinished`` on ``ctx.events``, named
  ``<composite>.<sub-tool>`` (``file.write``), with ``index`` its position in
  ``calls``. A tool is not told its own call's id, so each composite call takes a
  fresh id from the run (``ctx.new_call_id()``) and its sub-calls are
  ``<that id>/<index>`` (``call_4/0``, ``call_4/1``): unique in the run, grouped by
  composite call.
- the run's tool hooks see the composite call as a whole (a before-hook sees the whole
  ``calls`` list; variables and relay act on the composite's result), not each
  sub-call. Guards (``ToolHook.guard_tool_call``) are the exception: they check each
  sub-call under its sub-tool's own name, so a tool that needs approval, or that tool
  discovery has not activated yet, is held or refused inside a composite exactly as
  when the model calls it directly.
- once a sub-call pauses the run (a call held for approval), the later sub-calls are
  not run: each reports that the run paused, and the model makes them again after
  the decision, in their order.
- once the run is cancelled, later sub-calls are not started, and the one running
  when the chain stops the composite's call is stopped; each reports that it was
  cancelled, beside the results of those that ran before.
- the composite's own time limit (the chain's ``timeout``, or ``timeout=`` here)
  bounds the whole call; a sub-tool's ``timeout`` bounds its sub-call.

Media of sub-results are attached to the composite's result in call order (an entry
says how many it added as ``attachments``); their instructions are kept too, each
line led by its sub-tool's name.

>>> from formats import XMLFormat
>>> from toolchain import ExecutionContext, JSONToolChain, ToolError, tool
>>> files: dict[str, str] = {}
>>> @tool
... def write(path: str, content: str) -> dict[str, bool]:
...     '''Write content to a file.'''
...     files[path] = content
...     return {"ok": True}
>>> @tool
... def read(path: str) -> str:
...     '''Read a file.'''
...     if path not in files:
...         raise ToolError(f"no file {path!r}")
...     return files[path]
>>> chain = JSONToolChain().register_tool(CompositeTool("file", "File operations.", [write, read]))
>>> action = '''{"tool": "file", "args": {"calls": [
...     {"name": "write", "args": {"path": "a.txt", "content": "Hi"}},
...     {"name": "read", "args": {"path": "b.txt"}},
...     {"name": "read", "args": {"path": "a.txt"}}]}}'''
>>> result = chain.execute_sync(ExecutionContext(), action, XMLFormat())
>>> for entry in result.raw.output(0, dict)["results"]:
...     print(entry)
{'name': 'write', 'result': {'ok': True}}
{'name': 'read', 'error': "no file 'b.txt'"}
{'name': 'read', 'result': 'Hi'}
>>> result.text.splitlines()[2][:60]
'{"results":[{"name":"write","result":{"ok":true}},{"name":"r'
"""

from toolchain.composite._composite_tool import CompositeInput, CompositeOutput, CompositeTool

__all__ = ["CompositeInput", "CompositeOutput", "CompositeTool"]
