"""Tool chains: the extension points for a chain of one's own.

A chain reads calls out of an action (its `CallSyntax`), checks each, runs them, and writes
what the model reads of them. `ToolChainBase` does all of that for any syntax, so a new call
syntax (JSON, YAML, a dialect's, a program's) is a `CallSyntax` and a subclass naming it;
`ChainOptions` are the settings every chain takes. `ToolChain` is what agents rely on.

>>> from toolchain.chain import ToolChainBase
>>> from toolchain import JSONToolChain
>>> issubclass(JSONToolChain, ToolChainBase)
True
"""

# What lives here: _base (the protocols and ToolChainBase), then one module per stage a call
# goes through, in order: _check (plan and check), _run (the tool run), _schedule (the
# action's calls together), _observe (what the model reads); _pipeline takes a call through
# them, _stages holds the one type each hands the next, _config the frozen settings they all
# read, _view the views of a chain (tools added, or fewer callable; never changing it),
# _step_seam is where a durable runner drives the calls, _resume holds an action whose
# calls wait for a person and runs them once decided (toolchain._approvals decides).

from toolchain.chain._base import CallSyntax, ChainOptions, ToolChain, ToolChainBase

__all__ = ["CallSyntax", "ChainOptions", "ToolChain", "ToolChainBase"]
