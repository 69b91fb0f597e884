"""``scheduler run --serve HOST:PORT``: ``/metrics``, ``/healthz`` and the live fleet report.

A standard-library HTTP server on its own daemon threads, beside the scheduler loop. Every
request reads the fleet afresh through the same readers as ``dlt-ops metrics`` and
``dlt-ops report``, so what it serves is what those commands would print at that moment.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING

from dlt_ops.clock import utcnow
from dlt_ops.errors import UsageError
from dlt_ops.log import get_logger
from dlt_ops.redact import redact

if TYPE_CHECKING:
    from dlt_ops.config import ProjectConfig
    from dlt_ops.plugins import PluginRegistry

log = get_logger(__name__)


def parse_address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:9464`` for IPv6; port 0 picks a free one)."""
    host, sep, port = text.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise UsageError(f"--serve {text!r}: expected HOST:PORT, e.g. 127.0.0.1:9464.")
    return host, int(port)


@dataclass
class Health:
    """What ``/healthz`` says about the scheduler loop."""

    started_at: datetime = field(default_factory=utcnow)
    last_tick_at: datetime | None = None
    ticks: int = 0

    def tick(self) -> None:
        """A source's turn in a pass came to something (ran, skipped, refused)."""
        self.last_tick_at, self.ticks = utcnow(), self.ticks + 1

    def as_json(self) -> dict[str, object]:
        """The ``/healthz`` body."""
        last = self.last_tick_at.isoformat() if self.last_tick_at else None
        return {"status": "ok", "started_at": self.started_at.isoformat(),
                "last_tick_at": last, "ticks": self.ticks}  # fmt: skip


class FleetServer:
    """Serves the fleet of one project until :meth:`close`."""

    def __init__(
        self,
        registry: PluginRegistry,
        config: ProjectConfig,
        address: tuple[str, int],
        *,
        sources: Callable[[], list[str]],
        health: Health,
    ) -> None:
        self.registry, self.config, self.sources, self.health = registry, config, sources, health
        self.httpd = ThreadingHTTPServer(address, self._handler())
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, name="dlt-ops-serve",
                                       daemon=True)  # fmt: skip

    @property
    def url(self) -> str:
        """``http://host:port`` as bound (the real port when 0 was asked for)."""
        address = self.httpd.server_address
        host = address[0].decode() if isinstance(address[0], bytes) else str(address[0])
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{address[1]}"

    def start(self) -> FleetServer:
        """Serve on a daemon thread."""
        self.thread.start()
        log.info("serve.listening", url=self.url)
        return self

    def close(self) -> None:
        """Stop serving and release the port."""
        self.httpd.shutdown()
        self.httpd.server_close()

    def metrics(self) -> bytes:
        """The ``/metrics`` body."""
        from dlt_ops.metrics.exposition import render
        from dlt_ops.metrics.fleet import collect_fleet

        return render(lambda: collect_fleet(self.registry, self.config, self.sources(), utcnow()))

    def report(self) -> bytes:
        """The live fleet report (``dlt-ops report``'s HTML)."""
        from dlt_ops.report.collect import collect
        from dlt_ops.report.html import render

        fleet = collect(self.registry, self.config, self.sources(), utcnow())
        return render(fleet).encode("utf-8")

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (the stdlib's name)
                from prometheus_client import CONTENT_TYPE_LATEST

                path = self.path.split("?", 1)[0]
                routes: dict[str, tuple[str, Callable[[], bytes]]] = {
                    "/metrics": (CONTENT_TYPE_LATEST, server.metrics),
                    "/healthz": ("application/json",
                                 lambda: json.dumps(server.health.as_json()).encode()),
                    "/": ("text/html; charset=utf-8", server.report),
                    "/report": ("text/html; charset=utf-8", server.report),
                }  # fmt: skip
                if path not in routes:
                    self._send(404, "text/plain", b"not found: try /metrics, /healthz or /\n")
                    return
                kind, body = routes[path]
                try:
                    self._send(200, kind, body())
                except Exception as exc:  # one bad read answers 500, the server goes on
                    log.error(
                        "serve.failed", path=path, error=redact(f"{type(exc).__name__}: {exc}")
                    )
                    self._send(500, "text/plain", redact(f"{type(exc).__name__}: {exc}\n").encode())

            def _send(self, code: int, kind: str, body: bytes) -> None:
                self.send_response(code)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002
                log.debug("serve.request", line=format % args)

        return Handler
