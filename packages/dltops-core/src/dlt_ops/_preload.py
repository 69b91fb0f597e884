"""What the fork server of :mod:`dlt_ops.isolation` imports once, so that no run pays for it.

dlt, the run's and a backfill chunk's code, and for each engine named in
``DLT_OPS_PRELOAD_ENGINES`` (set by the parent while it starts the server) dlt's destination
client with its driver and the dlt-ops adapter's module. Each import is best-effort: a child
imports whatever is missing itself.
"""

from __future__ import annotations

import importlib
import os

from dlt_ops.isolation import ENGINES_ENV, MODULES_ENV

_MODULES = (
    "dlt",
    "dlt.pipeline",
    "dlt.extract",
    "dlt.normalize",
    "dlt.load",
    "dlt_ops.runner.run",
    "dlt_ops.project.introspect",
    "dlt_ops.backfill.workers",
    "dlt_ops.scheduler.isolated",
    "dlt_ops.destinations",
    "dlt_ops.log",
    "structlog",
    # imported lazily on a child's first run: parsing a connection string loads SQLAlchemy
    # (~0.5 s), dlt's configuration and a source's models load pydantic
    "dlt.common.libs.sql_alchemy_compat",
    "pydantic",
)


def _preload() -> None:
    extra = [m for m in os.environ.get(MODULES_ENV, "").split(",") if m]
    for name in (*_MODULES, *extra):
        try:
            importlib.import_module(name)
        except Exception:  # noqa: S112 - the child imports it (and reports it) itself
            continue
    for engine in filter(None, os.environ.get(ENGINES_ENV, "").split(",")):
        try:
            from dlt.common.destination import Destination

            factory = Destination.from_reference(engine)
            if factory is not None:
                factory.client_class  # noqa: B018 - the property imports the client module
        except Exception:  # noqa: S112
            continue


_preload()
