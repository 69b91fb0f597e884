"""Hook specifications for dlt-ops plugins.

Implement hooks with ``@dlt_ops.hookimpl`` in a module and point an entry point at that module:

.. code-block:: toml

    [project.entry-points."dlt_ops.destination"]
    duckdb = "dltops_duckdb.plugin"

The entry-point *group* names the plugin kind (``dlt_ops.destination``, ``dlt_ops.ledger_sink``,
``dlt_ops.assertion_rule``, ``dlt_ops.trigger_emitter``); the entry-point *name* is the name the
plugin registers under that kind. Built-in plugins are registered the same way, from
``dltops-core``'s own entry points; nothing is privileged.

Every hook here is a *registration* (collector) hook: it receives a ``register`` callback, calls it
once per thing it provides, and returns ``None``. Registration hooks are called lazily: a plugin
module is imported, and its registration hook called, only when its kind and name are first
needed (``dlt-ops --help`` imports no plugin). Implementations accept only the arguments they
use; pluggy passes the subset named in the signature.

Registration must be cheap: import heavy dependencies (database drivers, SDKs) inside the
registered factory, never at module import time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from dlt_ops.plugins import Register

hookspec = pluggy.HookspecMarker("dlt_ops")


@hookspec
def dlt_ops_register_destinations(register: Register) -> None:
    """Register destination adapters.

    Called once per plugin of kind ``destination`` when the plugin is first loaded (not
    ``firstresult``: every implementation is called, each from its own plugin).

    Call ``register(factory, name="<engine>")`` for each adapter, where ``name`` is dlt's engine
    name for the destination (``duckdb``, ``postgres``, ``bigquery``, ...) and ``factory`` is a
    zero-argument callable, usually the adapter class, returning an object that satisfies
    :class:`dlt_ops.adapters.DestinationAdapter`. The factory is called only when a command
    actually needs the destination, so the driver import belongs inside the adapter's
    ``connect``. Registering a name another plugin already registered raises
    :class:`dlt_ops.errors.PluginConflictError` when that name is looked up, unless
    ``[dlt_ops.plugins.destination]`` in the project config picks a winner.

    Returns ``None``; the return value is ignored.
    """


@hookspec
def dlt_ops_register_ledger_sinks(register: Register) -> None:
    """Register runs-ledger sinks.

    Called once per plugin of kind ``ledger_sink`` when the plugin is first loaded (not
    ``firstresult``).

    Call ``register(factory, name="<sink>")`` for each sink. ``name`` is what users list in
    ``[dlt_ops] ledger_sinks``; ``factory`` is called once per run (or per ``status`` read) with
    a :class:`dlt_ops.ledger.LedgerSinkContext` (the sink's options from
    ``[dlt_ops.ledger_sink.<name>]``, the project root, the run's destination and dataset, and a
    lazily opened destination session) and returns a :class:`dlt_ops.ledger.LedgerSink`: an
    object with ``start(run)``, ``heartbeat(run)`` and ``finish(run)``, receiving the
    :class:`dlt_ops.ledger.RunRecord` at each point, and optionally ``read_runs(query)`` so
    ``pipeline status`` can read the ledger back from it. Sinks are observability and therefore
    best-effort: the core calls each sink in its own ``try``/``except``, so a sink that raises
    is logged at ERROR and never affects another sink or the run.

    Returns ``None``; the return value is ignored.
    """


@hookspec
def dlt_ops_register_assertion_rules(register: Register) -> None:
    """Register pre-load assertion types.

    Called once per plugin of kind ``assertion_rule`` when the plugin is first loaded (not
    ``firstresult``).

    Call ``register(assertion_type, name="<type>")`` for each type. ``name`` is the key users
    write under ``[sources.X.dlt_ops.assertions.<resource>]`` (``min_rows_per_load``,
    ``unique_columns``, ...) and must equal the type's ``name``; ``on_failure``, ``custom``,
    ``max_violations`` and ``max_violation_ratio`` are reserved. The built-in types are
    registered through this same hook from ``dltops-core``'s own entry points. Register the
    class (instantiated once per run with no arguments) or a ready instance.

    An assertion type (:class:`dlt_ops.assertions.AssertionType`) has:

    * ``name: str`` and ``row_scoped: bool``: ``True`` when ``observe`` judges single rows
      (such a type may quarantine); ``False`` for a batch verdict from ``finalize`` only.
    * ``check_config(params, ctx) -> list[str]``: static checks of ``params`` (the TOML value,
      a scalar/array shorthand normalized to ``{"value": x}``; policy keys removed) against an
      :class:`~dlt_ops.assertions.AssertionContext` (source, resource and the resource
      model's ``declared_columns`` or ``None``). No data, network or clients. Everything
      checkable without data belongs here: ``validate`` and the run's preflight report it.
      Messages that appear only when ``declared_columns`` is set are column findings.
    * ``start(params) -> state``: a fresh accumulator per resource and run.
    * ``observe(state, row, params) -> str | None``: called for every row that would load (after
      dlt's incremental filter and Pydantic validation), whatever other assertions decided;
      ``None`` passes, a string is this row's violation message. Batch types accumulate and
      return ``None``. May run on several threads for parallelized resources (calls for one
      resource are serialized). Must not mutate ``row``.
    * ``finalize(state, params) -> str | None``: after the last row; a string fails the batch.

    Policy belongs to the engine: types never see ``on_failure`` or thresholds, never write
    quarantine rows and never touch the destination.

    Returns ``None``; the return value is ignored.
    """


@hookspec
def dlt_ops_register_trigger_emitters(register: Register) -> None:
    """Register trigger emitters.

    Called once per plugin of kind ``trigger_emitter`` when the plugin is first loaded (not
    ``firstresult``).

    Call ``register(emitter, name="<trigger_source>")`` for each emitter. ``name`` is the value
    written to the ledger's ``trigger_source`` column and accepted by
    ``dlt-ops pipeline run --trigger-source``; ``emitter`` is an object with a one-line
    ``description`` attribute describing who triggers runs under that name (the CLI, a
    backfill, an Airflow DAG, the built-in scheduler).

    Returns ``None``; the return value is ignored.
    """


@hookspec
def dlt_ops_register_validation_rules(register: Register) -> None:
    """Register ``dlt-ops pipeline validate`` rules.

    Called once per plugin of kind ``validation_rule`` when validate (or the runtime
    preflight) first needs the rule catalog; validate loads every plugin of this kind (not
    ``firstresult``).

    Call ``register(rule, name="<rule_id>")`` for each rule. ``name`` is the rule id users
    switch in ``[dlt_ops.rules]`` and exempt in ``[sources.X.dlt_ops.rule_exemptions]``; prefix
    third-party ids with your plugin's name. ``rule`` satisfies
    :class:`dlt_ops.validate.ValidationRule` (its id, a one-line description, whether it is on by
    default, and a ``check`` over the discovered project). ``--show-resolved-rules`` lists each
    rule with the distribution that owns it. A rule id registered by two distinct plugins is a
    :class:`dlt_ops.errors.PluginConflictError`.

    Returns ``None``; the return value is ignored.
    """


@hookspec
def dlt_ops_register_secret_backends(register: Register) -> None:
    """Register secret backends.

    Called once per plugin of kind ``secret_backend`` when a command that runs a source first
    resolves secrets (not ``firstresult``).

    Call ``register(backend, name="<backend>")`` for each backend (``secrets_toml``, ``airflow``).
    A backend claims the sources whose secrets it provides and fills dlt's secret providers
    before the source is instantiated; the runtime preflight re-checks on every run that each
    source's claimed backend is registered and loads.

    Returns ``None``; the return value is ignored.
    """
