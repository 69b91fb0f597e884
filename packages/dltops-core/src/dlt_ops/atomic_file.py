"""Replace a small file in one step: a reader sees the old content or the new, never a part."""

from __future__ import annotations

import os
import threading
from contextlib import suppress
from pathlib import Path


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temp file beside it and ``os.replace``.

    The temp name carries the process and thread, so two writers never share one; it is removed
    when the write fails. Creates the parent directory. Raises ``OSError``.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}-{threading.get_ident()}.tmp")
    try:
        tmp.write_text(text, "utf-8")
        os.replace(tmp, path)
    except BaseException:
        with suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise
