"""Check cases.jsonl against its schema and README.md's counts.

    python3 tests/corpus/dialects/check_corpus.py          # check, exit 1 on any problem
    python3 tests/corpus/dialects/check_corpus.py --table  # print the counts for README.md

Checks: every line is a JSON object with the required keys and types; ids are unique; an
expected_error case expects no calls; no text repeats a text of the peers' corpus
(``tests/corpus/toolcall-dialects``); README.md's total, per-format table and summary counts
match the file.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

Case = dict[str, Any]

HERE = Path(__file__).resolve().parent
CASES = HERE / "cases.jsonl"
README = HERE / "README.md"
PEERS = HERE.parent / "toolcall-dialects" / "cases.jsonl"
REQUIRED: dict[str, type] = {
    "id": str,
    "source": str,
    "format": str,
    "text": str,
    "expected_calls": list,
    "notes": str,
}
OPTIONAL: dict[str, tuple[type, ...]] = {
    "expected_content": (str, type(None)),
    "expected_content_contains": (str,),
    "expected_reasoning": (str, type(None)),
    "expected_error": (bool,),
    "expected_ids": (list,),
    "tools": (list,),
}
SOURCE = re.compile(r"[\w.-]+/[\w.-]+:[^@]+@[0-9a-f]{40}")


def load() -> list[Case]:
    cases: list[Case] = []
    for number, line in enumerate(CASES.read_text(encoding="utf-8").splitlines(), 1):
        case = json.loads(line)
        if not isinstance(case, dict):
            raise SystemExit(f"line {number}: not a JSON object")
        cases.append(case)
    return cases


def summary(cases: list[Case]) -> dict[str, int]:
    return {
        "are expected_error": sum(1 for c in cases if c.get("expected_error")),
        "have more than one call": sum(1 for c in cases if len(c["expected_calls"]) > 1),
        "have a tools list": sum(1 for c in cases if "tools" in c),
    }


def case_problems(case: Case) -> list[str]:
    cid = case.get("id", "?")
    found = [
        f"{cid}: {key} missing or not {kind.__name__}"
        for key, kind in REQUIRED.items()
        if not isinstance(case.get(key), kind)
    ]
    if "expected_final" not in case:
        found.append(f"{cid}: expected_final missing")
    if not SOURCE.fullmatch(str(case.get("source", ""))):
        found.append(f"{cid}: source is not owner/repo:path@commit")
    for call in case.get("expected_calls") or []:
        if not isinstance(call, dict) or set(call) != {"name", "arguments"}:
            found.append(f"{cid}: bad expected call {call!r}")
    for key, kinds in OPTIONAL.items():
        if key in case and not isinstance(case[key], kinds):
            found.append(f"{cid}: {key} has the wrong type")
    extra = set(case) - set(REQUIRED) - set(OPTIONAL) - {"expected_final"}
    if extra:
        found.append(f"{cid}: unknown keys {sorted(extra)}")
    if case.get("expected_error") and case.get("expected_calls"):
        found.append(f"{cid}: expected_error with calls")
    return found


def problems(cases: list[Case]) -> list[str]:
    ids = Counter(c.get("id") for c in cases)
    found = [f"duplicate id {i}" for i, n in ids.items() if n > 1]
    for case in cases:
        found += case_problems(case)
    lines = PEERS.read_text(encoding="utf-8").splitlines()
    texts = {json.loads(line)["text"] for line in lines}
    found += [f"{c['id']}: text in the peers' corpus" for c in cases if c["text"] in texts]
    return found


def table(cases: list[Case]) -> str:
    counts = Counter(c["format"] for c in cases)
    ordered = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return "\n".join(["| format | cases |", "|---|---|"] + [f"| `{f}` | {n} |" for f, n in ordered])


def readme_problems(cases: list[Case]) -> list[str]:
    text = README.read_text(encoding="utf-8")
    found = []
    total = re.search(r"\*\*(\d+) cases\*\*", text)
    if total is None or int(total.group(1)) != len(cases):
        found.append(f"README total must say **{len(cases)} cases**")
    rows = re.finditer(r"^\| `([\w-]+)` \| (\d+) \|$", text, re.M)
    claimed = {m.group(1): int(m.group(2)) for m in rows}
    actual = dict(Counter(c["format"] for c in cases))
    if claimed != actual:
        found.append(f"README counts {claimed} != file {actual}")
    for label, value in summary(cases).items():
        said = re.search(rf"(\d+) cases {re.escape(label)}", text)
        if said is None or int(said.group(1)) != value:
            found.append(f"README must say '{value} cases {label}'")
    return found


def main() -> int:
    cases = load()
    if "--table" in sys.argv:
        print(f"**{len(cases)} cases**")
        print(table(cases))
        print("; ".join(f"{value} cases {label}" for label, value in summary(cases).items()) + ".")
        return 0
    found = problems(cases) + readme_problems(cases)
    for line in found:
        print(line)
    print(f"{len(cases)} cases, {len(found)} problems")
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
