"""0.1's ``config.toml`` spellings this version reads differently, found and rewritten.

0.1 named its plugin axes ``assertion``, ``validators`` and ``orchestrator``; their kinds are
``assertion_rule``, ``validation_rule`` and ``trigger_emitter`` here, so a
``[dlt_ops.plugins.<axis>]`` pick table under the old name is an unknown kind. The rewrite goes
through tomlkit, so comments and layout survive; the original is kept beside it.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from dlt_ops.migrate.model import Change

#: 0.1 plugin axis -> this version's plugin kind
AXIS_RENAMES = {
    "assertion": "assertion_rule",
    "validators": "validation_rule",
    "orchestrator": "trigger_emitter",
}
BACKUP_SUFFIX = ".0.1.bak"


def _plugins(doc: Any) -> Any:
    table = doc.get("dlt_ops")
    plugins = table.get("plugins") if isinstance(table, dict) else None
    return plugins if isinstance(plugins, dict) else None


def renamed(raw: dict[str, Any]) -> tuple[dict[str, Any], list[Change]]:
    """``raw`` with 0.1's axis names replaced, and one change per rename."""
    out = copy.deepcopy(raw)
    plugins = _plugins(out)
    changes: list[Change] = []
    for old, new in AXIS_RENAMES.items():
        if plugins is None or old not in plugins:
            continue
        subject = f"[dlt_ops.plugins.{old}]"
        if new in plugins:
            what = f"both it and [dlt_ops.plugins.{new}] exist: merge them into the second"
            changes.append(Change("config", subject, what, automatic=False))
            continue
        plugins[new] = plugins.pop(old)
        changes.append(Change("config", subject, f"renamed [dlt_ops.plugins.{new}] (0.1's "
                              f"'{old}' axis is the '{new}' plugin kind)"))  # fmt: skip
    return out, changes


def rewrite(path: Path) -> bool:
    """Apply :func:`renamed`'s renames to the file itself, keeping comments and order; the
    original stays as ``config.toml.0.1.bak``. ``False`` when there was nothing to rename."""
    import tomlkit

    from dlt_ops.atomic_file import write_atomically

    text = path.read_text(encoding="utf-8")
    doc = tomlkit.parse(text)
    plugins = _plugins(doc)
    todo = [(o, n) for o, n in AXIS_RENAMES.items()
            if plugins is not None and o in plugins and n not in plugins]  # fmt: skip
    if not todo:
        return False
    assert plugins is not None
    for old, new in todo:
        plugins[new] = plugins.pop(old)
    backup = path.with_name(path.name + BACKUP_SUFFIX)
    if not backup.exists():
        write_atomically(backup, text)
    write_atomically(path, tomlkit.dumps(doc))
    return True
