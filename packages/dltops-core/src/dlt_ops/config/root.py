"""Finding the project root: the directory whose ``.dlt/config.toml`` has a ``[dlt_ops]`` table."""

from __future__ import annotations

from pathlib import Path

from dlt_ops.config.toml import read_toml_cached
from dlt_ops.errors import ProjectRootNotFoundError
from dlt_ops.names import check_path

CONFIG_RELPATH = Path(".dlt") / "config.toml"


def is_project_root(path: Path) -> bool:
    """Whether ``path`` holds a config with a ``[dlt_ops]`` table (malformed TOML raises)."""
    config = path / CONFIG_RELPATH
    if not config.is_file():
        return False
    return isinstance(read_toml_cached(config).get("dlt_ops"), dict)


def find_project_root(explicit: Path | None = None, start: Path | None = None) -> Path:
    """``explicit`` verified as a root, else the nearest root at or above ``start`` (the cwd).

    A candidate with malformed TOML stops the walk with a ``ConfigParseError``; it is never
    skipped in favour of a parent.
    """
    if explicit is not None:
        check_path(explicit, subject="--root")
        try:
            root = explicit.expanduser().resolve()
            is_dir = root.is_dir()
        except (OSError, RuntimeError) as exc:  # a symlink loop, a name the system refuses
            why = getattr(exc, "strerror", None) or "a symlink loop"
            raise ProjectRootNotFoundError(f"--root {explicit}: {why}.") from exc
        if not is_dir:
            raise ProjectRootNotFoundError(f"--root {explicit}: no such directory.")
        if not is_project_root(root):
            raise ProjectRootNotFoundError(
                f"{root} is not a dlt-ops project root: .dlt/config.toml with a [dlt_ops] "
                f"table is required. Run `dlt-ops init` to scaffold one."
            )
        return root
    here = (start or Path.cwd()).resolve()
    for candidate in (here, *here.parents):
        if is_project_root(candidate):
            return candidate
    raise ProjectRootNotFoundError(
        f"No dlt-ops project found at {here} or any parent directory: looked for "
        f".dlt/config.toml with a [dlt_ops] table. Run `dlt-ops init` to scaffold one, "
        f"or pass --root."
    )
