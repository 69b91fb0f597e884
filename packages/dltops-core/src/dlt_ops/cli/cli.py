"""``dlt_ops.cli.cli:cli``, 0.1's console-script target, for scripts and tests that call it.

``cli`` is the ``dlt-ops`` command tree as a click group of the ``click`` package:
``cli()`` runs it on ``sys.argv``, ``click.testing.CliRunner().invoke(cli, [...])`` drives it
in-process, and tools that walk a click tree (``mkdocs-click``, ``sphinx-click``, a script
checking every verb's ``--help``) see every group and command. Expected failures end as they
do from the console script: one ``error:`` line and the documented exit code.

typer builds its commands on a click of its own (``typer._click``), so the typer tree is not
a ``click.Group`` to a caller's ``isinstance``. The tree here mirrors it, one node per
command, built when first looked up (as the typer groups load their modules); invoking any
node runs the typer command it mirrors, so behaviour stays the console script's.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import click


def _typer_tree() -> Any:
    import typer

    from dlt_ops.cli.app import app

    return typer.main.get_command(app)


class _Mirrors(Mapping[str, click.Command]):
    """A group's subcommands, mirrored the first time each is looked up."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self._built: dict[str, click.Command] = {}

    def __getitem__(self, name: str) -> click.Command:
        if name not in self._built:
            self._built[name] = _mirror(self._inner.commands[name])
        return self._built[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._inner.commands)

    def __len__(self) -> int:
        return len(self._inner.commands)


def _fields(inner: Any) -> dict[str, Any]:
    """What a caller walking the tree reads: names, options (``.opts``), help texts."""
    return {
        "name": inner.name,
        "params": list(inner.params),
        "help": inner.help,
        "short_help": inner.short_help,
        "hidden": inner.hidden,
        "deprecated": inner.deprecated,
    }


class _Mirrored:
    """Running a mirrored node runs the typer command, with the console script's errors."""

    inner: Any

    def main(self, *args: Any, **kwargs: Any) -> Any:
        from dlt_ops.cli.errors import handle_errors

        with handle_errors():
            return self.inner.main(*args, **kwargs)


class _Group(_Mirrored, click.Group):
    def __init__(self, inner: Any) -> None:
        self.inner = inner
        click.Group.__init__(self, commands=_Mirrors(inner), **_fields(inner))  # type: ignore[arg-type]


class _Command(_Mirrored, click.Command):
    def __init__(self, inner: Any) -> None:
        self.inner = inner
        click.Command.__init__(self, **_fields(inner))


def _mirror(command: Any) -> click.Command:
    return _Group(command) if hasattr(command, "commands") else _Command(command)


cli: click.Group = _Group(_typer_tree())

__all__ = ["cli"]
