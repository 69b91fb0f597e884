"""The assertion gate in-process, without a run: the step keeps and drops rows of every shape
dlt hands it, and ``after_extract`` on a real dlt pipeline drops its package on a failure,
names every failed assertion, writes quarantined rows and reports them."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest
from structlog.testing import capture_logs

from dlt_ops.adapters import ConnectionTarget, DestinationSession, Statement
from dlt_ops.assertions.engine import ResourceEngine
from dlt_ops.assertions.gate import AssertionGate, AssertionStep, _as_row, build_engines
from dlt_ops.assertions.model import parse_assertions
from dlt_ops.config import ProjectConfig, load_project_config
from dlt_ops.errors import AssertionConfigError, AssertionFailedError
from dlt_ops.plugins import PluginRegistry
from dlt_ops.runner.model import RunContext
from dlt_ops.target import Target, Tier

QUARANTINE_MISSING_KIND = {"required_columns": {"value": ["kind"], "on_failure": "quarantine"}}
QUARANTINE_REPEATED_ID = {"unique_columns": {"value": ["id"], "on_failure": "quarantine"}}


@pytest.fixture(scope="module")
def registry() -> PluginRegistry:
    return PluginRegistry()


@pytest.fixture
def config(tmp_path: Path) -> ProjectConfig:
    (tmp_path / ".dlt").mkdir()
    (tmp_path / ".dlt" / "config.toml").write_text(
        '[dlt_ops]\ndefault_destination = "duckdb"\ndefault_dataset = "ds"\n'
    )
    return load_project_config(tmp_path)


def _engines(
    config: ProjectConfig, registry: PluginRegistry, **resources: dict[str, Any]
) -> dict[str, ResourceEngine]:
    parsed = parse_assertions(resources, "src")
    return build_engines(config, registry, parsed, dict.fromkeys(resources, object()))


def test_rows_of_every_shape_are_judged_as_rows() -> None:
    import pydantic

    class Event(pydantic.BaseModel):
        id: int

    row = {"id": 1}
    assert _as_row(row) is row
    proxy = MappingProxyType({"id": 2})
    assert _as_row(proxy) is proxy  # any Mapping, not only a dict
    assert _as_row(Event(id=3)) == {"id": 3}  # a Pydantic model that reached the gate
    assert _as_row(7) == {"value": 7}  # a bare value, as dlt names its column


def test_the_step_keeps_good_rows_and_drops_quarantined_ones(
    config: ProjectConfig, registry: PluginRegistry
) -> None:
    import pydantic

    class Event(pydantic.BaseModel):
        id: int
        kind: str

    engine = _engines(config, registry, events=QUARANTINE_MISSING_KIND)["events"]
    step = AssertionStep(engine)
    assert step([{"id": 1, "kind": "a"}, {"id": 2}]) == [{"id": 1, "kind": "a"}]
    assert step([{"id": 3}]) is None  # nothing left of the page: no empty item downstream
    assert step([]) == []  # an empty page stays what it was
    assert step({"id": 4}) is None
    assert step({"id": 5, "kind": "b"}) == {"id": 5, "kind": "b"}
    assert step(MappingProxyType({"id": 6})) is None
    kept = Event(id=7, kind="c")
    assert step(kept) is kept  # a model is judged by its fields
    assert engine.records_in == 7 and engine.rejected_rows == 4
    assert [r.row_json for r in engine.buffer] == [
        '{"id": 2}', '{"id": 3}', '{"id": 4}', '{"id": 6}'
    ]  # fmt: skip


def test_the_step_filters_arrow_tables(config: ProjectConfig, registry: PluginRegistry) -> None:
    import pyarrow as pa

    engine = _engines(config, registry, events=QUARANTINE_REPEATED_ID)["events"]
    step = AssertionStep(engine)
    fresh = pa.table({"id": [1, 2]})
    assert step(fresh) is fresh  # every row kept: the same table, not a copy
    mixed = step(pa.table({"id": [3, 1, 4]}))
    assert mixed.to_pylist() == [{"id": 3}, {"id": 4}]
    assert step(pa.table({"id": [2, 3]})) is None  # every row a repeat
    assert engine.records_in == 7 and engine.rejected_rows == 3


@pytest.fixture
def session(tmp_path: Path) -> Iterator[DestinationSession]:
    from dltops_duckdb.adapter import DuckDBAdapter

    target = ConnectionTarget("duckdb", "ds", tmp_path, credentials="gate.duckdb")
    opened = DestinationSession.open(DuckDBAdapter(), target)
    yield opened
    opened.close()


def _context(
    config: ProjectConfig, registry: PluginRegistry, session: DestinationSession
) -> RunContext:
    return RunContext(
        run_id="run-1", source="src", resources=("events",), window=None, config=config,
        registry=registry, open_session=lambda: session,
        target=Target("duckdb", "ds", "src_pipeline", database="gate.duckdb", tier=Tier.FULL),
    )  # fmt: skip


def _extracted(tmp_path: Path) -> tuple[Any, str]:
    """A real dlt pipeline with one extracted, not yet normalized package."""
    import dlt

    pipeline = dlt.pipeline(
        pipeline_name="gate_unit", destination="duckdb", dataset_name="ds",
        pipelines_dir=str(tmp_path / "pipelines"),
    )  # fmt: skip
    pipeline.extract([{"id": 1}], table_name="events")
    (load_id,) = pipeline.list_extracted_load_packages()
    return pipeline, load_id


def test_a_failure_drops_the_package_and_names_every_failed_assertion(
    tmp_path: Path, config: ProjectConfig, registry: PluginRegistry, session: DestinationSession
) -> None:
    engines = _engines(
        config, registry,
        events={"required_columns": ["kind"], "unique_columns": ["id"]},
        other={"required_columns": ["kind"]},
    )  # fmt: skip
    for row in ({"id": 1}, {"id": 1, "kind": "x"}):
        engines["events"].observe(row)
    engines["other"].observe({"id": 1})
    gate = AssertionGate(_context(config, registry, session), engines)
    pipeline, load_id = _extracted(tmp_path)
    with capture_logs() as logs, pytest.raises(AssertionFailedError) as failed:
        gate.after_extract(pipeline, load_id)
    assert str(failed.value) == (
        "assertion 'required_columns' failed on src.events: missing required column(s): kind "
        "(also failed: unique_columns on events, required_columns on other)"
    )
    assert pipeline.list_extracted_load_packages() == []  # nothing of this run loads
    (summary,) = [e for e in logs if e["event"] == "assertions.summary"]
    assert summary["gate"] == "assertions"
    assert summary["failed_assertions"] == [
        "required_columns on events", "unique_columns on events", "required_columns on other"
    ]  # fmt: skip
    dropped = [e for e in logs if e["event"].startswith("Dropped this run's load package")]
    assert dropped == [{
        "event": "Dropped this run's load package after assertion failure",
        "load_id": load_id, "log_level": "info",
    }]  # fmt: skip
    verdicts = gate.summary()
    assert verdicts.failed_checks == (
        "required_columns on events", "unique_columns on events", "required_columns on other"
    )  # fmt: skip
    assert verdicts.gate == "assertions" and gate.quarantined == 0
    assert (verdicts.resources["events"].failed, verdicts.resources["other"].failed) == (2, 1)


def test_a_single_failure_names_only_itself(
    tmp_path: Path, config: ProjectConfig, registry: PluginRegistry, session: DestinationSession
) -> None:
    engines = _engines(config, registry, events={"required_columns": ["kind"]})
    engines["events"].observe({"id": 1})
    gate = AssertionGate(_context(config, registry, session), engines)
    pipeline, load_id = _extracted(tmp_path)
    with pytest.raises(AssertionFailedError) as failed:
        gate.after_extract(pipeline, load_id)
    assert str(failed.value).endswith("missing required column(s): kind")


def test_two_failures_name_the_second_one_too(
    tmp_path: Path, config: ProjectConfig, registry: PluginRegistry, session: DestinationSession
) -> None:
    engines = _engines(config, registry, events={"required_columns": ["kind"]},
                       other={"required_columns": ["kind"]})  # fmt: skip
    engines["events"].observe({"id": 1})
    engines["other"].observe({"id": 2})
    gate = AssertionGate(_context(config, registry, session), engines)
    pipeline, load_id = _extracted(tmp_path)
    with pytest.raises(AssertionFailedError) as failed:
        gate.after_extract(pipeline, load_id)
    assert str(failed.value).endswith("(also failed: required_columns on other)")


def test_a_resources_pydantic_model_declares_its_columns() -> None:
    import dlt
    import pydantic

    from dlt_ops.assertions.gate import _declared_columns

    class Typed(pydantic.BaseModel):
        id: int
        kind: str

    @dlt.resource(name="typed", columns=Typed)
    def typed():  # noqa: ANN202
        yield {"id": 1, "kind": "a"}

    @dlt.resource(name="plain")
    def plain():  # noqa: ANN202
        yield {"id": 1}

    assert _declared_columns(typed) == ("id", "kind")
    assert _declared_columns(plain) is None  # no model: nothing declared
    assert _declared_columns(object()) is None  # not a dlt resource at all


def test_quarantined_rows_count_as_rejected_once_written(
    tmp_path: Path, config: ProjectConfig, registry: PluginRegistry, session: DestinationSession
) -> None:
    engines = _engines(config, registry, events=QUARANTINE_MISSING_KIND)
    step = AssertionStep(engines["events"])
    step([{"id": 1, "kind": "a"}, {"id": 2}, {"id": 3}])
    gate = AssertionGate(_context(config, registry, session), engines)
    before = gate.summary().resources["events"]
    assert (before.rejected, gate.quarantined) == (0, 0)  # not yet in _dlt_rejected
    pipeline, load_id = _extracted(tmp_path)
    gate.after_extract(pipeline, load_id)
    assert gate.quarantined == 2
    assert gate.summary().resources["events"].rejected == 2
    assert session.query(Statement("SELECT count(*) FROM {_dlt_rejected}")) == [(2,)]
    assert pipeline.list_extracted_load_packages() == [load_id]  # the good rows still load
    assert engines["events"].buffer == []


def test_warnings_count_the_rows_they_cover(
    tmp_path: Path, config: ProjectConfig, registry: PluginRegistry, session: DestinationSession
) -> None:
    engines = _engines(
        config, registry,
        few={"min_rows_per_load": {"value": 10, "on_failure": "warn"}},  # the whole batch
        rows={"required_columns": {"value": ["kind"], "on_failure": "warn"}},  # row by row
    )  # fmt: skip
    for i in range(3):
        engines["few"].observe({"id": i})
        engines["rows"].observe({"id": i} if i else {"id": i, "kind": "a"})
    gate = AssertionGate(_context(config, registry, session), engines)
    pipeline, load_id = _extracted(tmp_path)
    with capture_logs() as logs:
        gate.after_extract(pipeline, load_id)
    assert "assertion warn summary for src.rows: required_columns=2" in [e["event"] for e in logs]
    verdicts = gate.summary().resources
    assert (verdicts["few"].warned, verdicts["few"].rejected, verdicts["few"].failed) == (3, 0, 0)
    assert (verdicts["rows"].warned, verdicts["rows"].rejected) == (2, 0)
    assert gate.summary().failed_checks == ()


def test_engines_are_built_for_the_selected_resources_only(
    config: ProjectConfig, registry: PluginRegistry
) -> None:
    parsed = parse_assertions(
        {"events": {"unique_columns": ["id"]}, "other": {"unique_columns": ["id"]}}, "src"
    )
    assert list(build_engines(config, registry, parsed, {"events": object()})) == ["events"]


def test_a_custom_predicate_resolves_from_the_project_root(
    config: ProjectConfig, registry: PluginRegistry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = f"rules_{uuid.uuid4().hex}"  # never imported before, in this process or its parent
    (config.root / f"{module}.py").write_text("def has_kind(row):\n    return 'kind' in row\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    engines = _engines(config, registry, events={"custom": [{"predicate": f"{module}:has_kind"}]})
    (entry,) = engines["events"].entries
    assert entry.predicate is not None
    assert entry.predicate({"kind": "a"}) is True and entry.predicate({}) is False


def test_an_unresolvable_predicate_is_refused_naming_the_source(
    config: ProjectConfig, registry: PluginRegistry
) -> None:
    with pytest.raises(AssertionConfigError) as refused:
        _engines(config, registry, events={"custom": [{"predicate": "no_such_module_x:f"}]})
    assert str(refused.value).startswith(
        "invalid assertion config for source 'src': [assertions.events.custom[0]] custom "
        "predicate 'no_such_module_x:f' is not resolvable: ModuleNotFoundError"
    ), refused.value
