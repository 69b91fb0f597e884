"""The backfill plan: window, canonical chunk size, chunks and their deterministic identities.

Pure data, no I/O: ``dlt-ops pipeline backfill --dry-run`` prints a plan without touching the
destination, and every worker of one invocation rebuilds the same plan from the same inputs.

Identities (docs/backfill.md):

* ``backfill_id`` = ``sha256("<source>|<from>|<to>|<canonical chunk>")[:16]``, with
  ``|<resource,...>`` appended when the backfill is scoped to resources. The chunk size is
  canonicalised first (``1d`` = ``24h`` = ``1440m`` → ``1d``), so equal plans share one id.
* ``chunk_id`` = zero-based window position, zero-padded to 6 digits (sorts lexically).
* chunk ``run_id`` = ``sha256("<source>|<chunk_from>|<chunk_to>")[:16]`` (seed 000): the join
  key into the runs ledger.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from dlt_ops.errors import UsageError
from dlt_ops.runner.window import Window, parse_duration
from dlt_ops.runner.working_dir import BACKFILL_WORKDIR, chunk_working_dir

#: Chunk-run working directories live here, one per chunk (never shared between chunks).
WORKDIR = BACKFILL_WORKDIR
#: Refuse plans that would seed an absurd number of rows (e.g. ``--chunk 1m`` over a year).
MAX_CHUNKS = 100_000

_UNITS = (("d", 1440), ("h", 60), ("m", 1))


def canonical_chunk(delta: timedelta) -> str:
    """The largest exact unit: ``24h`` → ``1d``, ``90m`` → ``90m``, ``120m`` → ``2h``."""
    minutes, rest = divmod(int(delta.total_seconds()), 60)
    if rest or minutes <= 0:
        raise UsageError(f"chunk size {delta} is not a positive whole number of minutes.")
    for unit, size in _UNITS:
        if minutes % size == 0:
            return f"{minutes // size}{unit}"
    raise AssertionError("unreachable: every minute count divides by 1")


def parse_chunk(text: str) -> tuple[timedelta, str]:
    """``--chunk N{d|h|m}`` → (duration, canonical label)."""
    delta, _ = parse_duration(text, "--chunk")
    return delta, canonical_chunk(delta)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def chunk_run_id(source: str, start: datetime, end: datetime) -> str:
    """Seed 000's deterministic chunk ``run_id``."""
    return _digest(f"{source}|{start.isoformat()}|{end.isoformat()}")


def backfill_id_for(
    source: str, window: Window, chunk_label: str, resources: Sequence[str] = ()
) -> str:
    """The deterministic ``backfill_id`` over the canonical chunk label (and resources)."""
    text = f"{source}|{window.start.isoformat()}|{window.end.isoformat()}|{chunk_label}"
    if resources:
        text += "|" + ",".join(sorted(set(resources)))
    return _digest(text)


@dataclass(frozen=True)
class Chunk:
    """One ``[start, end)`` piece of the window."""

    index: int
    start: datetime
    end: datetime
    run_id: str

    @property
    def chunk_id(self) -> str:
        """Zero-padded window position (``000000``...)."""
        return f"{self.index:06d}"

    @property
    def window(self) -> Window:
        """The chunk's bounds as a runner window."""
        return Window(self.start, self.end)

    def label(self, total: int) -> str:
        """``chunk i/N [from → to)``, 1-based for people."""
        return f"chunk {self.index + 1}/{total} [{self.start.isoformat()} → {self.end.isoformat()})"


def compute_chunks(source: str, window: Window, delta: timedelta) -> list[Chunk]:
    """Consecutive ``[start, min(start + delta, to))`` pieces; the last one is clamped."""
    count = -(-(window.end - window.start) // delta)
    if count > MAX_CHUNKS:
        raise UsageError(
            f"--chunk {canonical_chunk(delta)} splits the window into {count} chunks (more than "
            f"{MAX_CHUNKS}); use a larger --chunk."
        )
    chunks, start, index = [], window.start, 0
    while start < window.end:
        end = min(start + delta, window.end)
        chunks.append(Chunk(index, start, end, chunk_run_id(source, start, end)))
        start, index = end, index + 1
    return chunks


@dataclass(frozen=True)
class BackfillPlan:
    """Everything that identifies one backfill; rebuilt identically by every worker."""

    source: str
    window: Window
    chunk_delta: timedelta
    chunk_label: str
    resources: tuple[str, ...] = ()
    chunks: tuple[Chunk, ...] = field(default=(), compare=False)

    @classmethod
    def build(
        cls,
        source: str,
        start: str | datetime,
        end: str | datetime,
        chunk: str,
        resources: Sequence[str] = (),
    ) -> BackfillPlan:
        """Parse and check the CLI inputs (usage errors, exit 2) and compute the chunks."""
        window = (
            Window.parse(start, end)
            if isinstance(start, str) and isinstance(end, str)
            else Window(start, end)  # type: ignore[arg-type]
        )
        delta, label = parse_chunk(chunk)
        scoped = tuple(sorted(set(resources)))
        return cls(
            source=source,
            window=window,
            chunk_delta=delta,
            chunk_label=label,
            resources=scoped,
            chunks=tuple(compute_chunks(source, window, delta)),
        )

    @property
    def backfill_id(self) -> str:
        """Deterministic id of this plan."""
        return backfill_id_for(self.source, self.window, self.chunk_label, self.resources)

    @property
    def resource_name(self) -> str | None:
        """Stored in ``_dlt_backfills.resource_name``: the sorted scope, ``None`` for all."""
        return ",".join(self.resources) if self.resources else None

    @property
    def total(self) -> int:
        """Number of chunks."""
        return len(self.chunks)

    def working_dir(self, root: Path, dataset: str, chunk: Chunk) -> Path:
        """The chunk run's own dlt working directory, keyed by dataset, plan and ``run_id``.

        A retried chunk (same plan, same bounds, same dataset) finds the load package its
        killed attempt left behind and finishes it; concurrent chunks never see each other's
        packages, and one plan backfilled into two datasets (``--dataset``) shares nothing.
        """
        return chunk_working_dir(root, dataset, self.backfill_id, chunk.run_id)

    def describe(self) -> str:
        """One line for logs and the dry run."""
        scope = f" resources={','.join(self.resources)}" if self.resources else ""
        return (
            f"backfill {self.backfill_id} of '{self.source}' [{self.window.start.isoformat()} → "
            f"{self.window.end.isoformat()}) in {self.total} × {self.chunk_label} chunk(s){scope}"
        )


_LEASE = re.compile(r"(\d+)([smhd])")
_LEASE_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}


def parse_lease(text: str) -> timedelta:
    """``--lease N{s|m|h|d}`` (e.g. ``10m``, ``30s``); zero or other forms refused."""
    match = _LEASE.fullmatch(text.strip())
    if match is None or int(match.group(1)) == 0:
        raise UsageError(
            f"invalid --lease {text!r}: a positive <N>s / <N>m / <N>h / <N>d (e.g. 10m, 30s)."
        )
    return timedelta(**{_LEASE_UNITS[match.group(2)]: int(match.group(1))})
