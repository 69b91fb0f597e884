"""The fleet report as one self-contained HTML file: inline CSS and SVG, no script, no network.

Every figure is plain SVG with a ``<title>`` per mark (the browser's tooltip), so the file reads
the same offline, printed, or with JavaScript off. Elements carry ``data-*`` attributes (source,
outcome, counts) so tests and scripts can read the page back.
"""

from __future__ import annotations

from datetime import UTC, datetime
from functools import lru_cache
from html import escape

from dlt_ops.report.collect import FleetReport, RunView, SourceView

COLOURS = {
    "completed": "#2e7d32",
    "failed": "#c62828",
    "abandoned": "#8e24aa",
    "running": "#1565c0",
    "claimed": "#1565c0",
    "pending": "#b0bec5",
    "skipped": "#90a4ae",
}

CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1c2833;
background:#f5f7fa}
header{background:#1c2833;color:#fff;padding:18px 28px}header h1{margin:0;font-size:22px}
header p{margin:4px 0 0;color:#c5cdd6}main{padding:20px 28px;max-width:1200px}
.cards{display:flex;gap:12px;flex-wrap:wrap;margin-bottom:18px}
.card{background:#fff;border-radius:8px;padding:10px 16px;box-shadow:0 1px 2px #0002;
min-width:110px}
.card b{display:block;font-size:22px}.warn{background:#fff4e5;border-left:4px solid #ef6c00;
padding:10px 14px;margin-bottom:16px;border-radius:4px}
table{border-collapse:collapse;background:#fff;width:100%;box-shadow:0 1px 2px #0002;
border-radius:6px;overflow:hidden}
th,td{padding:6px 10px;text-align:left;border-bottom:1px solid #e6eaee;white-space:nowrap}
th{background:#eef2f6;font-weight:600}td.num,th.num{text-align:right}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;color:#fff;font-size:12px}
.stale{background:#ef6c00}.fresh{background:#78909c}
.freshness-ok{background:#2e7d32}.freshness-warn{background:#f9a825}
.freshness-error{background:#c62828}
section.source{background:#fff;border-radius:8px;box-shadow:0 1px 2px #0002;padding:14px 18px;
margin:18px 0}section.source h2{margin:0 0 6px;font-size:18px}
h3{font-size:14px;margin:14px 0 6px;color:#455a64}.muted{color:#78909c}
.error{font-family:ui-monospace,monospace;font-size:12px;background:#fdecea;padding:6px 8px;
border-radius:4px;white-space:pre-wrap}
.legend span{margin-right:12px}.legend i{display:inline-block;width:10px;height:10px;
border-radius:2px;margin-right:4px;vertical-align:middle}
"""


def _fmt_ts(value: datetime | None) -> str:
    # isoformat, not strftime: a report draws a tooltip per run, and strftime was a tenth of
    # the render over a thousand sources
    return value.astimezone(UTC).isoformat(" ", "minutes")[:16] if value else "-"


def _age(now: datetime, then: datetime) -> str:
    seconds = max((now - then).total_seconds(), 0)
    if seconds < 3600:
        return f"{int(seconds // 60)}m ago"
    if seconds < 172800:
        return f"{int(seconds // 3600)}h ago"
    return f"{int(seconds // 86400)}d ago"


@lru_cache(
    maxsize=64
)  # a handful of outcomes, drawn once per run; a ledger's odd ones stay bounded
def _outcome_attrs(outcome: str) -> tuple[str, str]:
    """An outcome escaped, and its colour."""
    return escape(outcome), COLOURS.get(outcome, "#607d8b")


def _badge(outcome: str) -> str:
    shown, colour = _outcome_attrs("no runs" if outcome == "missing" else outcome)
    return f'<span class="badge" style="background:{colour}">{shown}</span>'


def _money(value: float | None) -> str:
    if value is None:
        return "-"
    return f"${value:.4f}" if abs(value) < 1 else f"${value:,.2f}"


def _history_svg(runs: list[RunView]) -> str:
    """Bars oldest → newest: height is the duration, colour the outcome; a thin strip under
    them is the records loaded."""
    chronological = list(reversed(runs))
    width, height, strip = 720, 120, 36
    step = width / max(len(chronological), 1)
    bar = max(min(step * 0.7, 28), 2)
    longest = max((r.duration_s or 0 for r in chronological), default=0) or 1
    most = max((r.run.records_loaded or 0 for r in chronological), default=0) or 1
    marks = []
    for i, view in enumerate(chronological):
        x = i * step + (step - bar) / 2
        duration = view.duration_s
        h = max((duration or longest * 0.05) / longest * (height - 14), 3)
        outcome, colour = _outcome_attrs(view.outcome)
        records = view.run.records_loaded
        took = f"{duration:.1f} s" if duration is not None else "no end"
        shown = records if records is not None else "-"
        # only the outcome and the run id can hold markup; the rest is digits and our words
        tip = (f"{_fmt_ts(view.run.started_at)} · {outcome} · {took} · {shown} records · "
               f"{escape(view.run.run_id[:12])}")  # fmt: skip
        marks.append(
            f'<rect class="run" data-outcome="{outcome}" x="{x:.1f}" '
            f'y="{height - h:.1f}" width="{bar:.1f}" height="{h:.1f}" rx="2" fill="{colour}">'
            f"<title>{tip}</title></rect>"
        )
        if records:
            rh = max(records / most * (strip - 6), 1)
            marks.append(
                f'<rect x="{x:.1f}" y="{height + 6:.1f}" width="{bar:.1f}" height="{rh:.1f}" '
                f'fill="#90a4ae"><title>{records} records loaded</title></rect>'
            )
    first = _fmt_ts(chronological[0].run.started_at) if chronological else ""
    last = _fmt_ts(chronological[-1].run.started_at) if chronological else ""
    total = height + strip + 18
    return (
        f'<svg class="history" role="img" aria-label="run history" width="{width}" '
        f'height="{total}" viewBox="0 0 {width} {total}" xmlns="http://www.w3.org/2000/svg">'
        f'<line x1="0" y1="{height}" x2="{width}" y2="{height}" stroke="#cfd8dc"/>'
        + "".join(marks)
        + f'<text x="0" y="{total - 2}" font-size="11" fill="#78909c">{escape(first)}</text>'
        f'<text x="{width}" y="{total - 2}" font-size="11" fill="#78909c" '
        f'text-anchor="end">{escape(last)}</text></svg>'
    )


def _chunk_grid(backfill_id: str, rows: list) -> str:  # noqa: ANN001 - ChunkRow
    size, gap, per_row = 16, 3, 40
    count = len(rows)
    lines = -(-count // per_row) or 1
    width = min(count, per_row) * (size + gap)
    height = lines * (size + gap)
    cells = []
    for i, row in enumerate(rows):
        x, y = (i % per_row) * (size + gap), (i // per_row) * (size + gap)
        colour = COLOURS.get(row.status, "#607d8b")
        loaded = row.records_loaded if row.records_loaded is not None else "-"
        error = f" · {row.last_error}" if row.last_error else ""
        tip = (f"{_fmt_ts(row.chunk_from)} → {_fmt_ts(row.chunk_to)} · {row.status} · "
               f"{loaded} records · {row.attempts} attempt(s){error}")  # fmt: skip
        cells.append(
            f'<rect class="chunk" data-status="{escape(row.status)}" x="{x}" y="{y}" '
            f'width="{size}" height="{size}" rx="3" fill="{colour}"><title>{escape(tip)}'
            f"</title></rect>"
        )
    done = sum(1 for r in rows if r.status == "completed")
    first = rows[0] if rows else None
    span = f"{_fmt_ts(first.backfill_from)} → {_fmt_ts(first.backfill_to)}, " if first else ""
    return (
        f'<div class="backfill" data-backfill="{escape(backfill_id)}" data-chunks="{count}" '
        f'data-completed="{done}"><p><b>{escape(backfill_id)}</b> <span class="muted">'
        f"{escape(span)}{count} chunk(s), {done} completed ({done / max(count, 1):.0%})"
        f'</span></p><svg class="chunks" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg">'
        + "".join(cells)
        + "</svg></div>"
    )


def _count(s: SourceView, value: int, part: str | None = None) -> str:
    """``value``, or ``-`` when the ledger (or that ``part`` of it) could not be read: an
    unknown count is never shown as 0."""
    unread = not s.known or (part is not None and any(p.startswith(part) for p in s.problems))
    return "-" if unread else str(value)


def _overdue(s: SourceView) -> bool | None:
    """Overdue by schedule (``None``: unknown, the ledger could not be read)."""
    return s.freshness.overdue if s.freshness is not None else None


def _schedule_cell(s: SourceView) -> str:
    """``last 12:00 · next 13:00`` and an ``overdue`` badge; ``-`` without a schedule."""
    if s.slots is None:
        return "-"
    overdue = _overdue(s)
    badge = ""
    if overdue or overdue is None:
        word, kind = ("overdue", "stale") if overdue else ("unknown", "fresh")
        badge = f' <span class="badge {kind}">{word}</span>'
    return (f'<span title="{escape(s.slots.describe(overdue))}">last {_fmt_ts(s.slots.last)} · '
            f"next {_fmt_ts(s.slots.next)}</span>{badge}")  # fmt: skip


def _source_section(s: SourceView, now: datetime) -> str:
    newest = s.newest
    outcome = newest.outcome if newest else s.ledger
    counts = {k: _count(s, sum(1 for r in s.runs if r.outcome == k))
              for k in ("completed", "failed", "abandoned", "running")}  # fmt: skip
    attrs = " ".join(f'data-{k}="{v}"' for k, v in counts.items())
    overdue = _overdue(s)
    parts = [
        f'<section class="source" id="source-{escape(s.name)}" data-source="{escape(s.name)}" '
        f'data-ledger="{escape(s.ledger)}" data-newest="{escape(outcome)}" '
        f'data-runs="{_count(s, len(s.runs))}" {attrs} data-stale="{str(s.stale).lower()}" '
        f'data-overdue="{"-" if overdue is None else str(overdue).lower()}">',
        f"<h2>{escape(s.name)} {_badge(outcome)}"
        + (' <span class="badge stale">stale</span>' if s.stale else "")
        + f' <span class="muted">{escape(s.destination)} / {escape(s.dataset)}</span></h2>',
    ]
    if s.slots is not None:
        parts.append(f'<p class="schedule muted">{escape(s.slots.describe(overdue))}</p>')
    if s.ledger in ("unreadable", "unsupported"):
        parts.append(f'<p class="warn">runs ledger {escape(s.ledger)}: {escape(s.error or "")}</p>')
    elif not s.runs:
        parts.append('<p class="muted">no runs recorded</p>')
    else:
        parts.append(
            f"<h3>Run history (newest {len(s.runs)}; bar height = duration, strip = records)</h3>"
            + _history_svg(s.runs)
        )
        failed = next((r for r in s.runs if r.outcome in ("failed", "abandoned")), None)
        if failed is not None and failed.run.error_summary:
            parts.append(
                f"<h3>Newest failure ({_fmt_ts(failed.run.started_at)})</h3>"
                f'<div class="error">{escape(failed.run.error_summary)}</div>'
            )
    for problem in s.problems:
        parts.append(f'<p class="warn">{escape(problem)}</p>')
    if s.backfills:
        parts.append("<h3>Backfills</h3>")
        parts += [_chunk_grid(bid, rows) for bid, rows in sorted(s.backfills.items())]
    t = s.totals
    parts.append(
        ""
        if not s.runs
        else '<h3>Receipts (runs shown)</h3><table class="receipts"><tr><th class="num">in</th>'
        '<th class="num">loaded</th><th class="num">filtered</th><th class="num">quarantined'
        '</th><th class="num">warned</th><th class="num">failed</th><th class="num">cost</th>'
        f'</tr><tr data-quarantined="{t.rejected}"><td class="num">{t.records_in}</td>'
        f'<td class="num">{t.loaded}</td><td class="num">{t.filtered}</td>'
        f'<td class="num">{t.rejected}</td><td class="num">{t.warned}</td>'
        f'<td class="num">{t.failed}</td><td class="num">{_money(t.cost)}</td></tr></table>'
    )
    if s.drift:
        rows = "".join(
            f"<tr><td>{escape(d.table)}</td><td>{escape(d.column)}</td><td>{escape(d.kind)}</td>"
            f"<td>{_fmt_ts(d.first_seen_at)}</td><td>{'yes' if d.acknowledged else 'no'}</td></tr>"
            for d in s.drift
        )
        parts.append(
            f'<h3>Schema drift ({len(s.drift)} open)</h3><table class="drift" '
            f'data-drift="{len(s.drift)}"><tr><th>table</th><th>column</th><th>kind</th>'
            f"<th>first seen</th><th>acknowledged</th></tr>{rows}</table>"
        )
    parts.append("</section>")
    return "\n".join(parts)


def _freshness_badge(s: SourceView) -> str:
    """The SLA verdict, coloured by level (green ok, amber warn, red error); none without an
    SLA."""
    f = s.freshness
    if f is None or f.sla is None:
        return ""
    return (f' <span class="badge freshness-{escape(str(f.level))}" title="{escape(f.describe())}"'
            f">SLA {escape(str(f.level))}</span>")  # fmt: skip


def _fleet_table(report: FleetReport) -> str:
    now = report.generated_at
    rows = []
    for s in report.sources:
        newest = s.newest
        outcome = newest.outcome if newest else s.ledger
        started = newest.run.started_at if newest else None
        records = newest.run.records_loaded if newest and newest.run.records_loaded else "-"
        fresh = ('<span class="badge stale">stale</span>' if s.stale
                 else '<span class="badge fresh">fresh</span>' if newest else "")  # fmt: skip
        fresh += _freshness_badge(s)
        level = s.freshness.level if s.freshness is not None else "unknown"
        rows.append(
            f'<tr data-source="{escape(s.name)}" data-freshness="{escape(str(level))}">'
            f'<td><a href="#source-{escape(s.name)}">'
            f"{escape(s.name)}</a></td><td>{_badge(outcome)}</td><td>{_fmt_ts(started)}</td>"
            f"<td>{_age(now, started) if started else '-'} {fresh}</td>"
            f"<td>{_schedule_cell(s)}</td>"
            f'<td class="num">{records}</td><td class="num">{_count(s, len(s.runs))}</td>'
            f'<td class="num">{_count(s, s.totals.rejected, "receipts")}</td>'
            f'<td class="num">{_money(s.totals.cost)}</td>'
            f'<td class="num">{_count(s, len(s.drift), "drift")}</td></tr>'
        )
    return (
        '<table class="fleet"><tr><th>source</th><th>newest</th><th>started (UTC)</th>'
        '<th>staleness</th><th>schedule (UTC)</th><th class="num">records</th>'
        '<th class="num">runs</th>'
        '<th class="num">quarantined</th><th class="num">cost</th><th class="num">drift</th></tr>'
        + "".join(rows)
        + "</table>"
    )


def render(report: FleetReport) -> str:
    """The whole page."""
    now = report.generated_at
    newest = [s.newest.outcome if s.newest else s.ledger for s in report.sources]
    cards: list[tuple[str, object]] = [("sources", len(report.sources))] + [
        (k, "-" if report.nothing_read else newest.count(k))
        for k in ("completed", "failed", "abandoned", "running")
    ]  # counts of the sources read; "-" when none could be, never "0 failed" over an outage
    unread = sum(1 for s in report.sources if not s.known)
    if unread:
        cards.append(("unreadable", unread))
    costs = [s.totals.cost for s in report.sources if s.totals.cost is not None]
    cards.append(("cost (runs shown)", _money(sum(costs) if costs else None)))
    card_html = "".join(f'<div class="card" data-card="{escape(k)}"><b>{v}</b>{escape(k)}</div>'
                        for k, v in cards)  # fmt: skip
    unreadable = report.unreadable
    warn = (
        '<div class="warn" id="unreadable"><b>Not everything could be read:</b><ul>'
        + "".join(f"<li>{escape(u)}</li>" for u in unreadable)
        + "</ul></div>"
        if unreadable
        else ""
    )
    legend = "".join(f'<span><i style="background:{c}"></i>{k}</span>'
                     for k, c in COLOURS.items())  # fmt: skip
    body = "\n".join(_source_section(s, now) for s in report.sources)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>dlt-ops fleet report: {escape(report.project)}</title>
<style>{CSS}</style></head>
<body><header><h1>dlt-ops fleet report: {escape(report.project)}</h1>
<p>generated {_fmt_ts(now)} UTC · read from the ledgers only · stale after
{report.staleness_days} day(s)</p></header>
<main><div class="cards">{card_html}</div>{warn}
<p class="legend">{legend}</p>
{_fleet_table(report)}
{body}
</main></body></html>
"""
