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
from typing import TYPE_CHECKING

from dlt_ops.scheduler.utc_cron import UtcCron, to_utc
from dlt_ops.triggers import ScheduledSource

if TYPE_CHECKING:
    from dlt_ops.config import ProjectConfig
    from dlt_ops.plugins import PluginRegistry

#: What a crontab's ``PATH`` holds after the CLI's own folder (cron's default is shorter).
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"


def this_cli() -> str:
    """The absolute path of the running ``dlt-ops`` (the console script that started this
    process, else the one beside this interpreter, else the first on ``PATH``)."""
    import shutil
    import sys
    from pathlib import Path

    from dlt_ops.errors import UsageError

    started = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    beside = Path(sys.executable).parent / "dlt-ops"
    for found in (started, beside, shutil.which("dlt-ops")):
        path = Path(found) if found is not None else None
        if path is not None and path.name.startswith("dlt-ops") and path.is_file():
            return str(path.resolve())
    raise UsageError(
        "cannot tell where the dlt-ops executable is (not started as dlt-ops, none beside "
        f"{sys.executable} or on PATH); pass its absolute path with --cli PATH."
    )


def adapter_packages(
    registry: PluginRegistry, config: ProjectConfig, sources: list[str]
) -> list[str]:
    """What a fresh machine installs to run ``sources``: dltops-core, the distribution of each
    of their destinations' adapters, and ``dlt[<engine>]`` for an engine without one."""
    from dlt_ops.destinations import resolve_destination

    adapters = {s.name: s.dist for s in registry.sources("destination") if s.dist}
    out = ["dltops-core"]
    for source in sources:
        engine = resolve_destination(config, source).engine
        dist = adapters.get(engine)
        out.append(dist if dist and dist != "dltops-core" else f"dlt[{engine}]")
    return list(dict.fromkeys(out))


def _command(cli: str, root: str, source: str, trigger_source: str) -> str:
    return (
        f"{cli} --root {shlex.quote(root)} pipeline run -s {shlex.quote(source)} -y "
        f"--trigger-source {trigger_source}"
    )


@dataclass(frozen=True)
class CronTarget:
    """A crontab: one line per scheduled source, each under the ``CRON_TZ`` of its zone (cronie
    honours it; a cron that does not reads every line in its own zone)."""

    name: str = "cron"
    description: str = "run started by a crontab line written by `dlt-ops schedule emit`"
    default_path: str = "dlt-ops.crontab"

    def render(
        self,
        sources: Sequence[ScheduledSource],
        *,
        root: str,
        trigger_source: str,
        cli: str = "dlt-ops",
        packages: Sequence[str] = (),
    ) -> str:
        """Lines that call ``cli`` (an absolute path: cron's ``PATH`` is ``/usr/bin:/bin``)
        under a ``PATH`` holding its folder; ``packages`` is not used (nothing is installed)."""
        folder = cli.rpartition("/")[0]
        lines = [
            "# dlt-ops schedules (written by `dlt-ops schedule emit --target cron`).",
            "# Each line is read in the CRON_TZ above it: keep a cron that honours CRON_TZ",
            "# (cronie), or run cron in UTC with UTC schedules only.",
            "# Install with: crontab -l | cat - dlt-ops.crontab | crontab -",
            f"PATH={folder + ':' if folder else ''}{SYSTEM_PATH}",
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
                f"{_command(shlex.quote(cli), root, s.name, trigger_source)} >> {log} 2>&1"
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

    def render(
        self,
        sources: Sequence[ScheduledSource],
        *,
        root: str,
        trigger_source: str,
        cli: str = "dlt-ops",
        packages: Sequence[str] = ("dltops-core",),
    ) -> str:
        """The workflow; each job installs ``packages`` (dltops-core, the adapters the sources'
        destinations need) and runs ``cli``. A schedule GitHub would run less often than it
        says (more than once per 5 minutes) is refused."""
        by_cron: dict[str, list[ScheduledSource]] = {}
        utc: dict[str, UtcCron] = {}
        for s in sources:
            check_interval(s)
            converted = to_utc(s.name, s.cron, s.timezone)
            key = s.cron if s.timezone == "UTC" else f"{converted.cron} {s.timezone}"
            utc[key] = converted
            by_cron.setdefault(key, []).append(s)
        out = [
            "# dlt-ops schedules (written by `dlt-ops schedule emit --target github-actions`).",
            "name: dlt-ops",
            "on:",
            "  workflow_dispatch:",
            "    inputs:",
            "      source:",
            "        description: 'The source to run (all: every scheduled source)'",
            "        type: choice",
            f"        options: [{', '.join(_q(n) for n in ['all', *(s.name for s in sources)])}]",
            "        default: 'all'",
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
            picked = " || ".join(
                f"inputs.source == {_sq(n)}" for n in ["all", *(s.name for s in group)]
            )
            step_if = ("        if: github.event_name != 'workflow_dispatch' || "
                       "inputs.source == 'all' || inputs.source == matrix.source")  # fmt: skip
            command = _command(cli, root, "${{ matrix.source }}", trigger_source)
            out += [
                f"  schedule-{k}:",
                f"    name: {_q(f'dlt-ops {label}')}",
                "    if: "
                + _q(
                    f"(github.event_name == 'workflow_dispatch' && ({picked})) || "
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
                "      - uses: actions/checkout@v5",
                step_if,
                "      - uses: actions/setup-python@v6",
                step_if,
                "        with:",
                "          python-version: '3.11'",
                "      - run: " + _q("pip install " + " ".join(map(shlex.quote, packages))),
                step_if,
                "      - run: " + _q(_guarded(utc[key], command)),
                step_if,
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


#: GitHub runs a scheduled workflow at most once per this many minutes.
GITHUB_SHORTEST_MINUTES = 5


def check_interval(source: ScheduledSource) -> None:
    """Refuse a schedule that fires more often than GitHub runs workflows: it would run less
    often than it says (actionlint fails such a workflow too)."""
    from croniter import croniter

    from dlt_ops.errors import ConfigError

    fields = croniter(source.cron).expanded
    minutes = sorted(int(m) for m in fields[0]) if fields[0] != ["*"] else list(range(60))
    hours = fields[1]
    gaps = [b - a for a, b in zip(minutes, minutes[1:], strict=False)]
    if hours == ["*"] or any(int(h) + 1 in {int(x) for x in hours} for h in hours):
        gaps.append(60 - minutes[-1] + minutes[0])  # the last minute of an hour to the next's
    shortest = min(gaps, default=60)
    if shortest < GITHUB_SHORTEST_MINUTES:
        raise ConfigError(
            f"source '{source.name}': schedule '{source.schedule}' fires every {shortest} "
            f"minute(s), but GitHub Actions runs a scheduled workflow at most once every "
            f"{GITHUB_SHORTEST_MINUTES} minutes. Give it a schedule at least "
            f"{GITHUB_SHORTEST_MINUTES} minutes apart, or run it with `dlt-ops scheduler run` or "
            "cron (`schedule emit --target cron`)."
        )


def _sq(value: str) -> str:
    """A single-quoted string inside a GitHub expression."""
    return "'" + value.replace("'", "''") + "'"
