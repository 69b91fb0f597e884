"""Hook specifications for dlt-ops plugins.

Implement hooks with ``@dlt_ops.hookimpl`` in a module and point an entry point at that module:

.. code-block:: toml

    [project.entry-points."dlt_ops.destination"]
    mydb = "dltops_mydb.plugin"

The entry-point *group* names the plugin kind: ``dlt_ops.destination``, ``dlt_ops.ledger_sink``,
``dlt_ops.assertion_rule``, ``dlt_ops.trigger_emitter``, ``dlt_ops.validation_rule``,
``dlt_ops.secret_backend``, ``dlt_ops.alert_sink``, ``dlt_ops.command``,
``dlt_ops.config_key`` (each with its ``dlt_ops_register_*`` hook below) and
``dlt_ops.lifecycle`` (no registration hook: the lifecycle hooks only). The entry-point *name*
is the name the plugin registers under that kind (:data:`dlt_ops.plugins.kinds.KIND_HOOKS`
maps kinds to hooks). Built-in plugins are
registered the same way, from ``dltops-core``'s own entry points; nothing is privileged.

Two families of hooks live here. *Registration* (collector) hooks receive a ``register``
callback, call it once per thing they provide, and return ``None``. Registration hooks are
called lazily: a plugin module is imported, and its registration hook called, only when its
kind and name are first needed (``dlt-ops --help`` imports no plugin). Implementations accept
only the arguments they use; pluggy passes the subset named in the signature.

Registration must be cheap: import heavy dependencies (database drivers, SDKs) inside the
registered factory, never at module import time.

*Lifecycle* hooks (``dlt_ops_prepare_run``, ``dlt_ops_extract_gates``, ``dlt_ops_run_started``,
``dlt_ops_run_finished``) follow one run. They are called on every plugin of kind
``lifecycle`` (entry-point group ``dlt_ops.lifecycle``, all loaded when a run is prepared) and
on any other loaded plugin that implements them. Assertions, receipts and alerts are built on
them exactly as a third-party plugin would be.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:  # every type a hook receives or returns, from the one public module
    from dlt_ops.plugin_api import (
        AlertSinkFactory,
        AssertionTypeProvider,
        CommandProvider,
        ConfigKey,
        DestinationAdapterFactory,
        GateFactory,
        LedgerSinkFactory,
        PreparedRun,
        Register,
        RunContext,
        RunOutcome,
        RunRecord,
        SecretBackend,
        TriggerEmitter,
        ValidationRule,
    )

hookspec = pluggy.HookspecMarker("dlt_ops")


@hookspec
def dlt_ops_register_destinations(register: Register[DestinationAdapterFactory]) -> None:
    """Register destination adapters.

    Called once per plugin of kind ``destination`` when the plugin is first loaded (not
    ``firstresult``: every implementation is called, each from its own plugin).

    Call ``register(factory, name="<engine>")`` for each adapter, where ``name`` is dlt's engine
    name for the destination (the name in ``dlt.destinations.<engine>``) and ``factory`` is a
    zero-argument callable, usually the adapter class, returning an object that satisfies
    :class:`dlt_ops.adapters.DestinationAdapter`. The factory is called only when a command
    actually needs the destination, so the driver import belongs inside the adapter's
    ``connect``. Registering a name another plugin already registered raises
    :class:`dlt_ops.errors.PluginConflictError` when that name is looked up, unless
    ``[dlt_ops.plugins.destination]`` in the project config picks a winner.

    Returns ``None``; the return value is ignored.
    """


@hookspec
def dlt_ops_register_ledger_sinks(register: Register[LedgerSinkFactory]) -> None:
    """Register runs-ledger sinks.

    Called once per plugin of kind ``ledger_sink`` when the plugin is first loaded (not
    ``firstresult``).

    Call ``register(factory, name="<sink>")`` for each sink. ``name`` is what users list in
    ``[dlt_ops] ledger_sinks``; ``factory`` is called once per run (or per ``status`` read) with
    a :class:`dlt_ops.ledger.LedgerSinkContext` (the sink's options from
    ``[dlt_ops.ledger_sink.<name>]``, the project root, the run's destination and dataset, and a
    lazily opened destination session) and returns a :class:`dlt_ops.ledger.LedgerSink`: an
    object with a ``target`` label and ``start(run)``, ``heartbeat(run)`` and ``finish(run)``,
    receiving the :class:`dlt_ops.ledger.RunRecord` at each point. The read side is optional:
    ``read_runs(query)`` and ``read_run(ref)`` (:class:`dlt_ops.ledger.sinks.RunReader`) let
    ``pipeline status`` and ``runs list|show`` read the ledger back from the sink, and
    ``prune(older_than, dry_run=...)`` (:class:`dlt_ops.ledger.sinks.LedgerPruner`) serves
    ``runs prune``; ``dlt_ops.testing.LedgerSinkSuite`` checks all of it. Sinks are
    observability and therefore best-effort: the core calls each sink in its own
    ``try``/``except``, so a sink that raises is logged at ERROR and never affects another sink
    or the run.

    Returns ``None``; the return value is ignored.
    """


@hookspec
def dlt_ops_register_assertion_rules(register: Register[AssertionTypeProvider]) -> None:
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
def dlt_ops_register_trigger_emitters(register: Register[TriggerEmitter]) -> None:
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
def dlt_ops_register_validation_rules(register: Register[ValidationRule]) -> None:
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
def dlt_ops_register_secret_backends(register: Register[SecretBackend]) -> None:
    """Register secret backends.

    Called once per plugin of kind ``secret_backend`` when a command that runs a source first
    resolves secrets (not ``firstresult``).

    Call ``register(backend, name="<backend>")`` for each backend (``secrets_toml``, ``airflow``).
    A backend claims the sources whose secrets it provides and fills dlt's secret providers
    before the source is instantiated; the runtime preflight re-checks on every run that each
    source's claimed backend is registered and loads.

    Returns ``None``; the return value is ignored.
    """


@hookspec
def dlt_ops_register_alert_sinks(register: Register[AlertSinkFactory]) -> None:
    """Register alert sinks.

    Called once per plugin of kind ``alert_sink`` when a run first needs the sinks named in
    ``[dlt_ops] alert_sinks`` (not ``firstresult``).

    Call ``register(factory, name="<sink>")`` for each sink. ``name`` is what users list in
    ``[dlt_ops] alert_sinks`` (unset means ``["log"]``; ``[]`` turns alerts off);
    ``factory`` is called with a :class:`dlt_ops.alerts.AlertSinkContext` (the sink's name,
    its options from ``[dlt_ops.alert_sink.<name>]`` and the project root) and returns a
    :class:`dlt_ops.alerts.AlertSink`: an object with ``send(alert)``, receiving one
    :class:`dlt_ops.alerts.Alert` (a failed run, a failed assertion). Sinks are best-effort:
    each is built and called in its own ``try``/``except``; one that raises is logged at
    ERROR and never affects another sink or the run. Built in: ``log`` and ``webhook``.

    Returns ``None``; the return value is ignored.
    """


@hookspec
def dlt_ops_register_commands(register: Register[CommandProvider]) -> None:
    """Register CLI commands: ``dlt-ops <name> ...``.

    Called once per plugin of kind ``command`` (entry-point group ``dlt_ops.command``) when
    ``dlt-ops <name>`` runs, never for ``--help``: the root help lists each entry point's *name*
    from the installed metadata alone, so the entry-point name is the command name.

    Call ``register(obj, name="<entry-point name>")`` with a ``typer.Typer`` (a command group
    with subcommands) or a function (one command, its parameters declared with
    ``typing.Annotated[..., typer.Option(...)]`` as dlt-ops' own commands are). A name of a
    built-in command is refused (the plugin's command is not added; ``plugins doctor`` says
    so); two plugins claiming one name need ``[dlt_ops.plugins.command] <name> =
    "<distribution>"``. The command receives the same global options (``--root``, ``--debug``)
    through ``ctx.obj`` (:class:`dlt_ops.cli.state.AppState`: ``.project()`` loads the
    project's config, ``.registry()`` its plugins), and raising a
    :class:`dlt_ops.errors.DltOpsError` ends it with one ``error:`` line and its exit code.

    Returns ``None``; the return value is ignored.
    """


@hookspec
def dlt_ops_register_config_keys(register: Register[ConfigKey]) -> None:
    """Declare config keys the plugin reads, so dlt-ops does not refuse them as unknown.

    Called for a plugin of kind ``config_key`` (entry-point group ``dlt_ops.config_key``, one
    entry point per key, named after it) when a project sets that key. Call
    ``register(ConfigKey(name, scope=..., expected=..., check=...), name="<key>")`` with a
    :class:`dlt_ops.plugin_api.ConfigKey`: ``scope="source"`` for ``[sources.<X>.dlt_ops]
    <key>``, ``"project"`` for ``[dlt_ops] <key>``. Validate and every run then accept the key
    and check its value with ``check`` (a value it rejects is a config error, exit 2, quoting
    ``expected``); a misspelled key is still refused with a suggestion. Read the value with
    :func:`dlt_ops.config.plugin_keys.plugin_value`. Options of a plugin's own sink live in
    its ``[dlt_ops.alert_sink.<name>]`` / ``[dlt_ops.ledger_sink.<name>]`` table instead.

    Returns ``None``; the return value is ignored.
    """


# -- lifecycle hooks ----------------------------------------------------------------------------


@hookspec
def dlt_ops_prepare_run(prepared: PreparedRun) -> None:
    """Check a run before anything is written.

    Called once per prepared run (once per ``pipeline run``, once per backfill command, not
    per chunk), after the source, resources, destination, dataset and ledger sinks resolved
    and before the ledger's start row or any backfill state. Every implementation is called.

    ``prepared`` is a :class:`dlt_ops.runner.model.PreparedRun` (config, registry, source,
    resources, resolved destination, tier). Raise a :class:`dlt_ops.errors.DltOpsError` to
    refuse the run; its exit code is the command's (a configuration error exits 2). The
    built-in alerts plugin refuses an alert sink name nobody registers here.

    Returns ``None``; the return value is ignored.
    """


@hookspec
def dlt_ops_extract_gates(prepared: PreparedRun) -> GateFactory | None:
    """Contribute an extract gate: a check between extract and load.

    Called once per prepared run (like ``dlt_ops_prepare_run``); every implementation is
    called and their results are collected.

    Return a :class:`dlt_ops.runner.gates.GateFactory`, or ``None`` when the plugin has nothing
    to gate for ``prepared.source``. Parse your configuration here or lazily in the factory,
    once. For each run (each backfill chunk) the runner calls ``factory.gate(run, source)``
    after the preflight; it returns a fresh :class:`dlt_ops.runner.gates.ExtractGate` (or
    ``None``). The gate's ``attach(source)`` runs before extract, ``after_extract(pipeline,
    load_id)`` once the run's load package exists and before normalize (raise to fail the run
    before anything loads), and ``summary()`` returns a
    :class:`dlt_ops.runner.gates.GateSummary` that observers read from the outcome.
    ``factory.check(source)`` runs the static checks alone (a backfill calls it in its entry
    checks). Errors raised by a factory or gate fail the run; they are not isolated.

    Returns a ``GateFactory`` or ``None``.
    """


@hookspec
def dlt_ops_run_started(run: RunContext, record: RunRecord) -> None:
    """Observe a run's start.

    Called once per run (each backfill chunk attempt is a run) right after its ledger start
    row, before the source is imported. Every implementation is called, one at a time.

    ``run`` is the :class:`dlt_ops.runner.context.RunContext` (run id, source, resources,
    window, resolved destination, tier, a lazily opened destination session); ``record`` the
    :class:`dlt_ops.ledger.RunRecord` just written. Observers are isolated: an exception is
    logged at ERROR and never changes the run, its outcome or another observer.

    Returns ``None``; the return value is ignored.
    """


@hookspec
def dlt_ops_run_finished(run: RunContext, outcome: RunOutcome) -> None:
    """Observe a run's end, completed or failed.

    Called once per run after its terminal ledger row, before the run's destination session
    closes (``run.open_session()`` still works on full tier). Every implementation is called,
    one at a time; a run interrupted by Ctrl-C is observed before the interrupt propagates.

    ``outcome`` is the typed :class:`dlt_ops.runner.model.RunOutcome`: the terminal
    ``record``, the ``phase`` the run reached, the ``error`` (``None`` on success), dlt's
    ``load_info`` and ``pipeline``, and the ``gates`` that ran (their ``summary()``). An
    observer may append a short text to ``outcome.reports`` for the person running the
    command (the receipt table); it must not change anything else. Observers are isolated: an
    exception is logged at ERROR and never changes the outcome or stops another observer.

    Returns ``None``; the return value is ignored.
    """
