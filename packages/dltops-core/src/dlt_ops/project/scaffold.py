"""``dlt-ops init``: scaffold a project that validates and runs out of the box.

Templates are package data (``dlt_ops/project/templates``) so tests and docs render the same
canonical example instead of copying it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from dlt_ops.config.root import CONFIG_RELPATH
from dlt_ops.errors import DltOpsError, ProjectExistsError, UsageError
from dlt_ops.log import get_logger
from dlt_ops.project.model import RESOURCE_DIR, SOURCE_DIR

if TYPE_CHECKING:
    from dlt_ops.plugins import PluginRegistry

log = get_logger(__name__)

DEFAULT_PIPELINE_NAME = "my_pipeline"
EXAMPLE_SOURCE = "demo_events"
EXAMPLE_RESOURCE = "events"
EXAMPLE_DATASET = "demo_data"
EXAMPLE_ROW_COUNT = 6
#: Always kept out of git; the starter engine's own files (``project_files``) are added.
GITIGNORE_LINES = (".dlt-ops/", ".dlt/secrets.toml")
#: A new project's destination when no installed adapter keeps its database in the project:
#: dlt's local filesystem destination (it runs at core tier; set a bucket_url to use it).
FALLBACK_DESTINATION = "filesystem"
#: Placeholders in the templates, filled from the starter engine.
_DESTINATION_MARK = "@starter_destination@"
_FILES_MARK = "@starter_files@\n"


@dataclass(frozen=True)
class Starter:
    """Where a new project starts: a destination and the files its engine keeps in the project."""

    destination: str
    files: tuple[str, ...] = ()
    #: No dlt-ops adapter is installed for it: runs and assertions work, adapter-gated
    #: features refuse (docs/destinations.md, "Three tiers").
    core_tier: bool = False


def starter_destination(
    registry: PluginRegistry | None = None, destination: str | None = None
) -> Starter:
    """The new project's destination: ``destination`` when given (``init --destination``),
    with its adapter's ``project_files`` when one is installed; else the first installed
    adapter (by name) whose engine keeps its database in the project, so the new project runs
    with neither a server nor credentials; else the fallback."""
    from dlt_ops.destinations import instantiate_adapter
    from dlt_ops.plugins import PluginRegistry

    registry = PluginRegistry() if registry is None else registry
    if destination is not None:
        return _chosen_starter(registry, check_destination_name(destination))
    for name in registry.names("destination"):
        try:
            adapter = instantiate_adapter(name, registry.get("destination", name))
        except DltOpsError as exc:  # a broken plugin is doctor's business, not init's
            log.debug("init.adapter_skipped", destination=name, error=str(exc)[:200])
            continue
        if adapter.project_files:
            return Starter(name, adapter.project_files)
    return Starter(FALLBACK_DESTINATION)


def check_destination_name(name: str) -> str:
    """``--destination`` names an engine the way dlt does: a lower-case identifier."""
    if not name.isidentifier() or name != name.lower():
        raise UsageError(
            f"--destination {name!r} is not a destination name: use dlt's name for the engine "
            f"(lower-case letters, digits and underscores; `dlt-ops plugins list` shows the "
            f"installed adapters)."
        )
    return name


def _chosen_starter(registry: PluginRegistry, name: str) -> Starter:
    """``--destination NAME``: an installed adapter's files, or core tier (no adapter)."""
    from dlt_ops.destinations import instantiate_adapter

    if name not in registry.names("destination"):
        log.debug("init.core_tier", destination=name)
        return Starter(name, core_tier=True)
    # a broken adapter is an error here: the user asked for this one by name
    adapter = instantiate_adapter(name, registry.get("destination", name))
    return Starter(name, adapter.project_files)


@dataclass(frozen=True)
class DltSourceKind:
    """A project built around one of dlt's own sources (``init --source``)."""

    kind: str  # dlt's name: sql_database | rest_api | filesystem
    source: str  # the dlt-ops source name = module stem = config section
    fill_in: str  # what the user must fill in before the first run
    install: str  # the extra packages dlt needs for it

    @property
    def module(self) -> str:
        """The module template."""
        return f"{self.kind}_source.py.tmpl"


DLT_SOURCE_KINDS = {
    k.kind: k
    for k in (
        DltSourceKind(
            "sql_database", "database",
            "credentials in .dlt/secrets.toml, schema, tables and cursor in .dlt/config.toml",
            'pip install "dlt[sql_database]" and your database driver (e.g. psycopg2-binary)',
        ),
        DltSourceKind(
            "rest_api", "api",
            "base_url in .dlt/config.toml, token in .dlt/secrets.toml, and the endpoint",
            "nothing: rest_api ships with dlt",
        ),
        DltSourceKind(
            "filesystem", "files",
            "bucket_url in .dlt/config.toml (a folder, or a bucket plus its credentials)",
            'pip install "dlt[filesystem]" pandas (plus s3fs/gcsfs for a cloud bucket)',
        ),
    )
}  # fmt: skip


def dlt_source_kind(kind: str) -> DltSourceKind:
    """The ``--source`` choice called ``kind`` (a usage error for anything else)."""
    try:
        return DLT_SOURCE_KINDS[kind]
    except KeyError:
        raise UsageError(
            f"--source {kind!r} is not one of dlt's sources dlt-ops scaffolds: "
            f"{', '.join(DLT_SOURCE_KINDS)}."
        ) from None


def template(name: str) -> str:
    """The text of one packaged template."""
    return resources.files("dlt_ops.project").joinpath("templates", name).read_text("utf-8")


def check_pipeline_name(name: str) -> str:
    """A pipeline directory name must be an identifier not starting with ``_``."""
    if not name.isidentifier() or name.startswith("_"):
        raise UsageError(
            f"--pipeline {name!r} is not a valid pipeline name: use letters, digits and "
            f"underscores, starting with a letter (e.g. {DEFAULT_PIPELINE_NAME})."
        )
    return name


@dataclass
class InitResult:
    """What ``init`` created, relative to the project root."""

    root: Path
    created: list[str] = field(default_factory=list)
    example: bool = False
    dlt_source: DltSourceKind | None = None
    starter: Starter | None = None


def _write(root: Path, rel: str, text: str, result: InitResult) -> None:
    path = root / rel
    if path.exists():  # never overwrite a user's file
        log.info("init.kept_existing", path=rel)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    result.created.append(rel)


def _gitignore(root: Path, result: InitResult, starter: Starter) -> None:
    path = root / ".gitignore"
    if not path.exists():
        files = "".join(f"{pattern}\n" for pattern in starter.files)
        _write(root, ".gitignore", template("gitignore.tmpl").replace(_FILES_MARK, files), result)
        return
    present = set(path.read_text(encoding="utf-8").splitlines())
    missing = [line for line in (*GITIGNORE_LINES, *starter.files) if line not in present]
    if missing:
        with path.open("a", encoding="utf-8") as fh:
            fh.write("\n# dlt-ops\n" + "\n".join(missing) + "\n")
        result.created.append(".gitignore (appended)")


@dataclass(frozen=True)
class SqlOptions:
    """``init --source sql_database``'s choices: the schema (``None``: the database's default),
    the tables (``()``: the placeholder ``orders``; ``("*",)``: every table) and the backend."""

    schema: str | None = None
    tables: tuple[str, ...] = ()
    backend: str = "sqlalchemy"

    def __post_init__(self) -> None:
        if self.backend not in SQL_BACKENDS:
            raise UsageError(
                f"--backend {self.backend!r} is not one of sql_database's backends: "
                f"{', '.join(SQL_BACKENDS)}."
            )
        if "*" in self.tables and len(self.tables) > 1:
            raise UsageError("--table '*' means every table: give it alone, or name tables.")

    def render(self, text: str) -> str:
        """The config template with these choices filled in."""
        schema = (
            f"schema = {_toml_str(self.schema)}  # the schema whose tables are loaded"
            if self.schema is not None
            else '# schema = "public"  # the schema to load (default: the database\'s default)'
        )
        if self.tables == ("*",):
            tables = "tables = []  # empty: every table of the schema (a new table is picked up)"
        else:
            listed = ", ".join(_toml_str(t) for t in self.tables or ("orders",))
            tables = f"tables = [{listed}]  # the tables to load; [] for every table of the schema"
        return (
            text.replace("@schema_line@", schema)
            .replace("@tables_line@", tables)
            .replace("@backend@", self.backend)
        )


#: sql_database's ``backend`` values.
SQL_BACKENDS = ("sqlalchemy", "pyarrow", "pandas", "connectorx")


def _toml_str(value: str) -> str:
    import json

    return json.dumps(value)  # a JSON string is a valid TOML basic string


def init_project(
    root: Path,
    pipeline: str = DEFAULT_PIPELINE_NAME,
    *,
    example: bool = False,
    source: str | None = None,
    sql: SqlOptions | None = None,
    destination: str | None = None,
    registry: PluginRegistry | None = None,
) -> InitResult:
    """Scaffold a project at ``root``; refuses when ``.dlt/config.toml`` already exists.

    ``source`` (``sql_database``, ``rest_api``, ``filesystem``) builds the project around that
    dlt source: a source module, its config and secrets placeholders. It validates as written
    and runs once the placeholders are filled in. ``sql`` carries ``--schema``, ``--table``
    and ``--backend`` (``sql_database`` only). ``destination`` is ``--destination``: the
    engine ``default_destination`` names (default: see :func:`starter_destination`), looked
    up in ``registry`` (default: the installed plugins)."""
    check_pipeline_name(pipeline)
    if destination is not None:
        check_destination_name(destination)
    kind = dlt_source_kind(source) if source is not None else None
    if kind is not None and example:
        raise UsageError("--example and --source scaffold different projects: pick one.")
    if sql is not None and (kind is None or kind.kind != "sql_database"):
        raise UsageError("--schema, --table and --backend go with --source sql_database.")
    root = root.expanduser().resolve()
    if root.exists() and not root.is_dir():
        raise UsageError(f"{root} exists and is not a directory.")
    config = root / CONFIG_RELPATH
    if config.exists():
        raise ProjectExistsError(
            f"{config} already exists; refusing to overwrite it. There is no --force: remove "
            f"the file yourself to re-initialize, or run init in another directory."
        )
    starter = starter_destination(registry, destination)
    result = InitResult(root=root, example=example, dlt_source=kind, starter=starter)
    text = template("config.toml.tmpl").replace(_DESTINATION_MARK, starter.destination)
    secrets = template("secrets.toml.tmpl")
    if destination is not None:  # show the chosen engine's credentials table, commented
        secrets = secrets.replace("[destination.<engine>.credentials]",
                                  f"[destination.{starter.destination}.credentials]")  # fmt: skip
    if example:
        text += template("config_example.toml.tmpl")
    if kind is not None:
        extra = template(f"config_{kind.kind}.toml.tmpl")
        text += (sql or SqlOptions()).render(extra) if kind.kind == "sql_database" else extra
        secrets += template(f"secrets_{kind.kind}.toml.tmpl")
    _write(root, str(CONFIG_RELPATH), text, result)
    _write(root, ".dlt/secrets.toml", secrets, result)
    _gitignore(root, result, starter)
    for sub in (SOURCE_DIR, RESOURCE_DIR):
        (root / pipeline / sub).mkdir(parents=True, exist_ok=True)
        if not example and not (kind is not None and sub == SOURCE_DIR):
            _write(root, f"{pipeline}/{sub}/.gitkeep", "", result)
    if kind is not None:
        _write(root, f"{pipeline}/{SOURCE_DIR}/{kind.source}.py", template(kind.module), result)
        if kind.kind == "filesystem":
            _write(root, "data/.gitkeep", "", result)  # the bucket_url the config names
    if example:
        _write(
            root,
            f"{pipeline}/{SOURCE_DIR}/{EXAMPLE_SOURCE}.py",
            template("demo_events_source.py.tmpl"),
            result,
        )
        _write(
            root,
            f"{pipeline}/{RESOURCE_DIR}/{EXAMPLE_RESOURCE}.py",
            template("events_resource.py.tmpl"),
            result,
        )
    log.debug("init.done", root=str(root), created=result.created)
    return result
