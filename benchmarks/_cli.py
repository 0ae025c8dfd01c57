"""What every way of running the benchmarks shares: the options and the header.

``python -m benchmarks`` runs the parts it is asked for; each part's module also runs
alone (``python -m benchmarks.loop_overhead``) through `run_alone`.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from collections.abc import Callable, Sequence
from importlib import metadata

import yaml

from benchmarks._timing import Settings, load_note

__all__ = ["parser", "run_alone", "run_parts"]

Part = Callable[[Settings], None]


def parser(prog: str, description: str) -> argparse.ArgumentParser:
    """The options every run takes (``--quick``, ``--keep-gc``)."""
    options = argparse.ArgumentParser(prog=prog, description=description)
    options.add_argument("--quick", action="store_true", help="a short run (1/5 of the work)")
    options.add_argument(
        "--keep-gc", action="store_true", help="leave the garbage collector on while timing"
    )
    return options


def run_parts(parts: Sequence[Part], args: argparse.Namespace) -> None:
    """The header, then each part in turn, then the wall time."""
    settings = Settings(quick=args.quick, disable_gc=not args.keep_gc)
    started = time.perf_counter()
    _header(settings)
    for index, part in enumerate(parts):
        if index:
            print()
        part(settings)
        sys.stdout.flush()
    print()
    print(f"total wall time: {time.perf_counter() - started:.1f} s")


def run_alone(part: Part, prog: str, argv: Sequence[str] | None = None) -> None:
    """One part's module run as a script: its own options, the header, the part."""
    doc = (part.__doc__ or "").strip()
    args = parser(prog, doc.splitlines()[0] if doc else prog).parse_args(argv)
    run_parts([part], args)


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
