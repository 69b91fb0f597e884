"""The files ``dlt-ops plugins new`` writes, per kind: the implementation, the hook and a test
module that subclasses the kind's kit. ``$name`` is the plugin's name, ``$pkg`` its import
package, ``$cls`` its class-name stem (``string.Template`` placeholders)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class KindTemplate:
    """What one kind's plugin consists of."""

    #: One line for the README and the pyproject description.
    summary: str
    #: ``src/$pkg/<module>.py``: the implementation (heavy imports belong here).
    module: str
    implementation: str
    #: ``src/$pkg/plugin.py``: the hook, cheap to import.
    hook: str
    #: ``tests/test_$pkg.py``.
    test: str
    #: How to switch it on in a project (README).
    usage: str


def _registering(what: str, group: str, hook: str, lazy_import: str, *calls: str) -> str:
    """``plugin.py`` of a kind whose hook registers: its docstring, the import of ``hookimpl``
    and the hook, which imports the implementation only when called and then makes
    ``calls`` (the ``register(...)`` line and what it needs)."""
    lines = "".join(f"    {call}\n" for call in calls)
    return (
        f'"""Registers {what}.\n\nEntry point group ``{group}``.\n"""\n\n'
        "from __future__ import annotations\n\nfrom dlt_ops import hookimpl\n\n\n"
        f"@hookimpl\ndef {hook}(register):  # noqa: ANN001, ANN201\n    {lazy_import}\n\n{lines}"
    )


_ALERT_SINK = KindTemplate(
    summary="an alert sink that appends each alert to a JSON-lines file",
    module="alert_sink",
    implementation='''"""The $name alert sink: each alert, redacted, as one JSON line in a file."""

from __future__ import annotations

import json
import threading

from dlt_ops.plugin_api import Alert, AlertSinkContext


class ${cls}AlertSink:
    """Appends alerts to ``path`` (option, relative to the project root)."""

    def __init__(self, context: AlertSinkContext) -> None:
        relative = str(context.options.get("path", ".dlt-ops/$name-alerts.jsonl"))
        self.path = context.project_root / relative
        self.target = str(self.path)
        self._lock = threading.Lock()

    def send(self, alert: Alert) -> None:
        """Write one line; raise when the file cannot be written (the core logs it)."""
        line = json.dumps(alert.redacted_json(), default=str)
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as out:
                out.write(line + "\\n")
''',
    hook=_registering(
        "the $name alert sink",
        "dlt_ops.alert_sink",
        "dlt_ops_register_alert_sinks",
        "from $pkg.alert_sink import ${cls}AlertSink",
        'register(${cls}AlertSink, name="$name")',
    ),
    test='''"""The $name alert sink against dlt-ops' alert-sink kit."""

from __future__ import annotations

import json

import pytest

from dlt_ops.plugin_api import AlertSinkContext
from dlt_ops.testing import AlertSinkSuite
from $pkg.alert_sink import ${cls}AlertSink


class Test${cls}AlertSink(AlertSinkSuite):
    __test__ = True

    @pytest.fixture
    def sink_factory(self):
        return ${cls}AlertSink

    @pytest.fixture
    def delivered(self, tmp_path):
        path = tmp_path / ".dlt-ops" / "$name-alerts.jsonl"

        def read():
            lines = path.read_text().splitlines() if path.exists() else []
            return [json.loads(line) for line in lines]

        return read

    @pytest.fixture
    def undeliverable_context(self, tmp_path):
        # the path is a directory: nothing can be appended to it
        return AlertSinkContext("$name", tmp_path, {"path": "."})
''',
    usage='[dlt_ops]\nalert_sinks = ["$name"]\n\n[dlt_ops.alert_sink.$name]\npath = "alerts.jsonl"',
)

_LEDGER_SINK = KindTemplate(
    summary="a runs-ledger sink that keeps each run attempt's latest state in a JSON file",
    module="ledger_sink",
    implementation='''"""The $name ledger sink: each run attempt's latest state in a JSON file."""

from __future__ import annotations

import json
import threading

from dlt_ops.ledger import RunRecord
from dlt_ops.plugin_api import LedgerSinkContext


def attempt_key(run: RunRecord) -> str:
    """An attempt is (run_id, source_section, started_at)."""
    return f"{run.run_id}|{run.source_section}|{run.started_at.isoformat()}"


class ${cls}LedgerSink:
    """Writes ``path`` (option, relative to the project root) on every call."""

    def __init__(self, context: LedgerSinkContext) -> None:
        relative = str(context.options.get("path", ".dlt-ops/$name-ledger.json"))
        self.path = context.project_root / relative
        self.target = str(self.path)
        self._lock = threading.Lock()

    def _write(self, run: RunRecord) -> None:
        with self._lock:
            runs = json.loads(self.path.read_text()) if self.path.exists() else {}
            runs[attempt_key(run)] = run.as_json()
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text(json.dumps(runs, indent=1, default=str))

    def start(self, run: RunRecord) -> None:
        self._write(run)

    def heartbeat(self, run: RunRecord) -> None:
        self._write(run)

    def finish(self, run: RunRecord) -> None:
        self._write(run)
''',
    hook=_registering(
        "the $name ledger sink",
        "dlt_ops.ledger_sink",
        "dlt_ops_register_ledger_sinks",
        "from $pkg.ledger_sink import ${cls}LedgerSink",
        'register(${cls}LedgerSink, name="$name")',
    ),
    test='''"""The $name ledger sink against dlt-ops' ledger-sink kit."""

from __future__ import annotations

import dataclasses
import json
from datetime import datetime

import pytest

from dlt_ops.ledger import RunRecord
from dlt_ops.testing import LedgerSinkSuite
from $pkg.ledger_sink import ${cls}LedgerSink

STAMPS = {f.name for f in dataclasses.fields(RunRecord) if f.name.endswith("_at")}


def decode(doc):
    values = {k: datetime.fromisoformat(v) if k in STAMPS and v else v for k, v in doc.items()}
    return RunRecord(**values)


class Test${cls}LedgerSink(LedgerSinkSuite):
    __test__ = True

    @pytest.fixture
    def sink_factory(self):
        return ${cls}LedgerSink

    @pytest.fixture
    def stored(self, sink_context):
        path = sink_context.project_root / ".dlt-ops" / "$name-ledger.json"

        def read():
            runs = json.loads(path.read_text()) if path.exists() else {}
            return [decode(doc) for doc in runs.values()]

        return read
''',
    usage='[dlt_ops]\nledger_sinks = ["destination", "$name"]',
)

_ASSERTION_RULE = KindTemplate(
    summary="an assertion type: the listed columns are never negative",
    module="assertion",
    implementation='''"""The $name assertion type: ``$name = ["amount"]`` fails rows where a
listed column is a negative number."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dlt_ops.plugin_api import AssertionContext


class ${cls}:
    """Row-scoped: each row is judged on its own (so failing rows can be quarantined)."""

    name = "$name"
    row_scoped = True

    def check_config(self, params: Mapping[str, Any], ctx: AssertionContext) -> list[str]:
        columns = params.get("value")
        if not (isinstance(columns, list) and columns and all(isinstance(c, str) for c in columns)):
            return [f'a list of column names, e.g. $name = ["amount"], got {columns!r}']
        if ctx.declared_columns is not None:
            missing = [c for c in columns if c not in ctx.declared_columns]
            if missing:
                return [f"$name names columns the model lacks: {', '.join(missing)}"]
        return []

    def start(self, params: Mapping[str, Any]) -> None:
        return None

    def observe(self, state: None, row: Mapping[str, Any], params: Mapping[str, Any]) -> str | None:
        values = {c: row.get(c) for c in params["value"]}
        negative = [c for c, v in values.items() if isinstance(v, (int, float)) and v < 0]
        return f"negative {', '.join(negative)}" if negative else None

    def finalize(self, state: None, params: Mapping[str, Any]) -> str | None:
        return None
''',
    hook=_registering(
        "the $name assertion type",
        "dlt_ops.assertion_rule",
        "dlt_ops_register_assertion_rules",
        "from $pkg.assertion import ${cls}",
        'register(${cls}, name="$name")',
    ),
    test='''"""The $name assertion type against dlt-ops' assertion-type kit."""

from __future__ import annotations

import pytest

from dlt_ops.testing import AssertionCase, AssertionTypeSuite
from $pkg.assertion import ${cls}


class Test${cls}(AssertionTypeSuite):
    __test__ = True

    @pytest.fixture
    def assertion_type(self):
        return ${cls}

    @pytest.fixture
    def valid_params(self):
        return [{"value": ["amount"]}]

    @pytest.fixture
    def invalid_params(self):
        return [{"value": []}, {"value": "amount"}]

    @pytest.fixture
    def cases(self):
        return [
            AssertionCase({"value": ["amount"]}, [{"amount": 1}, {"amount": 0}], passes=True),
            AssertionCase({"value": ["amount"]}, [{"amount": 1}, {"amount": -2}], passes=False),
        ]
''',
    usage='[sources.<source>.dlt_ops.assertions.<resource>]\n$name = ["amount"]',
)

_TRIGGER_EMITTER = KindTemplate(
    summary="a trigger emitter: `dlt-ops schedule emit --target $name` writes a shell script",
    module="emitter",
    implementation='''"""The $name trigger emitter: the project's schedules as a shell script, one
``dlt-ops pipeline run`` per scheduled source, for a scheduler that runs scripts."""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from dlt_ops.plugin_api import ScheduledSource


class ${cls}Target:
    """A ``schedule emit`` target (a ``ScheduleTarget``) and a named origin of runs."""

    description = "run started by a script written by `dlt-ops schedule emit --target $name`"
    default_path = "dlt-ops-$name.sh"

    def render(
        self,
        sources: Sequence[ScheduledSource],
        *,
        root: str,
        trigger_source: str,
        cli: str = "dlt-ops",
        packages: Sequence[str] = (),
    ) -> str:
        lines = ["#!/bin/sh", "# dlt-ops schedules (dlt-ops schedule emit --target $name)"]
        for s in sources:
            lines.append(f"# {s.name}: {s.schedule} ({s.cron}, {s.timezone})")
            lines.append(
                f"{shlex.quote(cli)} --root {shlex.quote(root)} pipeline run "
                f"-s {shlex.quote(s.name)} -y --trigger-source {trigger_source}"
            )
        return "\\n".join(lines) + "\\n"
''',
    hook=_registering(
        "the $name trigger emitter",
        "dlt_ops.trigger_emitter",
        "dlt_ops_register_trigger_emitters",
        "from $pkg.emitter import ${cls}Target",
        'register(${cls}Target(), name="$name")',
    ),
    test='''"""The $name trigger emitter against dlt-ops' trigger-emitter kit."""

from __future__ import annotations

import pytest

from dlt_ops.testing import TriggerEmitterSuite
from $pkg.emitter import ${cls}Target


class Test${cls}Target(TriggerEmitterSuite):
    __test__ = True

    @pytest.fixture
    def emitter(self):
        return ${cls}Target()

    @pytest.fixture
    def name(self):
        return "$name"
''',
    usage="dlt-ops schedule emit --target $name",
)

_VALIDATION_RULE = KindTemplate(
    summary="a validate rule: every source module starts with a docstring",
    module="rules",
    implementation='''"""The ${name}_module_docstring rule: a source module says what it loads."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from dlt_ops.plugin_api import Finding, ValidationContext


class ${cls}ModuleDocstring:
    """A ``ValidationRule``: one finding per source whose module has no docstring."""

    id = "${name}_module_docstring"
    description = "Every source module starts with a docstring saying what it loads."
    default_on = True

    def check(self, ctx: ValidationContext) -> Iterator[Finding]:
        for source in ctx.sources():
            tree = ast.parse(source.module_path.read_text(encoding="utf-8"))
            if not ast.get_docstring(tree):
                yield Finding(source.name, "module",
                              f"{ctx.rel(source.module_path)} has no docstring: say what it loads")
''',
    hook=_registering(
        "the $name validate rules",
        "dlt_ops.validation_rule",
        "dlt_ops_register_validation_rules",
        "from $pkg.rules import ${cls}ModuleDocstring",
        "rule = ${cls}ModuleDocstring()",
        "register(rule, name=rule.id)",
    ),
    test='''"""The $name rule against dlt-ops' validation-rule kit."""

from __future__ import annotations

import pytest

from dlt_ops.testing import ValidationRuleSuite, write_project
from $pkg.rules import ${cls}ModuleDocstring

SOURCE = """
import dlt


@dlt.resource(name="rows")
def rows():
    yield {"id": 1}


@dlt.source(name="feed")
def feed_source():
    return rows
"""
CONFIG = '[sources.feed.dlt_ops]\\nschedule = "@daily"\\n'


class Test${cls}ModuleDocstring(ValidationRuleSuite):
    __test__ = True

    @pytest.fixture
    def rule(self):
        return ${cls}ModuleDocstring()

    @pytest.fixture
    def clean_project(self, tmp_path):
        text = '"""Rows from the feed API."""\\n' + SOURCE
        return write_project(tmp_path / "ok", {"p/source/feed.py": text}, CONFIG)

    @pytest.fixture
    def flagged_project(self, tmp_path):
        return write_project(tmp_path / "bad", {"p/source/feed.py": SOURCE}, CONFIG)
''',
    usage="[dlt_ops.rules]\n${name}_module_docstring = true  # on by default; false turns it off",
)

_SECRET_BACKEND = KindTemplate(
    summary="a secret backend: a source's secrets from .dlt/$name.json",
    module="backend",
    implementation='''"""The $name secret backend: secrets from ``<root>/.dlt/$name.json``
(``{"<source>": {"api_key": "..."}}``) for the sources listed in ``DLTOPS_${upper}_SOURCES``
(comma-separated)."""

from __future__ import annotations

import json
import os

from dlt_ops.config import ProjectConfig, SourceConfig
from dlt_ops.redact import remember_secret

ENV = "DLTOPS_${upper}_SOURCES"


def _secrets(config: ProjectConfig) -> dict:
    path = config.root / ".dlt" / "$name.json"
    return json.loads(path.read_text(encoding="utf-8"))


class ${cls}Backend:
    """A ``SecretBackend``."""

    name = "$name"

    def claims(self, source: SourceConfig) -> bool:
        return source.name in os.environ.get(ENV, "").split(",")

    def check(self, config: ProjectConfig, source: str) -> list[str]:
        try:
            found = _secrets(config)
        except (OSError, ValueError) as exc:
            return [f".dlt/$name.json cannot be read: {type(exc).__name__}"]
        if not isinstance(found.get(source), dict):
            return [f".dlt/$name.json has no object for '{source}'"]
        return []

    def prepare(self, config: ProjectConfig, source: str) -> None:
        for key, value in _secrets(config)[source].items():
            remember_secret(str(value))  # masked in every output from now on
            os.environ[f"SOURCES__{source.upper()}__{key.upper()}"] = str(value)
''',
    hook=_registering(
        "the $name secret backend",
        "dlt_ops.secret_backend",
        "dlt_ops_register_secret_backends",
        "from $pkg.backend import ${cls}Backend",
        'register(${cls}Backend(), name="$name")',
    ),
    test='''"""The $name secret backend against dlt-ops' secret-backend kit."""

from __future__ import annotations

import json

import pytest

from dlt_ops.testing import SecretBackendSuite, write_project
from dlt_ops.testing.secret_backends import KIT_SOURCE, SOURCE
from $pkg.backend import ENV, ${cls}Backend

KEY = "kit-$name-key-0f3a"


class Test${cls}Backend(SecretBackendSuite):
    __test__ = True

    @pytest.fixture
    def backend(self):
        return ${cls}Backend()

    @pytest.fixture
    def served_project(self, tmp_path, monkeypatch):
        monkeypatch.setenv(ENV, SOURCE)
        secrets = json.dumps({SOURCE: {"api_key": KEY}})
        files = {"p/source/kit_src.py": KIT_SOURCE, ".dlt/$name.json": secrets}
        return write_project(tmp_path / "served", files)

    @pytest.fixture
    def provided(self):
        return {f"sources.{SOURCE}.api_key": KEY}

    @pytest.fixture
    def unservable_project(self, tmp_path):
        return write_project(tmp_path / "unservable", {"p/source/kit_src.py": KIT_SOURCE})
''',
    usage="DLTOPS_${upper}_SOURCES=feed dlt-ops pipeline run -s feed -y  # .dlt/$name.json",
)

_LIFECYCLE = KindTemplate(
    summary="a lifecycle observer: one JSON line per finished run",
    module="observer",
    implementation='''"""The $name observer: a JSON line per finished run.

The lines go to ``.dlt-ops/$name-runs.jsonl`` in the project.
"""

from __future__ import annotations

import json
import threading
from typing import Any

_LOCK = threading.Lock()


def record_finished(run: Any, outcome: Any) -> None:
    """Append the run's id, source, status and phase (backfill chunks may finish on threads)."""
    path = run.config.root / ".dlt-ops" / "$name-runs.jsonl"
    status = outcome.record.status
    line = json.dumps({"run_id": run.run_id, "source": run.source, "status": status})
    with _LOCK:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as out:
            out.write(line + "\\n")
''',
    hook='''"""The $name lifecycle hooks.

Entry point group ``dlt_ops.lifecycle``.
"""

from __future__ import annotations

from dlt_ops import hookimpl


@hookimpl
def dlt_ops_run_finished(run, outcome):  # noqa: ANN001, ANN201
    from $pkg.observer import record_finished

    record_finished(run, outcome)
''',
    test='''"""The $name observer against dlt-ops' lifecycle-observer kit."""

from __future__ import annotations

import json

import pytest

import $pkg.plugin
from dlt_ops.testing import LifecycleObserverSuite


class Test${cls}Observer(LifecycleObserverSuite):
    __test__ = True

    @pytest.fixture
    def plugin(self):
        return $pkg.plugin

    @pytest.fixture
    def observed(self, kit_project):
        path = kit_project / ".dlt-ops" / "$name-runs.jsonl"

        def read():
            lines = path.read_text().splitlines() if path.exists() else []
            return [json.loads(line)["run_id"] for line in lines]

        return read
''',
    usage="(nothing to configure: installed, it observes every run)",
)

_COMMAND = KindTemplate(
    summary="a command: `dlt-ops $name` counts the project's sources",
    module="command",
    implementation='''"""``dlt-ops $name``."""

from __future__ import annotations

from typing import Annotated

import typer

from dlt_ops.cli.state import RootOption


def $func(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on stdout.")] = False,
    root: RootOption = None,
) -> None:
    """Count the project's configured sources."""
    import json

    config = ctx.obj.with_root(root).project()
    names = sorted(config.sources)
    if as_json:
        typer.echo(json.dumps({"sources": names}))
    else:
        typer.echo(f"{len(names)} source(s): {', '.join(names) or '-'}")
''',
    hook=_registering(
        "``dlt-ops $name``",
        "dlt_ops.command",
        "dlt_ops_register_commands",
        "from $pkg.command import $func",
        'register($func, name="$name")',
    ),
    test='''"""``dlt-ops $name``, run through dlt-ops itself (the installed entry point)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from dlt_ops.testing import write_project

CLI = "import sys; sys.argv = ['dlt-ops', *sys.argv[1:]]; from dlt_ops.cli import main; main()"


def dlt_ops(*args, cwd):
    env = {**os.environ, "RUNTIME__DLTHUB_TELEMETRY": "false"}
    return subprocess.run(
        [sys.executable, "-c", CLI, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_help_lists_the_command(tmp_path):
    shown = dlt_ops("--help", cwd=tmp_path)
    assert shown.returncode == 0 and "$name" in shown.stdout


def test_the_command_runs_in_a_project(tmp_path):
    root = write_project(tmp_path / "p", {}, '[sources.feed.dlt_ops]\\nschedule = "@daily"\\n')
    ran = dlt_ops("$name", "--json", cwd=root)
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout) == {"sources": ["feed"]}
''',
    usage="dlt-ops $name [--json]",
)

_CONFIG_KEY = KindTemplate(
    summary="a config key: `$name` under [sources.<X>.dlt_ops], a team name",
    module="keys",
    implementation='''"""The ``$name`` key: ``[sources.<X>.dlt_ops] $name = "<team>"``."""

from __future__ import annotations

from dlt_ops.plugin_api import ConfigKey

KEY = ConfigKey(
    "$name",
    scope="source",
    expected="a team name (a non-empty string)",
    check=lambda value: isinstance(value, str) and bool(value.strip()),
    doc="who answers for the source",
)
''',
    hook='''"""Declares the ``$name`` config key (entry point group ``dlt_ops.config_key``)."""

from __future__ import annotations

from dlt_ops import hookimpl


@hookimpl
def dlt_ops_register_config_keys(register):  # noqa: ANN001, ANN201
    from $pkg.keys import KEY

    register(KEY, name="$name")
''',
    test='''"""The ``$name`` key as ``dlt-ops pipeline validate`` sees it (installed)."""

from __future__ import annotations

import os
import subprocess
import sys

from dlt_ops.testing import write_project

CLI = "import sys; sys.argv = ['dlt-ops', *sys.argv[1:]]; from dlt_ops.cli import main; main()"
SOURCE = """
import dlt


@dlt.resource(name="rows")
def rows():
    yield {"id": 1}


@dlt.source(name="feed")
def feed_source():
    return rows
"""


def validate(tmp_path, line):
    config = f'[sources.feed.dlt_ops]\\nschedule = "@daily"\\n{line}\\n'
    root = write_project(tmp_path / "p", {"p/source/feed.py": SOURCE}, config)
    env = {**os.environ, "RUNTIME__DLTHUB_TELEMETRY": "false"}
    return subprocess.run(
        [sys.executable, "-c", CLI, "pipeline", "validate"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_key_is_known(tmp_path):
    done = validate(tmp_path, '$name = "data-platform"')
    assert "unknown key" not in done.stdout + done.stderr, done.stdout + done.stderr
    assert "$name" not in done.stdout + done.stderr


def test_a_wrong_value_is_refused_quoting_what_is_expected(tmp_path):
    done = validate(tmp_path, "$name = 7")
    assert done.returncode != 0
    assert "a team name (a non-empty string)" in done.stdout + done.stderr
''',
    usage='[sources.<source>.dlt_ops]\n$name = "data-platform"',
)

_DESTINATION = KindTemplate(
    summary="a destination adapter on SQLite (sqlite3), a dataset as a table-name prefix",
    module="adapter",
    implementation='''"""The $name destination adapter: one SQLite file, a dataset as a prefix.

SQLite has no schemas and no ``information_schema``, so the adapter overrides what
``SqlAdapterBase`` assumes there: ``table_ref`` (``"<dataset>__<table>"`` instead of a
schema-qualified name) and ``fetch_columns`` (``PRAGMA table_info``). Timestamps travel as
fixed-width UTC text, so text comparison orders instants.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from dlt_ops.adapters import Capabilities, ColumnInfo, ColumnType, ConnectionTarget, SqlAdapterBase

_UTC_TEXT = "%Y-%m-%d %H:%M:%S.%f+00:00"
_UTC_TEXT_RE = re.compile(r"\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d\\.\\d{6}\\+00:00")


def database_path(target: ConnectionTarget) -> Path:
    """``credentials`` as a path (relative to the project root), else ``$name.sqlite``."""
    path = Path(str(target.credentials)) if target.credentials else Path("$name.sqlite")
    return path if path.is_absolute() else target.project_root / path


class ${cls}Adapter(SqlAdapterBase):
    """SQLite through the standard library's sqlite3."""

    name = "$name"
    capabilities = Capabilities(create_schema=False, max_identifier_length=60)
    type_names = {**SqlAdapterBase.type_names, ColumnType.TIMESTAMPTZ: "TEXT"}
    project_files = ("*.sqlite",)

    def _open(self, target: ConnectionTarget) -> Any:
        path = database_path(target)
        if target.read_only and not path.exists():
            return sqlite3.connect(":memory:", check_same_thread=False)  # never create it
        # any thread may call (the run's heartbeat), autocommit outside transaction()
        return sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=60)

    def _run(self, client: Any, sql: str, params: Sequence[Any], *, fetch: bool) -> Any:
        cursor = client.execute(sql, tuple(_bind(p) for p in params))
        if fetch:
            return [tuple(_read(v) for v in row) for row in cursor.fetchall()]
        return cursor.rowcount

    def _close(self, client: Any) -> None:
        client.close()

    def _begin(self, client: Any) -> None:
        self._run(client, "BEGIN IMMEDIATE", (), fetch=False)  # take the write lock up front

    def table_ref(self, dataset: str, table: str) -> str:
        self.quote_identifier(dataset), self.quote_identifier(table)
        return self.quote_identifier(f"{dataset}__{table}")

    def fetch_columns(self, client: Any, dataset: str, table: str) -> list[ColumnInfo] | None:
        sql = f"PRAGMA table_info({self.table_ref(dataset, table)})"
        rows = self._run(client, sql, (), fetch=True)
        return [ColumnInfo(str(r[1]), str(r[2])) for r in rows] or None

    def create_index_sql(self, dataset: str, spec: Any) -> list[str]:
        return []  # no indexes: index names would need the same prefixing as tables

    def dlt_destination(self, target: ConnectionTarget) -> Any:
        """dlt loads the same file through its sqlalchemy destination (``dlt[sqlalchemy]``)."""
        import dlt

        return dlt.destinations.sqlalchemy(credentials=f"sqlite:///{database_path(target)}")


def _bind(value: Any) -> Any:
    if isinstance(value, datetime) and value.tzinfo is not None:
        return value.astimezone(UTC).strftime(_UTC_TEXT)
    return value


def _read(value: Any) -> Any:
    if isinstance(value, str) and _UTC_TEXT_RE.fullmatch(value):
        return datetime.strptime(value[:-6], _UTC_TEXT[:-6]).replace(tzinfo=UTC)
    return value
''',
    hook='''"""Registers the $name adapter (entry point group ``dlt_ops.destination``).

The entry point's name is the engine's name; driver imports stay in the adapter module.
"""

from __future__ import annotations

from dlt_ops import hookimpl


@hookimpl
def dlt_ops_register_destinations(register):  # noqa: ANN001, ANN201
    from $pkg.adapter import ${cls}Adapter

    register(${cls}Adapter, name="$name")
''',
    test='''"""The $name adapter against dlt-ops' destination-adapter kit."""

from __future__ import annotations

import dataclasses

import pytest

from dlt_ops.adapters import ConnectionTarget
from dlt_ops.testing import DestinationAdapterSuite
from $pkg.adapter import ${cls}Adapter


class Test${cls}Adapter(DestinationAdapterSuite):
    __test__ = True

    @pytest.fixture
    def adapter(self):
        return ${cls}Adapter()

    @pytest.fixture
    def target(self, dataset, tmp_path):
        return ConnectionTarget("$name", dataset, tmp_path, credentials="kit.sqlite")

    @pytest.fixture
    def absent_target(self, target, tmp_path):
        root = tmp_path / "absent"
        root.mkdir()
        return dataclasses.replace(target, project_root=root, read_only=True)
''',
    usage='[sources.<source>.dlt_ops]\ndestination = "$name"',
)

#: Every kind ``plugins new`` scaffolds.
TEMPLATES: dict[str, KindTemplate] = {
    "destination": _DESTINATION,
    "ledger_sink": _LEDGER_SINK,
    "assertion_rule": _ASSERTION_RULE,
    "trigger_emitter": _TRIGGER_EMITTER,
    "validation_rule": _VALIDATION_RULE,
    "secret_backend": _SECRET_BACKEND,
    "alert_sink": _ALERT_SINK,
    "command": _COMMAND,
    "config_key": _CONFIG_KEY,
    "lifecycle": _LIFECYCLE,
}
