"""Files planted under ``.dlt-ops/`` (a restored CI cache, a shared volume) execute nothing."""

from __future__ import annotations

import pickle
import socket
from pathlib import Path

import pytest


class _Payload:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):  # noqa: ANN204
        return (exec, (f"open({str(self.marker)!r}, 'w').write('ran')",))


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


CONFIG = """
[dlt_ops]
default_destination = "{dest}"
default_dataset = "ds"
connect_timeout = 2

[sources.events_src.dlt_ops]
schedule = "@daily"
"""


@pytest.mark.parametrize("dest", ["duckdb", "postgres"])
def test_a_planted_dlt_trace_is_never_unpickled(project, templates, cli, tmp_path, dest) -> None:  # noqa: ANN001
    root = project(CONFIG.format(dest=dest), {"events_src": templates["events"]})
    marker = tmp_path / "pwned"
    planted = root / ".dlt-ops" / "pipelines" / dest / "ds" / "events_src_pipeline" / "trace.pickle"
    planted.parent.mkdir(parents=True)
    planted.write_bytes(pickle.dumps(_Payload(marker)))
    # postgres: unreachable, so the run fails after dlt's pipeline exists but before any step
    env = {"DESTINATION__POSTGRES__CREDENTIALS": f"postgresql://u:pw@127.0.0.1:{_closed_port()}/db"}
    proc = cli("pipeline", "run", "-s", "events_src", "-y", cwd=root, env=env)
    assert proc.returncode == (0 if dest == "duckdb" else 1), proc.stderr
    assert not marker.exists(), "a planted trace.pickle was unpickled"
    assert not planted.exists(), "dlt's pickled trace outlived the run"
