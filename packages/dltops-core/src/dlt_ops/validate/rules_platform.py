"""Core rules about the platform a source runs on: destination tier, secrets, ledger and alert
sinks.

They call the same functions as the runtime preflight, so validate and run cannot disagree.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from dlt_ops.errors import ConfigError, DltOpsError, PluginError
from dlt_ops.validate.capability import check_destination, engaged_by_config
from dlt_ops.validate.framework import Finding, Rule, ValidationContext


def destination_capability(ctx: ValidationContext) -> Iterator[Finding]:
    """Each source's destination resolves, its adapter is complete, and adapter-gated
    features are only engaged at full tier (core tier without them is a warning)."""
    notices: dict[str, list[str]] = {}
    for s in ctx.sources():
        engaged = engaged_by_config(ctx.config, s.name, s.uses_checkpoints)
        try:
            result = check_destination(ctx.config, ctx.registry, s.name, engaged)
        except (ConfigError, PluginError, DltOpsError) as exc:
            yield Finding(s.name, "destination", str(exc))
            continue
        if result.notice:
            notices.setdefault(result.notice, []).append(s.name)
    for notice, names in notices.items():
        for name in names:
            yield Finding(name, "destination", notice, is_warning=True)


def secret_backend_registered(ctx: ValidationContext) -> Iterator[Finding]:
    """Each source's secret backend is registered, loads and can serve it."""
    from dlt_ops.secrets import resolve_secret_backend

    for s in ctx.sources():
        try:
            resolve_secret_backend(ctx.config, ctx.registry, s.name)
        except DltOpsError as exc:
            yield Finding(s.name, "secret_backend", str(exc))


def run_plugins_load(ctx: ValidationContext) -> Iterator[Finding]:
    """Every plugin a run loads unconditionally (lifecycle, secret backend) loads and has no
    ignored hook: one that does not refuses every run and backfill."""
    from dlt_ops.plugins.run_kinds import run_plugin_problems

    for problem in run_plugin_problems(ctx.registry):
        src = problem.source
        yield Finding(
            f"dlt_ops.{src.kind}", f"plugins.{src.name}",
            f"{src.kind} plugin '{src.name}' from {src.origin} failed to load: {problem.error}; "
            f"every run and backfill is refused until it loads. Fix or reinstall it, or turn it "
            f'off with [dlt_ops.plugins] disable = ["{src.name}"].',
        )  # fmt: skip


def _sinks_registered(
    key: str, names: tuple[str, ...], check: Callable[[str], object]
) -> Iterator[Finding]:
    for name in names:
        try:
            check(name)
        except DltOpsError as exc:
            yield Finding("dlt_ops", key, str(exc))


def alert_sink_registered(ctx: ValidationContext) -> Iterator[Finding]:
    """Every name in [dlt_ops] alert_sinks is an installed alert sink whose options hold (a
    webhook's url, call_timeout_s): a run refuses it."""
    from dlt_ops.alerts.dispatch import check_alert_sink, configured_sinks

    def check(name: str) -> None:
        check_alert_sink(ctx.registry, ctx.config, name)

    yield from _sinks_registered("alert_sinks", configured_sinks(ctx.config), check)


def ledger_sink_registered(ctx: ValidationContext) -> Iterator[Finding]:
    """Every name in [dlt_ops] ledger_sinks is an installed ledger sink with a valid
    call_timeout_s (a run refuses it)."""
    from dlt_ops.plugins.bound import sink_call_timeout

    def check(name: str) -> None:
        ctx.registry.get("ledger_sink", name)
        sink_call_timeout(ctx.config.ledger_sink, "ledger_sink", name)

    yield from _sinks_registered("ledger_sinks", ctx.config.ledger_sinks, check)


PLATFORM_RULES = (
    Rule("run_plugins_load", "Every lifecycle plugin and secret backend loads (else runs refuse).",
         run_plugins_load, exemptable=False),
    Rule("secret_backend_registered", "Each source's secret backend is installed and usable.",
         secret_backend_registered),
    Rule("alert_sink_registered", "Every configured alert sink is installed.",
         alert_sink_registered),
    Rule("ledger_sink_registered", "Every configured ledger sink is installed.",
         ledger_sink_registered),
    Rule("destination_capability", "Destinations resolve; gated features need an adapter.",
         destination_capability),
)  # fmt: skip
