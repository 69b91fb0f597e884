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

from dlt_ops.triggers import ScheduledSource


def _command(root: str, source: str, trigger_source: str) -> str:
    return (
        f"dlt-ops --root {shlex.quote(root)} pipeline run -s {shlex.quote(source)} -y "
        f"--trigger-source {trigger_source}"
    )


@dataclass(frozen=True)
class CronTarget:
    """A crontab: one line per scheduled source (UTC; ``CRON_TZ`` where cron honours it)."""

    name: str = "cron"
    description: str = "run started by a crontab line written by `dlt-ops schedule emit`"
    default_path: str = "dlt-ops.crontab"

    def render(self, sources: Sequence[ScheduledSource], *, root: str, trigger_source: str) -> str:
        lines = [
            "# dlt-ops schedules (written by `dlt-ops schedule emit --target cron`).",
            "# Times are UTC: keep CRON_TZ (cronie) or run cron in UTC.",
            "# Install with: crontab -l | cat - dlt-ops.crontab | crontab -",
            "CRON_TZ=UTC",
        ]
        for s in sources:
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
    source (a second trigger of one source queues behind the first)."""

    name: str = "github-actions"
    description: str = "run started by a GitHub Actions workflow written by `dlt-ops schedule emit`"
    default_path: str = ".github/workflows/dlt-ops.yml"

    def render(self, sources: Sequence[ScheduledSource], *, root: str, trigger_source: str) -> str:
        by_cron: dict[str, list[ScheduledSource]] = {}
        for s in sources:
            by_cron.setdefault(s.cron, []).append(s)
        out = [
            "# dlt-ops schedules (written by `dlt-ops schedule emit --target github-actions`).",
            "name: dlt-ops",
            "on:",
            "  workflow_dispatch: {}",
        ]
        if by_cron:
            out.append("  schedule:")
            out += [f"    - cron: {_q(cron)}" for cron in by_cron]
        out.append("jobs:")
        if not by_cron:
            out += ["  nothing-scheduled:", "    runs-on: ubuntu-latest", "    steps:",
                    "      - run: echo 'no scheduled sources'"]  # fmt: skip
        for k, (cron, group) in enumerate(by_cron.items(), start=1):
            names = ", ".join(_q(s.name) for s in group)
            label = group[0].schedule if len({s.schedule for s in group}) == 1 else cron
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
                "      - run: " + _q(_command(root, "${{ matrix.source }}", trigger_source)),
            ]
        return "\n".join(out) + "\n"


def _sq(value: str) -> str:
    """A single-quoted string inside a GitHub expression."""
    return "'" + value.replace("'", "''") + "'"
