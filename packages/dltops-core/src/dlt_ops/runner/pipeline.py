"""Building the dlt pipeline for a run: project-scoped working state, and the dlt destination
the source's adapter pins (e.g. an embedded engine's project-relative file)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dlt_ops.config import ProjectConfig
from dlt_ops.destinations import ResolvedDestination, connection_target
from dlt_ops.project.model import STATE_DIR

if TYPE_CHECKING:
    from dlt_ops.adapters import DestinationAdapter
    from dlt_ops.runner.progress import ProgressSink


def pipelines_dir(root: Path) -> Path:
    """dlt's working directories for this project's pipelines (never ``~/.dlt``)."""
    return root / STATE_DIR / "pipelines"


def working_base(root: Path, where: ResolvedDestination) -> Path:
    """The pipelines dir of ``where``: dlt's working state is keyed by source (the pipeline
    name under it), destination and dataset, so ``-d other`` starts with its own cursor and
    pending packages instead of inheriting the default dataset's."""
    base = pipelines_dir(root) / where.engine / where.dataset
    _adopt_unkeyed(root, where, base)
    return base


def _adopt_unkeyed(root: Path, where: ResolvedDestination, base: Path) -> None:
    """Move a working dir of the unkeyed layout (``pipelines/<pipeline>``, dlt-ops before the
    keying) to its keyed place when it belongs to this dataset, keeping its pending packages."""
    import json

    old, new = pipelines_dir(root) / where.pipeline_name, base / where.pipeline_name
    if new.exists() or not (old / "state.json").is_file():
        return
    try:
        dataset = json.loads((old / "state.json").read_text(encoding="utf-8")).get("dataset_name")
    except (OSError, ValueError):
        return
    if dataset == where.dataset:
        base.mkdir(parents=True, exist_ok=True)
        old.rename(new)


def _reread_dlt_settings() -> None:
    """Have dlt read ``.dlt/`` again where ``DLT_PROJECT_DIR`` now points.

    dlt reads its TOML files once, on the first config lookup of the process. When that came
    before the run pointed dlt at the project (a derived adapter asks dlt for its capabilities
    while the run is prepared), dlt kept the caller's directory: a source's config and secrets
    would then be looked up there.
    """
    import sys

    if "dlt.common.configuration.container" not in sys.modules:
        return  # dlt has read nothing yet: its first lookup will see the project
    from dlt.common.configuration.container import Container
    from dlt.common.configuration.specs.pluggable_run_context import PluggableRunContext

    container = Container()
    if PluggableRunContext not in container:
        return
    context = container[PluggableRunContext]
    reload = getattr(context, "reload_providers", None)  # dlt >= 1.31; before: a full reload
    if reload is not None:
        reload()
    else:
        context.reload()


@contextmanager
def project_environment(root: Path) -> Iterator[None]:
    """Point dlt at the project's ``.dlt/`` whatever the cwd, restoring the env afterwards."""
    previous = os.environ.get("DLT_PROJECT_DIR")
    os.environ["DLT_PROJECT_DIR"] = str(root)
    if previous != str(root):
        _reread_dlt_settings()
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop("DLT_PROJECT_DIR", None)
        else:
            os.environ["DLT_PROJECT_DIR"] = previous


def dlt_destination(
    config: ProjectConfig,
    source: str,
    where: ResolvedDestination,
    adapter: DestinationAdapter | None = None,
) -> Any:
    """The dlt destination for ``source``: the one its adapter pins, else dlt's reference."""
    if adapter is not None:
        target = connection_target(config, where, setting_keys=adapter.dlt_setting_keys)
        pinned = adapter.dlt_destination(target)
        if pinned is not None:
            return pinned
    return config.destination_for(source)


#: ``build_pipeline(adapter=...)`` not given: look the adapter up (``None`` means core tier)
_LOOK_UP: Any = object()


def _adapter_for(config: ProjectConfig, where: ResolvedDestination) -> DestinationAdapter | None:
    """The source's adapter, for callers that did not pass it (``None`` at core tier)."""
    from dlt_ops.destinations import load_adapter, project_registry
    from dlt_ops.target import adapter_tier

    registry = project_registry(config)
    if not adapter_tier(registry, where.engine).has_adapter:
        return None
    return load_adapter(registry, where.engine)


def build_pipeline(
    config: ProjectConfig,
    source: str,
    where: ResolvedDestination,
    *,
    working_dir: Path | None = None,
    adapter: DestinationAdapter | None = _LOOK_UP,
    progress: ProgressSink | None = None,
) -> Any:
    """``dlt.pipeline(<source>_pipeline, ...)`` with working state under the project.

    ``adapter`` is the source's destination adapter (``None`` at core tier); when not given it
    is looked up, which costs a registry build. ``progress`` is fed dlt's step and row counts."""
    import dlt

    from dlt_ops.runner.progress import dlt_collector
    from dlt_ops.working_state import discard_pickled_trace

    if adapter is _LOOK_UP:
        adapter = _adapter_for(config, where)
    base = working_dir or working_base(config.root, where)
    # before anything can ask dlt for `last_trace`: a trace file left (or planted) there would
    # be unpickled
    discard_pickled_trace(base / where.pipeline_name)
    return dlt.pipeline(
        pipeline_name=where.pipeline_name,
        destination=dlt_destination(config, source, where, adapter),
        dataset_name=where.dataset,
        pipelines_dir=str(base),
        dev_mode=False,
        **({"progress": dlt_collector(progress)} if progress is not None else {}),
    )
