"""Turning installed plugins off: ``[dlt_ops.plugins] disable`` and ``DLT_OPS_DISABLE_PLUGINS``.

Like pytest's ``-p no:<name>``. An entry is an entry-point name (``freeze``: every entry point
of that name, in any ``dlt_ops.*`` group) or ``<kind>:<name>`` (``secret_backend:airflow``:
that one kind only; entry-point names cannot contain ``:``, so the form is unambiguous).
Distribution names are not accepted: a distribution may ship plugins of several kinds, and a
name that could mean either would be ambiguous. A disabled plugin is never imported.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from dlt_ops.errors import ConfigError
from dlt_ops.plugins.kinds import KINDS

#: The per-process switch: comma-separated entries.
ENV_VAR = "DLT_OPS_DISABLE_PLUGINS"
#: How the project switch is named in messages.
CONFIG_ORIGIN = "[dlt_ops.plugins] disable"


@dataclass(frozen=True)
class Disable:
    """One entry of a disable list, and where it came from (config or environment)."""

    kind: str | None
    name: str
    origin: str

    def matches(self, kind: str, name: str) -> bool:
        """Whether this entry turns off the entry point ``kind``/``name``."""
        return self.name == name and self.kind in (None, kind)

    def __str__(self) -> str:
        return f"{self.kind}:{self.name}" if self.kind else self.name


def entry_problem(entry: str) -> str | None:
    """Why ``entry`` is not a valid disable entry (``None`` when it is)."""
    kind, sep, name = entry.partition(":")
    if not sep:
        return None if entry.strip() == entry and entry else f"'{entry}' is not a plugin name"
    if kind not in KINDS:
        return f"'{entry}': unknown plugin kind '{kind}'; valid kinds: {', '.join(KINDS)}"
    if not name or ":" in name or name.strip() != name:
        return f"'{entry}' is not <kind>:<entry-point name>"
    return None


def parse(entries: Iterable[str], origin: str) -> tuple[Disable, ...]:
    """``entries`` as :class:`Disable` objects; raises ``ValueError`` for a malformed one."""
    out = []
    for entry in entries:
        problem = entry_problem(entry)
        if problem is not None:
            raise ValueError(problem)
        kind, sep, name = entry.partition(":")
        out.append(Disable(kind, name, origin) if sep else Disable(None, entry, origin))
    return tuple(out)


def from_environment(environ: Mapping[str, str] | None = None) -> tuple[Disable, ...]:
    """The entries of ``DLT_OPS_DISABLE_PLUGINS`` (comma-separated; blanks ignored).

    Raises :class:`~dlt_ops.errors.ConfigError` for a malformed entry (exit 2).
    """
    raw = (os.environ if environ is None else environ).get(ENV_VAR, "")
    entries = [e.strip() for e in raw.split(",") if e.strip()]
    try:
        return parse(entries, ENV_VAR)
    except ValueError as exc:
        raise ConfigError(f"{ENV_VAR}: {exc}. Use comma-separated names or kind:name.") from None
