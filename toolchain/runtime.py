"""What a loop or an extension built on the toolchain uses besides the chains.

Our users write their own agent loops, and `agents` is one such loop: everything it takes
from the toolchain beyond chains and tools comes from here, so a user's loop has the same
parts ours has, and no package imports a private module of another.

- running async code: `run_sync` (``asyncio.run`` a stuck task cannot hold hostage),
  `eager_task` and `settle` (work that finishes without suspending costs no loop turn),
  `SettleLater`, `abandon` (work that ignored its cancellation kept, never resumed);
- extensions: `checked_extensions` (what ``extensions=`` was given, refused unless each
  inherits ``Extension``), `install_extensions`, `saved_state` and `restore_state` (one
  run's view of the extension seam), `run_hooks` and `HookFailed` (the runner every hook
  stage shares);
- text that leaves the process: `redact`, `redact_data`, `REDACTED`, the ``remember_*``
  functions that teach redaction a secret, `logger` (a logger that redacts each record),
  `describe_exception`, `one_line`, `log_line`, `escape_controls`, `unfence` (an action's
  code fence taken off);
- `count_tokens` (offline o200k counts), `json_nesting_exceeds` (a linear depth check to run
  before any parser), `requires_extra` and `MissingExtra` (a missing optional dependency
  named with its extra);
- the durable seam: `StepRunner`, `current_step_runner` and `step_runner_installed`;
- `narrow_chain`: a chain with only a step's active tools callable, never changed itself;
- `slot_init`: a frozen, slotted dataclass's ``__init__`` that sets each slot through its
  descriptor (the generated one calls ``object.__setattr__`` per field), for the values
  a loop builds every step;
- approvals: `set_approver` (a run's ``approve=``), `check_decisions` (a resume's
  checks, made before anything runs) and `resume_action` (an action's held calls
  decided: what ``ToolChainBase.resume`` does, whichever chain held them); for a tool
  whose own calls wait (a sub-agent's held calls), `CallHeld` to hold its call with
  them, `held_error` to say it still waits (`held_in` reads it back), `rebind` to pass
  a decision on, and `calls_nest` to have chains tell such a tool the call it runs in;
  `Seal`, `PROCESS_KEY` and `args_digest` for a loop that hands held calls to other
  processes (``agents.durable`` seals them with a key every process shares;
  ``agents.ui`` the state it hands a client and takes back).

>>> from toolchain.runtime import redact, remember_secret
>>> remember_secret("s3cr3t-value-for-the-doctest")
>>> redact("token=s3cr3t-value-for-the-doctest")
'token=[REDACTED]'
"""

from toolchain._approvals import (
    PROCESS_KEY,
    Approval,
    ApprovalError,
    CallHeld,
    Seal,
    args_digest,
    calls_nest,
    held_error,
    held_in,
    rebind,
    refusals,
    set_approver,
    verify,
)
from toolchain._concurrency import SettleLater, abandon, eager_task, run_sync, settle
from toolchain._errors import describe_exception
from toolchain._extension import (
    checked_extensions,
    install_extensions,
    restore_state,
    saved_state,
)
from toolchain._extras import MissingExtra, requires_extra
from toolchain._hooks import HookFailed, run_hooks
from toolchain._oneline import escape_controls, log_line, one_line
from toolchain._redact import (
    REDACTED,
    logger,
    redact,
    redact_data,
    remember_environment,
    remember_header_secrets,
    remember_secret,
    remember_url_secrets,
)
from toolchain._result import slot_init
from toolchain._syntax._json import unfence
from toolchain._syntax._nesting import json_nesting_exceeds
from toolchain._tokens import count_tokens
from toolchain.chain._base import narrow_chain
from toolchain.chain._resume import SEAL
from toolchain.chain._resume import resume as resume_action
from toolchain.chain._step_seam import StepRunner
from toolchain.chain._step_seam import current as current_step_runner
from toolchain.chain._step_seam import installed as step_runner_installed

__all__ = [
    "PROCESS_KEY",
    "REDACTED",
    "CallHeld",
    "HookFailed",
    "MissingExtra",
    "Seal",
    "SettleLater",
    "StepRunner",
    "abandon",
    "args_digest",
    "calls_nest",
    "check_decisions",
    "checked_extensions",
    "count_tokens",
    "current_step_runner",
    "describe_exception",
    "eager_task",
    "escape_controls",
    "held_error",
    "held_in",
    "install_extensions",
    "json_nesting_exceeds",
    "log_line",
    "logger",
    "narrow_chain",
    "one_line",
    "rebind",
    "redact",
    "redact_data",
    "remember_environment",
    "remember_header_secrets",
    "remember_secret",
    "remember_url_secrets",
    "requires_extra",
    "restore_state",
    "resume_action",
    "run_hooks",
    "run_sync",
    "saved_state",
    "set_approver",
    "settle",
    "slot_init",
    "step_runner_installed",
    "unfence",
]


def check_decisions(pending: object, decisions: object, seal: Seal = SEAL) -> dict[str, Approval]:
    """The decisions to apply to the held calls ``pending`` (a result's), once each held
    call matched its seal (``seal``: by default this process's) and each decision was
    found to apply (see ``ToolChainBase.resume``); else ``ApprovalError`` naming each
    refused one."""
    _, held = verify(seal, pending)
    taken, refused = refusals(held, decisions)
    if refused:
        raise ApprovalError(refused)
    return taken
