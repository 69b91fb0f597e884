"""A NUL byte in .dlt/config.toml (``"\\u0000"`` in a TOML string, or in a key) is refused with
exit 2 by every command that reads the project, instead of vanishing on its way to a file name,
a driver or dlt's config."""

from __future__ import annotations

import pytest

from tests.conftest import EVENTS_ON_DUCKDB, EVENTS_SOURCE, write_project

PLACES = {
    "dataset": ('default_dataset = "ds"', 'default_dataset = "ds\\u0000x"',
                "dlt_ops.default_dataset"),
    "source key": ("[sources.events_src.dlt_ops]",
                   '[sources.events_src]\ngreeting = "hi\\u0000"\n\n[sources.events_src.dlt_ops]',
                   "sources.events_src.greeting"),
    "table name": ("[sources.events_src.dlt_ops]", '[sources."a\\u0000b".dlt_ops]\n'
                   'schedule = "@daily"\n\n[sources.events_src.dlt_ops]', "'sources.a"),
}  # fmt: skip


@pytest.mark.parametrize("place", list(PLACES))
@pytest.mark.parametrize(
    "command", [["pipeline", "run", "-s", "events_src", "-y"], ["pipeline", "status"],
                ["pipeline", "validate"], ["runs", "list"]],
    ids=["run", "status", "validate", "runs list"],
)  # fmt: skip
def test_a_nul_byte_is_refused(tmp_path, cli, place, command) -> None:  # noqa: ANN001
    old, new, where = PLACES[place]
    root = write_project(
        tmp_path / "proj", EVENTS_ON_DUCKDB.replace(old, new), {"events_src": EVENTS_SOURCE}
    )
    done = cli(*command, cwd=root)
    assert done.returncode == 2, (done.stdout[-500:], done.stderr[-2000:])
    (line,) = [ln for ln in done.stderr.splitlines() if ln.startswith("error:")]
    assert "contains a NUL byte" in line and where in line, line
    assert not list(root.glob("*.duckdb"))
