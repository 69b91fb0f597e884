"""Building the configured alert sinks and sending one alert to each, in isolation."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from dlt_ops.alerts.model import (
    ALERT_SINK,
    Alert,
    AlertSink,
    AlertSinkContext,
    AlertSinkFactory,
)
from dlt_ops.errors import DltOpsError, PluginConflictError
from dlt_ops.log import get_logger
from dlt_ops.plugins.bound import Bound, call_timeout
from dlt_ops.redact import redact

if TYPE_CHECKING:
    from dlt_ops.config import ProjectConfig
    from dlt_ops.plugins import PluginRegistry

log = get_logger(__name__)

KIND = "alert_sink"
#: ``[dlt_ops] alert_sinks`` unset: alerts go to the log.
DEFAULT_SINKS = ("log",)


#: The module whose sinks serve :data:`DEFAULT_SINKS`.
BUILTIN_MODULE = "dlt_ops.builtin.alert_sinks"


def configured_sinks(config: ProjectConfig) -> tuple[str, ...]:
    """The sink names in effect (``[]`` turns alerts off)."""
    return DEFAULT_SINKS if config.alert_sinks is None else tuple(config.alert_sinks)


def sink_factory(registry: PluginRegistry, config: ProjectConfig, name: str) -> AlertSinkFactory:
    """The factory registered as ``name``. Another package registering ``log`` conflicts only
    in a project that chose ``log``: with ``alert_sinks`` unset, the default is dltops-core's
    own sink, so the conflict is not the project's to settle."""
    try:
        return registry.get(ALERT_SINK, name)
    except PluginConflictError:
        if config.alert_sinks is not None or name not in DEFAULT_SINKS:
            raise
        for reg in registry.registrations(KIND):
            if reg.name == name and reg.source.value == BUILTIN_MODULE:
                return cast("AlertSinkFactory", reg.obj)
        raise


def check_alert_sinks(registry: PluginRegistry, config: ProjectConfig) -> None:
    """Every configured name is registered and loads (``UnknownPluginError`` /
    ``PluginLoadError``, exit 2): a misspelled sink means alerts go nowhere. Each sink is built
    once too, so its own option checks (a webhook's ``url``) and its ``call_timeout_s`` refuse
    now (``ConfigError``, exit 2) rather than fail when the first alert is sent; any other
    error building it is left to alert time, where it is logged."""
    for name in configured_sinks(config):
        check_alert_sink(registry, config, name)


def check_alert_sink(registry: PluginRegistry, config: ProjectConfig, name: str) -> None:
    """One sink of :func:`check_alert_sinks` (``validate`` reports each on its own)."""
    factory = sink_factory(registry, config, name)
    context = _context(config, name)
    call_timeout(context.options, table=f"[dlt_ops.alert_sink.{name}]")
    try:
        factory(context)
    except DltOpsError:
        raise
    except Exception as exc:  # noqa: BLE001 - not a config verdict: alert time logs it
        log.debug("alerts.sink_check_failed", sink=name, error=_describe(exc))


def _context(config: ProjectConfig, name: str) -> AlertSinkContext:
    options = config.alert_sink.get(name, {})
    return AlertSinkContext(name, config.root, options if isinstance(options, dict) else {})


class BoundedAlertSink:
    """An alert sink whose ``send`` is waited for at most its ``call_timeout_s`` (see
    :mod:`dlt_ops.plugins.bound`): a sink that hangs costs the run that long, then is logged
    as timed out."""

    def __init__(self, name: str, sink: AlertSink, seconds: float) -> None:
        self.inner = sink
        self.target: str = getattr(sink, "target", name)
        self.bound = Bound(f"alert_sink '{name}'", seconds)

    def send(self, alert: Alert) -> None:
        """Send ``alert`` (bounded)."""
        self.bound.write("send", self.inner.send, alert)


def build_alert_sinks(registry: PluginRegistry, config: ProjectConfig) -> list[AlertSink]:
    """Every configured sink, bounded; one that cannot be built is logged and left out."""
    sinks: list[AlertSink] = []
    for name in configured_sinks(config):
        context = _context(config, name)
        try:
            seconds = call_timeout(context.options, table=f"[dlt_ops.alert_sink.{name}]")
            sink = sink_factory(registry, config, name)(context)
            sinks.append(BoundedAlertSink(name, sink, seconds))
        except Exception as exc:  # a broken sink loses its alerts, never the run
            log.error("alerts.sink_unavailable", sink=name, error=_describe(exc))
    return sinks


def send_all(sinks: list[AlertSink], alert: Alert) -> int:
    """Send ``alert`` to every sink, each in its own ``try``; returns how many delivered."""
    delivered = 0
    for sink in sinks:
        try:
            sink.send(alert)
            delivered += 1
        except Exception as exc:  # one failing sink never stops another, nor the run
            log.error(
                f"Failed to send alert to {sink.target} (non-fatal)",
                run_id=alert.run_id,
                error=_describe(exc),
            )
    return delivered


def _describe(exc: BaseException) -> str:
    return redact(f"{type(exc).__name__}: {exc}")
