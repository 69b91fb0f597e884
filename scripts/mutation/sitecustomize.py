"""Mutation lane only (scripts/mutation/ is on PYTHONPATH there, nowhere else).

Most of the suite drives the real CLI in a subprocess. While mutmut collects which tests reach
which function ("stats"), a subprocess's trampoline hits would stay in the subprocess; this
records each new (test, function) pair in ``$DLTOPS_MUTATION_HITS/<pid>.tsv`` at once (a test
may SIGKILL the process), and ``mutation_bridge`` folds them into mutmut's stats.
"""

from __future__ import annotations

import os

_HITS = os.environ.get("DLTOPS_MUTATION_HITS")

if _HITS and os.environ.get("MUTANT_UNDER_TEST") == "stats":
    import mutmut.mutation.trampoline as _trampoline

    _seen: set[tuple[str, str]] = set()

    def _record(name: str, caller: str | None = None) -> None:
        # pytest exports the running test's id; the subprocess inherits it
        test = os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" (", 1)[0]
        if not test or (test, name) in _seen:
            return
        _seen.add((test, name))
        with open(os.path.join(_HITS, f"{os.getpid()}.tsv"), "a", encoding="utf-8") as out:
            out.write(f"{test}\t{name}\n")

    _trampoline.record_trampoline_hit = _record  # the trampoline looks it up on each call
