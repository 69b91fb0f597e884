"""Render mutmut's results (``.mutation/mutants/**/*.py.meta``) as the per-module table in
docs/testing.md, between ``<!-- mutation-table:start -->`` and ``<!-- mutation-table:end -->``.

A surviving mutant listed in the doc's equivalent-mutants table (between
``<!-- equivalent:start -->`` and ``<!-- equivalent:end -->``, first column the mutant's
name in backticks) counts as equivalent, not as a survivor.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

START, END = "<!-- mutation-table:start -->", "<!-- mutation-table:end -->"
EQ_START, EQ_END = "<!-- equivalent:start -->", "<!-- equivalent:end -->"
# mutmut's exit-code verdicts (mutmut.stats.status_by_exit_code), folded into our columns
KILLED = {1, 3}
SURVIVED = {0}
NO_TESTS = {5, 33}
TIMEOUT = {36, -24, 24, 152, 255}


def equivalents(doc: str) -> set[str]:
    if EQ_START not in doc:
        return set()
    block = doc.split(EQ_START, 1)[1].split(EQ_END, 1)[0]
    return set(re.findall(r"^\|\s*`([^`]+)`", block, flags=re.M))


def rows(stage: Path, equivalent: set[str]) -> list[list[str]]:
    config = tomllib.loads((stage / "pyproject.toml").read_text("utf-8"))["tool"]["mutmut"]
    out = []
    for source in config["only_mutate"]:
        meta = stage / "mutants" / (source + ".meta")
        module = source.removeprefix("src/").removesuffix(".py").replace("/", ".")
        if not meta.exists():
            out.append([f"`{module}`", "–", "–", "–", "–", "–", "–", "–", "not run"])
            continue
        codes = json.loads(meta.read_text("utf-8"))["exit_code_by_key"]
        # a listed mutant counts as equivalent only while it survives (not when killed or not run)
        eq = sum(1 for name, c in codes.items() if name in equivalent and c in SURVIVED | NO_TESTS)
        killed = sum(1 for c in codes.values() if c in KILLED)
        timeout = sum(1 for c in codes.values() if c in TIMEOUT)
        left = [n for n, c in codes.items() if c in SURVIVED | NO_TESTS and n not in equivalent]
        not_run = sum(1 for c in codes.values() if c is None)
        other = len(codes) - killed - timeout - eq - len(left) - not_run
        checked = len(codes) - not_run
        share = f"{100 * len(left) / checked:.1f} %" if checked else "–"
        if not_run:
            share += f" of {checked} run"
        counts = (len(codes), killed, timeout, len(left), eq, not_run, other)
        out.append([f"`{module}`", *map(str, counts), share])
    return out


def render(stage: Path, doc_path: Path) -> None:
    doc = doc_path.read_text("utf-8")
    head = "module mutants killed timeout survived equivalent not-run other survived-%".split()
    head = [h.replace("-", " ") for h in head]
    lines = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    lines += ["| " + " | ".join(r) + " |" for r in rows(stage, equivalents(doc))]
    table = "\n".join(lines)
    before, rest = doc.split(START, 1)
    after = rest.split(END, 1)[1]
    doc_path.write_text(f"{before}{START}\n{table}\n{END}{after}", "utf-8")
    print(table)
