"""A one-line "what is happening now" on stderr for long commands (a terminal only).

No refresh thread: some commands fork sandboxed children, which is only safe while the process
is single-threaded; the line is redrawn each time the command says what it does next.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager


@contextmanager
def spinner(prefix: str, *, enabled: bool | None = None) -> Iterator[Callable[[str], None]]:
    """Yield ``step(label)``, drawing ``<spinner> <prefix>: <label>`` (nothing off a terminal;
    the line disappears when the block ends)."""
    if enabled is None:
        enabled = sys.stderr.isatty()
    if not enabled:
        yield lambda _label: None
        return
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn

    progress = Progress(
        SpinnerColumn(), TextColumn(f"{prefix}: {{task.description}}"),
        console=Console(stderr=True), auto_refresh=False, transient=True,
    )  # fmt: skip
    with progress:
        task = progress.add_task("starting", total=None)

        def step(label: str) -> None:
            progress.update(task, description=label)
            progress.refresh()

        yield step
