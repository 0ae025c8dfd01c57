"""Run the benchmarks: ``python -m benchmarks [--quick] [--only PART] [--keep-gc]``.

Prints the environment (Python, library versions, libyaml, CPU load), the measuring
method, then each part's tables. A full run takes a few minutes on 2 cores (``--quick``
about one); the per-measurement time budgets in each module keep it bounded on a slow or busy host.
"""

from __future__ import annotations

from benchmarks import (
    adversarial_chains,
    approval_flow,
    code_mode,
    dialect_speed,
    discovery_tokens,
    durable_overhead,
    extension_parts,
    import_time,
    loop_overhead,
    observation_tokens,
    otel_overhead,
    parse_scaling,
    pass_by_reference,
    tool_retrieval,
    toolchain_overhead,
)
from benchmarks._cli import Part, parser, run_parts

PARTS: dict[str, Part] = {
    "toolchain": toolchain_overhead.run,
    "parse": parse_scaling.run,
    "loop": loop_overhead.run,
    "parts": extension_parts.run,
    "otel": otel_overhead.run,
    "imports": import_time.run,
    "chains": adversarial_chains.run,
    "dialects": dialect_speed.run,
    "references": pass_by_reference.run,
    "discovery": discovery_tokens.run,
    "approvals": approval_flow.run,
    "retrieval": tool_retrieval.run,
    "observations": observation_tokens.run,
    "code_mode": code_mode.run,
    # Last: it launches DBOS in this process (and shuts it down when done).
    "durable": durable_overhead.run,
}


def main(argv: list[str] | None = None) -> None:
    options = parser(
        "python -m benchmarks",
        "Tool-chain overhead and parse-scaling benchmarks (run on demand).",
    )
    options.add_argument(
        "--only", choices=sorted(PARTS), action="append", help="run only this part (repeatable)"
    )
    args = options.parse_args(argv)
    run_parts([PARTS[name] for name in args.only or list(PARTS)], args)


if __name__ == "__main__":
    main()
