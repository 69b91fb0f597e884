"""``dlt_ops.cli.cli:cli``, 0.1's console-script target, for scripts and tests that call it.

``cli`` is the ``dlt-ops`` command tree as a click command: ``cli()`` runs it on ``sys.argv``,
``click.testing.CliRunner().invoke(cli, [...])`` drives it in-process. Expected failures end
as they do from the console script: one ``error:`` line and the documented exit code.
"""

from __future__ import annotations

from typing import Any

import typer

from dlt_ops.cli.app import app


class _Cli:
    """The click group, with dlt-ops' error handling around each invocation."""

    def __init__(self) -> None:
        self._command: Any = None

    @property
    def command(self) -> Any:
        if self._command is None:
            self._command = typer.main.get_command(app)
        return self._command

    def main(self, *args: Any, **kwargs: Any) -> Any:
        from dlt_ops.cli.errors import handle_errors

        with handle_errors():
            return self.command.main(*args, **kwargs)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.main(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.command, name)


cli: Any = _Cli()

__all__ = ["cli"]
