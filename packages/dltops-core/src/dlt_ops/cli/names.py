"""Every command's names checked by :func:`dlt_ops.names.check_name`, in one place.

:func:`guard_names` walks a command (a group's already-built subcommands too) and puts the check
in front of the callback of each option or argument that takes a name (``--source``,
``--resource``, ``--dataset``, ``--run-id``, ``--pipeline``; ``backfill SOURCE``), and the path
check in front of each path option (``--output``, ``--root``, ``--cli``): the lazy groups call
it on every command they build, so no command can forget it, and a bad name is
refused while the command line is parsed (exit 2, before the command imports anything).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import PurePath
from typing import Any

import typer

from dlt_ops.names import InvalidNameError, check_name, check_path

#: Option (its Python name) -> what its values name.
NAME_OPTIONS = {
    "source": "source",
    "resource": "resource",
    "dataset": "dataset",
    "run_id": "run id",
    "pipeline": "pipeline",
}
#: Option (its Python name) -> how a refusal names it; its values are paths.
PATH_OPTIONS = {"output": "--output", "root": "--root", "cli": "--cli"}


def _checked(
    subject: str, callback: Callable[..., Any] | None, *, path: bool = False
) -> Callable[..., Any]:
    def check(ctx: Any, param: Any, value: Any) -> Any:
        # the option's own check first: its refusal may say more (`-r DIR`: use --root)
        value = callback(ctx, param, value) if callback is not None else value
        values = value if isinstance(value, list | tuple) else [value]
        for item in values:
            if isinstance(item, str | PurePath):
                try:
                    if path:
                        check_path(str(item), subject=subject)
                    else:
                        check_name(str(item), subject=subject)
                except InvalidNameError as exc:
                    raise typer.BadParameter(str(exc), ctx=ctx, param=param) from None
        return value

    check.__dlt_ops_names__ = True  # type: ignore[attr-defined]
    return check


def guard_names(command: Any) -> Any:
    """Put the name check on ``command``'s name options (and its built subcommands'). Typer
    builds commands with its own copy of click, so parameters are matched by shape."""
    for param in command.params:
        name = param.name or ""
        subject = NAME_OPTIONS.get(name) or PATH_OPTIONS.get(name)
        if subject is None or getattr(param, "param_type_name", "") not in ("option", "argument"):
            continue
        if not getattr(param.callback, "__dlt_ops_names__", False):
            param.callback = _checked(subject, param.callback, path=name in PATH_OPTIONS)
    if isinstance(getattr(command, "commands", None), dict) and not getattr(command, "lazy", False):
        for sub in command.commands.values():
            guard_names(sub)
    return command
