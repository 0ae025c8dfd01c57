"""Run the benchmarks: ``python -m benchmarks [--quick] [--only PART] [--keep-gc]``.

Prints the environment (Python, library versions, libyaml, CPU load), the measuring
method, then each part's tables. A full run takes a few minutes on 2 cores (``--quick``
about one); the per-measurement time budgets in each module keep it bounded on a slow or busy host.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from collections.abc import Callable, Sequence
from importlib import metadata

import yaml

from benchmarks import (
    adversarial_chains,
    dialect_speed,
    discovery_tokens,
    import_time,
    loop_overhead,
    parse_scaling,
    pass_by_reference,
    tool_retrieval,
    toolchain_overhead,
)
from benchmarks._timing import Settings, load_note

PARTS: dict[str, Callable[[Settings], None]] = {
    "toolchain": toolchain_overhead.run,
    "parse": parse_scaling.run,
    "loop": loop_overhead.run,
    "imports": import_time.run,
    "chains": adversarial_chains.run,
    "dialects": dialect_speed.run,
    "references": pass_by_reference.run,
    "discovery": discovery_tokens.run,
    "retrieval": tool_retrieval.run,
}


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "?"


def _header(settings: Settings) -> None:
    libyaml = "yes" if getattr(yaml, "__with_libyaml__", False) else "no"
    print("gent-py benchmarks")
    print(
        f"Python {platform.python_version()} ({platform.python_implementation()}) on "
        f"{platform.machine()} {platform.system()}; {load_note()}"
    )
    print(
        f"pydantic {_version('pydantic')}, msgspec {_version('msgspec')}, "
        f"PyYAML {_version('PyYAML')} (libyaml: {libyaml})"
    )
    print(settings.describe())
    print(
        "method: warm-up, then each run timed alone with time.perf_counter_ns; "
        "medians; IQR = interquartile range / median"
    )
    print()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description="Tool-chain overhead and parse-scaling benchmarks (run on demand).",
    )
    parser.add_argument("--quick", action="store_true", help="a short run (1/5 of the work)")
    parser.add_argument(
        "--only", choices=sorted(PARTS), action="append", help="run only this part (repeatable)"
    )
    parser.add_argument(
        "--keep-gc", action="store_true", help="leave the garbage collector on while timing"
    )
    args = parser.parse_args(argv)
    settings = Settings(quick=args.quick, disable_gc=not args.keep_gc)
    chosen = args.only or list(PARTS)
    started = time.perf_counter()
    _header(settings)
    for index, name in enumerate(chosen):
        if index:
            print()
        PARTS[name](settings)
        sys.stdout.flush()
    print()
    print(f"total wall time: {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
