"""Hostile names and values through every flag and config key that reaches SQL.

Property-based (hypothesis, derandomized so CI repeats the same examples): each example picks a
command and a hostile string — SQL fragments, quotes of every engine, ``{table}`` / ``?`` / ``$1``
placeholders, over-long names, odd unicode — and runs the real CLI with it. Whatever the
command says, a decoy table (and a decoy schema) must survive untouched, no traceback may
reach the user, and a refusal (exit 2) must have written nothing: no ledger row, no schema.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ._project import FaultProject, make_project

FIXED = [
    'ds"; DROP TABLE ds.decoy; --',
    "x'; DROP TABLE ds.decoy; --",
    "robert'); DELETE FROM ds.decoy; --",
    "ds.decoy",
    '"ds"."decoy"',
    "`ds`.`decoy`",
    "decoy_schema",
    "{table}",
    "{_dlt_ops_runs}",
    "?",
    "$1",
    "%s",
    "--",
    "/* */",
    "a" * 1024,
    "ds" + "_x" * 40,
    "",
    " ",
    "ünïcödé",
    "名前",
    "\N{PILE OF POO}",
    "tab\there",
    "new\nline",
    "items",
    "paged",
]
HOSTILE = st.one_of(
    st.sampled_from(FIXED),
    st.text(
        alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
        max_size=70,
    ),
)


def _toml(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a valid TOML basic string


#: name → (how the hostile value is passed, exit codes a correct CLI may give)
Target = tuple[Callable[[FaultProject, str], tuple[str, ...]], set[int]]
TARGETS: dict[str, Target] = {
    "run -d": (lambda p, h: ("pipeline", "run", "-s", p.name, "-y", "-d", h), {0, 2}),
    "run -s": (lambda p, h: ("pipeline", "run", "-s", h, "-y"), {0, 2}),
    "run -r": (lambda p, h: ("pipeline", "run", "-s", p.name, "-y", "-r", h), {0, 2}),
    "runs show": (lambda p, h: ("runs", "show", h), {0, 2}),
    "runs list -s": (lambda p, h: ("runs", "list", "-s", h), {0, 2}),
    "runs list -d": (lambda p, h: ("runs", "list", "-d", h), {0, 1, 2}),
    "status -d": (lambda p, h: ("pipeline", "status", "-d", h), {0, 1, 2}),
    "backfill show": (lambda p, h: ("backfill", "show", h), {0, 1, 2}),
    "backfill list -d": (lambda p, h: ("backfill", "list", "-d", h), {0, 1, 2}),
    "checkpoints -r": (lambda p, h: ("checkpoints", "list", "-s", p.name, "-r", h), {0, 1, 2}),
    "config dataset": (lambda p, h: ("pipeline", "run", "-s", p.name, "-y"), {0, 2}),
    "config assertion": (lambda p, h: ("pipeline", "run", "-s", p.name, "-y"), {0, 1, 2}),
}
CONFIGURED = {
    "config dataset": lambda h: "\n[sources.paged.dlt_ops.x]\n".replace(
        "[sources.paged.dlt_ops.x]", f"[sources.paged.dlt_ops]\ndataset = {_toml(h)}"
    ),
    "config assertion": lambda h: (
        "\n[sources.paged.dlt_ops.assertions.items]\n"
        f'unique_columns = {{ value = [{_toml(h)}], on_failure = "quarantine" }}\n'
    ),
}


class Checked:
    """The project's destination before a command, to compare after it."""

    def __init__(self, project: FaultProject) -> None:
        self.project = project
        self.runs = self._runs()
        self.schemas = self._schemas()

    def _runs(self) -> int:
        return self.project.query("SELECT count(*) FROM ds._dlt_ops_runs")[0][0]

    def _schemas(self) -> set[str]:
        rows = self.project.query("SELECT schema_name FROM information_schema.schemata")
        return {r[0] for r in rows}

    def decoys_intact(self) -> None:
        assert self.project.query("SELECT answer FROM ds.decoy") == [(42,)]
        assert self.project.query("SELECT answer FROM decoy_schema.decoy") == [(7,)]

    def nothing_written(self) -> None:
        assert self._runs() == self.runs, "a refused command wrote a ledger row"
        assert self._schemas() == self.schemas, "a refused command created a schema"


def _project(root: Path, engine: str, db) -> FaultProject:  # noqa: ANN001
    project = make_project(root, engine, db=db)
    done = project.cli("pipeline", "run", "-s", project.name, "-y", env={"FT_ROWS": "40"})
    assert done.returncode == 0, done.stderr
    statements = [
        "CREATE TABLE ds.decoy AS SELECT 42 AS answer",
        "CREATE SCHEMA decoy_schema",
        "CREATE TABLE decoy_schema.decoy AS SELECT 7 AS answer",
    ]
    if engine == "duckdb":
        import duckdb

        with duckdb.connect(str(project.duckdb_path)) as con:
            for sql in statements:
                con.execute(sql)
    else:
        import psycopg

        with psycopg.connect(project.db_url, autocommit=True) as conn:
            for sql in statements:
                conn.execute(sql)
    return project


def _check(project: FaultProject, config: str, target: str, hostile: str, figures) -> None:  # noqa: ANN001
    argv, allowed = TARGETS[target]
    (project.root / ".dlt" / "config.toml").write_text(
        config + (CONFIGURED[target](hostile) if target in CONFIGURED else "")
    )
    before = Checked(project)
    proc = project.cli(*argv(project, hostile), env={"FT_ROWS": "40"})
    figures.trials += 1
    shown = f"{target} {hostile!r}: exit {proc.returncode}\n{proc.stderr[-2000:]}"
    assert proc.returncode in allowed, shown
    assert "Traceback" not in proc.stderr, shown
    before.decoys_intact()
    if proc.returncode == 2:
        before.nothing_written()


@pytest.mark.parametrize(("engine", "examples"), [("duckdb", 28), ("postgres", 14)])
def test_hostile_values_never_reach_sql(tmp_path: Path, request, figures, engine, examples) -> None:  # noqa: ANN001
    db = request.getfixturevalue("postgres_database") if engine == "postgres" else None
    project = _project(tmp_path / "proj", engine, db)
    config = (project.root / ".dlt" / "config.toml").read_text()

    @settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(target=st.sampled_from(sorted(TARGETS)), hostile=HOSTILE)
    def check(target: str, hostile: str) -> None:
        _check(project, config, target, hostile, figures)

    check()
    # and every fixed payload once through the flags that name SQL objects directly
    for hostile in FIXED[:8]:
        for target in ("run -d", "runs show"):
            _check(project, config, target, hostile, figures)
    figures.check()
