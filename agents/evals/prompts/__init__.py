"""The ported prompt cases, with their recordings, to run with ``python -m agents eval``.

- ``relay/``: the tool-context-relay PoC's six cases (``case0`` … ``case4``, ``web1``)
  on the ``relay`` toolset;
- ``airline/``: two SkyWings scenarios (``reschedule``, the demo's task, and ``baggage``,
  a typed JSON answer) on the ``airline`` toolset.

Each folder's ``cassettes/`` holds recordings made through a scripted model behind an
OpenAI-compatible endpoint on loopback (model name ``loopback:scripted``), so they
replay offline, from a checkout or an installed wheel (`agents.evals.suites`)::

    python -m agents eval --suite relay --replay --protocol native

`agents.evals.prompts.checks` holds the typed answer and the predicate the airline
cases name.
"""
