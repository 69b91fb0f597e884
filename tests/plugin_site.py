"""A plugin distribution installed for one test: a ``*.dist-info`` folder (METADATA and
entry_points.txt) plus its module in a throwaway site folder, reached through ``PYTHONPATH``
by the ``dlt-ops`` subprocesses a test starts. Entry points are read from metadata exactly as
an installed wheel's are, so the plugin is found, disabled or listed the way a user's is."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path


def install_plugin(
    site: Path, dist: str, group: str, entries: dict[str, str], module: str, body: str
) -> dict[str, str]:
    """Install ``dist`` 0.0.1 whose ``entries`` (name -> value) are in entry-point ``group``
    (``dlt_ops.<kind>``), with ``module`` holding ``body``; the environment that finds it."""
    info = site / f"{dist.replace('-', '_')}-0.0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.0.1\n")
    lines = "".join(f"{name} = {value}\n" for name, value in entries.items())
    (info / "entry_points.txt").write_text(f"[{group}]\n{lines}")
    (site / f"{module}.py").write_text(textwrap.dedent(body))
    return site_env(site)


def site_env(site: Path) -> dict[str, str]:
    """The environment in which a ``dlt-ops`` subprocess finds the plugins of ``site``."""
    return {"PYTHONPATH": os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))}
