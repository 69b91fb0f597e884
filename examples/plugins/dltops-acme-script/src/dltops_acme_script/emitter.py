"""The acme_script trigger emitter: the project's schedules as a shell script, one
``dlt-ops pipeline run`` per scheduled source, for a scheduler that runs scripts."""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from dlt_ops.plugin_api import ScheduledSource


class AcmeScriptTarget:
    """A ``schedule emit`` target (a ``ScheduleTarget``) and a named origin of runs."""

    description = "run started by a script written by `dlt-ops schedule emit --target acme_script`"
    default_path = "dlt-ops-acme_script.sh"

    def render(
        self,
        sources: Sequence[ScheduledSource],
        *,
        root: str,
        trigger_source: str,
        cli: str = "dlt-ops",
        packages: Sequence[str] = (),
    ) -> str:
        lines = ["#!/bin/sh", "# dlt-ops schedules (dlt-ops schedule emit --target acme_script)"]
        for s in sources:
            lines.append(f"# {s.name}: {s.schedule} ({s.cron}, {s.timezone})")
            lines.append(
                f"{shlex.quote(cli)} --root {shlex.quote(root)} pipeline run "
                f"-s {shlex.quote(s.name)} -y --trigger-source {trigger_source}"
            )
        return "\n".join(lines) + "\n"
