"""Demo data for the dlt_sources example, and the three things its sources read from.

    python demo_data.py seed postgresql://postgres:pw@127.0.0.1:5432/shop   # orders table
    python demo_data.py serve 8765            # the paginated events API (Ctrl-C stops it)
    python demo_data.py csv files/data        # rewrite the CSV files

The tests import this module, so the example and the tests load exactly the same rows.
Everything is deterministic: row counts per day are fixed (ORDERS_PER_DAY, EVENTS_PER_DAY,
CSV_FILES).
"""

from __future__ import annotations

import csv
import json
import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

DAY0 = datetime(2026, 1, 1, tzinfo=UTC)

# -- sql_database: an orders table --------------------------------------------------------------

#: Orders per day, from DAY0 on.
ORDERS_PER_DAY = (11, 23, 5, 17, 9)


def orders() -> list[tuple[int, datetime, int]]:
    """``(id, updated_at, amount_cents)`` rows, spread inside each day."""
    rows, next_id = [], 1
    for day, count in enumerate(ORDERS_PER_DAY):
        for i in range(count):
            at = DAY0 + timedelta(days=day, minutes=37 * i + 1)
            rows.append((next_id, at, 100 * next_id + 7))
            next_id += 1
    return rows


def seed_postgres(url: str) -> int:
    """(Re)create ``orders`` in the database at ``url``; returns the row count."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS orders")
        conn.execute(
            "CREATE TABLE orders (id bigint PRIMARY KEY, updated_at timestamptz NOT NULL, "
            "amount_cents bigint NOT NULL)"
        )
        with conn.cursor() as cur:
            cur.executemany("INSERT INTO orders VALUES (%s, %s, %s)", orders())
    return sum(ORDERS_PER_DAY)


# -- rest_api: a paginated events API ------------------------------------------------------------

#: Events per day, from DAY0 on; the API serves them PAGE_SIZE per page, oldest first.
EVENTS_PER_DAY = (7, 11, 6)
PAGE_SIZE = 4


def events() -> list[dict]:
    """Event rows with ISO-8601 ``updated_at`` strings, as an API sends them."""
    out, next_id = [], 1
    for day, count in enumerate(EVENTS_PER_DAY):
        for i in range(count):
            at = DAY0 + timedelta(days=day, hours=1 + 2 * i)
            out.append({"id": next_id, "kind": f"k{next_id % 3}", "updated_at": at.isoformat()})
            next_id += 1
    return out


class EventsApi(ThreadingHTTPServer):
    """``GET /events?since=<iso>&page=<n>`` → ``{"data": [...], "total_pages": N}``.

    ``fail_page``: while set, that page answers HTTP 500 (a page that fails). ``requests``
    records every query the API answered.
    """

    daemon_threads = True

    def __init__(self, port: int = 0, fail_page: int | None = None) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.fail_page = fail_page
        self.requests: list[dict[str, str]] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/"


class _Handler(BaseHTTPRequestHandler):
    server: EventsApi

    def do_GET(self) -> None:  # noqa: N802 - http.server API
        parts = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        if parts.path.rstrip("/") != "/events":
            return self._send(404, {"error": "not found"})
        since = datetime.fromisoformat(query.get("since", DAY0.isoformat()))
        page = int(query.get("page", "1"))
        self.server.requests.append({**query, "page": str(page)})
        if page == self.server.fail_page:
            return self._send(500, {"error": f"page {page} is broken"})
        rows = [e for e in events() if datetime.fromisoformat(e["updated_at"]) >= since]
        pages = max(1, -(-len(rows) // PAGE_SIZE))
        chunk = rows[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]
        self._send(200, {"data": chunk, "total_pages": pages})

    def _send(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass  # quiet: tests read server.requests instead


@contextmanager
def serving(fail_page: int | None = None) -> Iterator[EventsApi]:
    """The events API on a free loopback port, in a thread, for the ``with`` block."""
    server = EventsApi(0, fail_page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


# -- filesystem: CSV files ----------------------------------------------------------------------

#: One CSV file per day: (file name, rows in it, its modification time).
CSV_FILES = (
    ("orders_2026-01-01.csv", 4, DAY0 + timedelta(hours=23)),
    ("orders_2026-01-02.csv", 6, DAY0 + timedelta(days=1, hours=23)),
    ("orders_2026-01-03.csv", 3, DAY0 + timedelta(days=2, hours=23)),
)


def write_csv(folder: Path, name: str, rows: int, modified: datetime) -> Path:
    """One CSV file of ``rows`` orders for the day in its name, with that modification time."""
    day = name.removeprefix("orders_").removesuffix(".csv")
    path = folder / name
    with path.open("w", newline="") as fh:
        out = csv.writer(fh)
        out.writerow(["id", "day", "amount_cents"])
        for i in range(rows):
            out.writerow([f"{day}-{i}", day, 100 + i])
    os.utime(path, (modified.timestamp(), modified.timestamp()))
    return path


def write_csv_files(folder: Path) -> list[Path]:
    """Every file of CSV_FILES into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    return [write_csv(folder, *spec) for spec in CSV_FILES]


def main(argv: list[str]) -> int:
    if len(argv) >= 3 and argv[1] == "seed":
        print(f"orders: {seed_postgres(argv[2])} rows")  # noqa: T201
    elif len(argv) >= 2 and argv[1] == "serve":
        server = EventsApi(int(argv[2]) if len(argv) > 2 else 8765)
        print(f"events API on {server.url}events (Ctrl-C stops it)")  # noqa: T201
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
    elif len(argv) >= 3 and argv[1] == "csv":
        for path in write_csv_files(Path(argv[2])):
            print(path)  # noqa: T201
    else:
        print(__doc__)  # noqa: T201
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
