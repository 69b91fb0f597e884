"""``dlt-ops airflow pools``: the per-source Airflow pools the DAG factories use, created."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from dlt_ops.cli.help_format import PlainHelpGroup
from dlt_ops.cli.state import AppState, RootOption

airflow_app = typer.Typer(
    cls=PlainHelpGroup,
    no_args_is_help=True,
    help="Prepare an Airflow deployment for the project's DAGs.",
)


def _mapping(pairs: list[str]) -> dict[str, str]:
    from dlt_ops.errors import UsageError

    out: dict[str, str] = {}
    for pair in pairs:
        source, sep, pool = pair.partition("=")
        if not sep or not source or not pool:
            raise UsageError(f"--map takes SOURCE=POOL, got {pair!r}")
        out[source] = pool
    return out


@airflow_app.command("pools")
def pools(
    ctx: typer.Context,
    source: Annotated[
        list[str] | None,
        typer.Option("--source", "-s", help="Only these sources (repeatable; default: all)."),
    ] = None,
    prefix: Annotated[
        str | None,
        typer.Option("--prefix", help="One pool per source: <prefix><source> (as pools='...')."),
    ] = None,
    mapping: Annotated[
        list[str] | None,
        typer.Option("--map", help="SOURCE=POOL (repeatable; as pools={...})."),
    ] = None,
    pool: Annotated[
        str | None,
        typer.Option("--pool", help="The pool of the sources --map leaves out (as pool=...)."),
    ] = None,
    slots: Annotated[int, typer.Option("--slots", min=1, help="Slots of a created pool.")] = 1,
    apply: Annotated[
        bool,
        typer.Option(
            "--apply",
            help="Create the missing pools and record them (needs the Airflow metadata "
            "database: run it where the airflow CLI works).",
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON list.")] = False,
    root: RootOption = None,
) -> None:
    """List (or with --apply create) the per-source pools of the DAG factories.

    Give the same pools as the factory call (--prefix for pools='<prefix>', --map for
    pools={...}, --pool for pool=...); without any, every source gets its own pool
    dlt_ops_<source>. --apply creates the missing pools with --slots slots, keeps existing
    ones as they are, and records them all in the Airflow Variable dlt_ops_pools, which the
    DAGs' pool check reads."""
    from dlt_ops.errors import UsageError
    from dlt_ops.project.discovery import discover

    state: AppState = ctx.obj.with_root(root)
    config = state.project()
    if prefix and mapping:
        raise UsageError("--prefix and --map are exclusive (as pools= takes one or the other).")
    try:
        from dlt_ops.airflow import require_airflow

        require_airflow()
        from dlt_ops.airflow.pools import (
            DEFAULT_POOL,
            SCHEDULE_POOL_PREFIX,
            select_sources,
            source_pools,
        )
    except ImportError as exc:  # dlt_ops.airflow names the extra
        raise UsageError(str(exc)) from None
    names = select_sources(discover(config.root).sources, source)
    given = prefix or (_mapping(mapping) if mapping else None)
    if given is None and pool is None:
        given = SCHEDULE_POOL_PREFIX
    pool_of = source_pools(names, given, pool)
    wanted = {p: slots for p in pool_of.values() if p != DEFAULT_POOL}
    created: dict[str, tuple[int, bool]] = {}
    if apply:
        from dlt_ops.airflow.pools import apply_pools

        created = {name: (n, made) for name, n, made in apply_pools(wanted)}
    rows = []
    for name, pool_name in pool_of.items():
        count, made = created.get(pool_name, (wanted.get(pool_name), False))
        rows.append({"source": name, "pool": pool_name, "slots": count, "created": made,
                     "applied": apply})  # fmt: skip
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    for row in rows:
        how = ("created" if row["created"] else "exists") if apply else "not applied"
        typer.echo(f"{row['source']}: pool {row['pool']} ({how})")
