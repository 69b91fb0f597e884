"""Schedule targets: the project's schedules written for cron and for GitHub Actions.

Each entry runs ``dlt-ops pipeline run -s <source> -y --trigger-source <target>``; the run
lease keeps two overlapping triggers of one source from running together (the second exits 1
naming the first), and GitHub's per-source concurrency group queues them instead.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from dlt_ops.scheduler.utc_cron import UtcCron, to_utc
from dlt_ops.triggers import ScheduledSource


def _command(root: str, source: str, trigger_source: str) -> str:
    return (
        f"dlt-ops --root {shlex.quote(root)} pipeline run -s {shlex.quote(source)} -y "
        f"--trigger-source {trigger_source}"
    )


@dataclass(frozen=True)
class CronTarget:
    """A crontab: one line per scheduled source, each under the ``CRON_TZ`` of its zone (cronie
    honours it; a cron that does not reads every line in its own zone)."""

    name: str = "cron"
    description: str = "run started by a crontab line written by `dlt-ops schedule emit`"
    default_path: str = "dlt-ops.crontab"

    def render(self, sources: Sequence[ScheduledSource], *, root: str, trigger_source: str) -> str:
        lines = [
            "# dlt-ops schedules (written by `dlt-ops schedule emit --target cron`).",
            "# Each line is read in the CRON_TZ above it: keep a cron that honours CRON_TZ",
            "# (cronie), or run cron in UTC with UTC schedules only.",
            "# Install with: crontab -l | cat - dlt-ops.crontab | crontab -",
            "CRON_TZ=UTC",
        ]
        zone = "UTC"
        for s in sources:
            if s.timezone != zone:  # CRON_TZ holds for the lines below it
                zone = s.timezone
                lines.append(f"CRON_TZ={zone}")
            log = shlex.quote(f"{root}/.dlt-ops/logs/{s.name}.log")
            lines.append(f"# {s.name}: {s.schedule}")
            lines.append(
                f"{s.cron} mkdir -p {shlex.quote(root + '/.dlt-ops/logs')} && "
                f"{_command(root, s.name, trigger_source)} >> {log} 2>&1"
            )
        return "\n".join(lines) + "\n"


def _q(value: str) -> str:
    """A YAML double-quoted scalar (JSON strings are valid YAML)."""
    return json.dumps(value)


@dataclass(frozen=True)
class GitHubActionsTarget:
    """A workflow: one job per schedule, a matrix of its sources, a concurrency group per
    source (a second trigger of one source queues behind the first).

    GitHub reads cron in UTC only: a zoned schedule is written as the UTC hours of each of its
    zone's offsets, and its job checks the local hour before running (:mod:`.utc_cron`)."""

    name: str = "github-actions"
    description: str = "run started by a GitHub Actions workflow written by `dlt-ops schedule emit`"
    default_path: str = ".github/workflows/dlt-ops.yml"

    def render(self, sources: Sequence[ScheduledSource], *, root: str, trigger_source: str) -> str:
        by_cron: dict[str, list[ScheduledSource]] = {}
        utc: dict[str, UtcCron] = {}
        for s in sources:
            converted = to_utc(s.name, s.cron, s.timezone)
            key = s.cron if s.timezone == "UTC" else f"{converted.cron} {s.timezone}"
            utc[key] = converted
            by_cron.setdefault(key, []).append(s)
        out = [
            "# dlt-ops schedules (written by `dlt-ops schedule emit --target github-actions`).",
            "name: dlt-ops",
            "on:",
            "  workflow_dispatch: {}",
        ]
        if by_cron:
            out.append("  schedule:")
            out += [f"    - cron: {_q(c)}" for c in dict.fromkeys(u.cron for u in utc.values())]
        out.append("jobs:")
        if not by_cron:
            out += ["  nothing-scheduled:", "    runs-on: ubuntu-latest", "    steps:",
                    "      - run: echo 'no scheduled sources'"]  # fmt: skip
        for k, (key, group) in enumerate(by_cron.items(), start=1):
            names = ", ".join(_q(s.name) for s in group)
            cron = utc[key].cron
            label = group[0].schedule if len({s.schedule for s in group}) == 1 else key
            out += [
                f"  schedule-{k}:",
                f"    name: {_q(f'dlt-ops {label}')}",
                "    if: "
                + _q(
                    "github.event_name == 'workflow_dispatch' || "
                    f"github.event.schedule == {_sq(cron)}"
                ),
                "    runs-on: ubuntu-latest",
                "    strategy:",
                "      fail-fast: false",
                "      matrix:",
                f"        source: [{names}]",
                "    concurrency:",
                "      group: dlt-ops-${{ matrix.source }}",
                "      cancel-in-progress: false",
                "    steps:",
                "      - uses: actions/checkout@v4",
                "      - uses: actions/setup-python@v5",
                "        with:",
                "          python-version: '3.11'",
                "      - run: pip install dltops-core",
                "      - run: "
                + _q(_guarded(utc[key], _command(root, "${{ matrix.source }}", trigger_source))),
            ]
        return "\n".join(out) + "\n"


def _guarded(converted: UtcCron, command: str) -> str:
    """``command``, run only when the local hour is one the zoned schedule fires in (a manual
    dispatch always runs)."""
    if not converted.local_hours:
        return command
    hours = "|".join(f"{h:02d}" for h in converted.local_hours)
    zone = shlex.quote(converted.timezone)
    return (
        f'if [ "${{{{ github.event_name }}}}" = workflow_dispatch ] || '
        f"TZ={zone} date +%H | grep -qxE '{hours}'; then {command}; "
        f"else echo 'local hour not {hours} in {converted.timezone}: skipped "
        f"(GitHub cron is UTC only)'; fi"
    )


def _sq(value: str) -> str:
    """A single-quoted string inside a GitHub expression."""
    return "'" + value.replace("'", "''") + "'"
