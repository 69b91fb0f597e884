"""Command groups whose subcommands are imported only when they run.

``dlt-ops pipeline status`` should pay for the status module, not for every command module of
the CLI. A group lists its subcommands as :class:`Entry` rows (name, ``module:attribute``, the
one-paragraph summary its parent's help shows) and turns an entry into a click command the way
``Typer.add_typer`` / ``Typer.command`` would, the first time it is looked up. A group's help
lists the summaries without importing anything; the core tests' ``test_cli_lazy.py`` checks
that they match the commands' own help.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, MutableMapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, ClassVar

import typer
from typer.core import TyperCommand
from typer.models import CommandInfo, TyperInfo

from dlt_ops.cli.help_format import PlainHelpGroup
from dlt_ops.cli.names import guard_names

#: What ``-r`` means now, for a caller of the old global ``-r DIR``.
OLD_ROOT_HINT = (
    "-r is --resource on the commands that filter by resource; the project root is "
    "--root DIR, before or after the command"
)


@dataclass(frozen=True)
class Entry:
    """One subcommand, known by name before its module is imported."""

    name: str
    target: str  # "module:attribute": a ``typer.Typer`` (a group) or a command function
    summary: str  # the first paragraph of its help, as its parent's command list shows it
    #: a plugin's command: ``target`` is unused, the plugin registry builds it by name
    plugin: bool = False

    def load(self) -> Any:
        if self.plugin:
            from dlt_ops.cli.plugin_commands import load_command

            return load_command(self.name)
        module, _, attribute = self.target.partition(":")
        # the import statement's machinery, so `python -X importtime` reports the module
        return getattr(__import__(module, fromlist=[attribute]), attribute)


class _Commands(MutableMapping[str, Any]):
    """``TyperGroup.commands`` whose values are built on first access; names never load."""

    def __init__(self, names: Iterable[str], load: Callable[[str], Any]) -> None:
        self._load = load
        self._built: dict[str, Any] = dict.fromkeys(names)

    def __getitem__(self, name: str) -> Any:
        command = self._built[name]  # KeyError for an unknown name, as a dict
        if command is None:
            command = self._built[name] = self._load(name)
        return command

    def __setitem__(self, name: str, command: Any) -> None:
        self._built[name] = command

    def __delitem__(self, name: str) -> None:
        del self._built[name]

    def __contains__(self, name: object) -> bool:
        return name in self._built

    def __iter__(self) -> Iterator[str]:
        return iter(self._built)

    def __len__(self) -> int:
        return len(self._built)


class LazyGroup(PlainHelpGroup):
    """A ``TyperGroup`` over :attr:`entries`; build one with :func:`lazy_group`."""

    entries: tuple[Entry, ...] = ()
    #: its subcommands are built (and name-guarded) on first use: :func:`guard_names` skips it
    lazy: ClassVar[bool] = True
    #: also list the commands plugins add (the root group only)
    with_plugin_commands: ClassVar[bool] = False
    #: what ``typer.Typer`` passes down by default (the app keeps pretty exceptions off anyway)
    pretty_exceptions_short: ClassVar[bool] = True

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        if self.with_plugin_commands:  # names from entry-point metadata: nothing is imported
            from dlt_ops.cli.plugin_commands import installed_commands

            builtin = [e.name for e in self.entries]
            self.entries = (*self.entries, *(
                Entry(c.name, "", c.summary, plugin=True) for c in installed_commands(builtin)
            ))  # fmt: skip
        eager = dict(self.commands)  # commands registered on the Typer itself, if any
        self.commands = _Commands([e.name for e in self.entries], self._build)
        self.commands.update(eager)
        self._listing = False

    def _build(self, name: str) -> Any:
        entry = next(e for e in self.entries if e.name == name)
        target = entry.load()
        command: Any
        if isinstance(target, typer.Typer):  # as ``Typer.add_typer(target, name=name)``
            command = typer.main.get_group_from_info(
                TyperInfo(target, name=name),
                pretty_exceptions_short=self.pretty_exceptions_short,
                rich_markup_mode=self.rich_markup_mode,
                suggest_commands=self.suggest_commands,
            )
        else:
            command = typer.main.get_command_from_info(  # as ``Typer.command(name)(target)``
                CommandInfo(name=name, callback=target),
                pretty_exceptions_short=self.pretty_exceptions_short,
                rich_markup_mode=self.rich_markup_mode,
            )
        return guard_names(command)  # every command's names are checked the same way

    def list_commands(self, ctx: Any) -> list[str]:
        return list(self.commands)  # names only: listing must not import

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if self._listing and cmd_name in self.commands:
            built = self.commands._built[cmd_name]  # type: ignore[attr-defined]
            return built if built is not None else self._summary(cmd_name)
        return self.commands.get(cmd_name)

    def _summary(self, name: str) -> TyperCommand:
        """A stand-in that carries only what a command list shows: name and summary."""
        entry = next(e for e in self.entries if e.name == name)
        return TyperCommand(name=name, help=entry.summary)

    @contextmanager
    def _summaries(self) -> Iterator[None]:
        self._listing = True
        try:
            yield
        finally:
            self._listing = False

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except Exception as exc:
            # `-r DIR` was once the global root: say where it went instead of "No such option"
            if type(exc).__name__ == "NoSuchOption" and getattr(exc, "option_name", "") == "-r":
                exc.message = f"{exc.message} ({OLD_ROOT_HINT})"  # type: ignore[attr-defined]
            raise

    def format_help(self, ctx: Any, formatter: Any) -> None:
        with self._summaries():
            super().format_help(ctx, formatter)

    def shell_complete(self, ctx: Any, incomplete: str) -> list[Any]:
        with self._summaries():
            return super().shell_complete(ctx, incomplete)


def lazy_group(*entries: Entry, plugin_commands: bool = False) -> type[LazyGroup]:
    """A :class:`LazyGroup` class over ``entries`` (and, with ``plugin_commands``, the
    commands installed plugins add), for ``typer.Typer(cls=...)``."""
    attrs = {"entries": tuple(entries), "with_plugin_commands": plugin_commands}
    return type("LazyGroup", (LazyGroup,), attrs)
