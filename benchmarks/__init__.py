"""Benchmarks for the tool chains and text formats, run on demand (never in CI).

``python -m benchmarks`` runs everything and prints tables; ``--quick`` for a short
run, ``--only NAME`` for one part (``python -m benchmarks --help`` lists them), ``--keep-gc`` to
leave the cyclic garbage collector on while timing.

* ``benchmarks.toolchain_overhead``: parse-only and full ``execute`` times of a typical
  1-call and 3-call action for ``JSONToolChain`` and ``YAMLToolChain``, against a floor doing the
  same work directly (decode, validate, call, encode);
* ``benchmarks.parse_scaling``: one-shot and streamed section parsing of 10 KB, 100 KB
  and 1 MB model outputs with ``XMLFormat`` and ``MarkdownFormat``, and how the time
  grows with size, and adversarial outputs (unclosed tags, padded headings …) at
  100 KB, 300 KB and 1 MB;
* ``benchmarks.adversarial_chains``: hostile action content through both chains at
  100 KB, 300 KB and 990 KB, with its growth per size step;
* ``benchmarks.dialect_speed``: ``toolchain.dialects`` on hostile model output (an opener
  repeated to 1 MB and never closed), in MB/s and against one regex pass over the same
  text, one-shot and streamed;
* ``benchmarks.import_time``: import time and memory of each package, in fresh
  interpreters, against a bare interpreter;
* ``benchmarks.loop_overhead``: the ReAct loop's own cost per iteration, what each
  extension installed adds to it (``_extension_overhead``), and what an agent built per
  request costs against one reused (``_fresh_agents``);
* ``benchmarks.extension_parts``: where the extension rows' cost goes: one agent run as
  it is and with each part of ToolVariables' and ToolSearch's work made free by a
  stand-in, round by round, and with every part free at once (what having the extension
  costs, whatever its work);
* ``benchmarks.pass_by_reference``: tokens saved by ToolVariables and ContextRelay, and
  their cost per call (its tasks in ``_reference_tasks`` and ``_record_flow``, its timing
  in ``_reference_overhead``, ToolVariables over a 100-iteration run in
  ``_variables_growth``);
* ``benchmarks.discovery_tokens``: tokens of a 60-tool task with every tool in the prompt
  and with ToolSearch, and how much of each request the prompt cache can reuse (its
  tools in ``_cms_tools``);
* ``benchmarks.reported_savings``: ``AgentResult.savings`` against the measured
  difference of the same task run with and without each extension (printed by the
  ``references`` and ``discovery`` parts);
* ``benchmarks.tool_retrieval``: R@5, R@10 and nDCG@10 of the discovery search backends on
  the BFCL and MetaTool tool-retrieval sets, with latency per query and index build time,
  and a ``tool_search`` call through the chain over the BFCL tools (``_search_call``);
* ``benchmarks.durable_overhead``: a durable run (``agents.durable``, DBOS on SQLite, as
  DBOS leaves the file and in WAL) against the same run plain, per step and per recorded
  step; that ``import agents`` loads no DBOS, and the plain run with the durable seam on;
* ``benchmarks.code_mode``: code mode (``PythonToolChain``) against the JSON chain: whole-run
  tokens of four flows and a naive model in both agents (``_code_flows``), 30 programs with
  a planted mistake each through the type check (``_planted_mistakes``), and the cost of a
  program against JSON-chain calls;
* ``benchmarks._timing``: the shared measuring method (warm-up, ``perf_counter_ns``,
  medians of individually timed runs, gc control) and table printing.

Targets are printed next to the figures as PASS/MISS; nothing is asserted.
"""
