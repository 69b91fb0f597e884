"""0.1's hand-built ``SourceInfo(name=, pipeline_name=, path=, function_name=, source_fn=...)``.

Discovery here is static (no source module is imported). 0.1's ``discover_sources`` returns
:class:`LegacySourceInfo` records over this version's ones: 0.1's field names, the source's
``config``, and a ``source_fn`` imported only when asked for. 0.1 code that builds a record
itself, e.g. to hand a rule a source in a test, gets one from the same ``SourceInfo(...)``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any


class LegacySourceInfo:
    """A 0.1 source record: read-only; ``source_fn`` is the one given, or for a discovered
    record loaded on first use."""

    def __init__(
        self,
        name: str,
        pipeline_name: str,
        path: Path,
        function_name: str,
        source_fn: Callable[..., Any] | None = None,
        resources: tuple[str, ...] = (),
        module_stem: str | None = None,
        config: Any = None,
        import_error: str | None = None,
        import_violations: tuple[Any, ...] = (),
        uses_checkpoints: bool = False,
        *,
        record: Any = None,
        load: Callable[[], Callable[..., Any]] | None = None,
    ) -> None:
        values = {
            "_record": record, "_load": load,
            "name": name, "pipeline_name": pipeline_name, "path": Path(path),
            "function_name": function_name, "_source_fn": source_fn,
            "resources": tuple(resources), "module_stem": module_stem or Path(path).stem,
            "config": config, "import_error": import_error,
            "import_violations": tuple(import_violations), "uses_checkpoints": uses_checkpoints,
        }  # fmt: skip
        for key, value in values.items():
            object.__setattr__(self, key, value)

    def __setattr__(self, key: str, value: Any) -> None:
        raise AttributeError(f"SourceInfo is read-only (cannot set {key!r})")

    def __repr__(self) -> str:
        return f"SourceInfo(name={self.name!r}, pipeline_name={self.pipeline_name!r})"

    @property
    def config_section(self) -> str:
        """The ``[sources.<section>]`` the source reads: its name."""
        return self.name

    @property
    def is_introspected(self) -> bool:
        """Whether the record carries a live source function."""
        return self._source_fn is not None

    @property
    def source_fn(self) -> Callable[..., Any]:
        """The source function; a discovered record imports its module on first use (after
        the import-safety check, as a run does); a record built without one raises."""
        if self._source_fn is None and self._load is not None:
            object.__setattr__(self, "_source_fn", self._load())
        if self._source_fn is None:
            raise RuntimeError(
                f"SourceInfo {self.name!r} has no source_fn: it was built without one "
                "(discovery here is static and imports no source module)"
            )
        return self._source_fn

    def __getattr__(self, name: str) -> Any:
        """This version's other fields of a discovered record (``lineno``, ``params``...)."""
        record = self.__dict__.get("_record")
        if record is None or name.startswith("_"):
            raise AttributeError(f"SourceInfo has no attribute {name!r}")
        return getattr(record, name)

    # this version's names, so code written for either reads both
    @property
    def pipeline(self) -> str:
        return self.pipeline_name

    @property
    def module_path(self) -> Path:
        return self.path

    @property
    def static_resources(self) -> tuple[str, ...]:
        return self.resources
