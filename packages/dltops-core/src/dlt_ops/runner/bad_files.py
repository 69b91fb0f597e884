"""A file dlt's filesystem readers cannot parse: named, with its real line, and a policy.

dlt's ``read_csv`` / ``read_jsonl`` / ``read_parquet`` (and its engine-backed CSV) transformers read
every file of a page in one generator, so a parser error says neither which file it was in nor
(for JSONL, parsed a line at a time) which line: pandas reports ``line 503`` without a name, and
the JSON parser ``line 1`` for line 451. The run wraps each of these readers so a file is read
on its own, and ``[sources.<X>.dlt_ops] on_bad_file`` decides what a bad one does:

* ``fail`` (default): the run fails with :class:`~dlt_ops.errors.BadSourceFileError`, naming the
  resource, the file and the line;
* ``skip``: the file's rows are left out (a file is read whole before its rows go on, so none
  of a bad file's rows load), the other files load, and the receipt lists the file;
* ``quarantine``: as ``skip``, and a copy of the file goes to
  ``.dlt-ops/quarantine/<source>/<run_id>/``.
"""

from __future__ import annotations

import csv
import functools
import io
import json
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from dlt_ops.errors import BadSourceFileError
from dlt_ops.log import get_logger
from dlt_ops.redact import redact
from dlt_ops.runner.skipped import BadFile

log = get_logger(__name__)

POLICIES = ("fail", "skip", "quarantine")
#: dlt's reader transformers live here; anything else over ``filesystem()`` is user code
READERS_MODULE = "dlt.sources.filesystem.readers"
QUARANTINE_DIR = "quarantine"
_LINE = re.compile(r"\bline (\d+)\b")


def guard_file_readers(source: Any, source_name: str, policy: str, root: Path) -> list[str]:
    """Wrap every dlt filesystem reader of ``source`` (a ``DltSource``); returns their names."""
    guarded = []
    for resource in source.resources.values():
        pipe = resource._pipe
        gen = pipe.gen
        if not pipe.has_parent or getattr(gen, "__module__", None) != READERS_MODULE:
            continue
        pipe.replace_gen(_guarded(gen, str(resource.name), source_name, policy, root))
        guarded.append(str(resource.name))
    return guarded


def _guarded(
    gen: Callable[..., Any], resource: str, source: str, policy: str, root: Path
) -> Callable[..., Iterator[Any]]:
    reader = getattr(getattr(gen, "__wrapped__", gen), "__name__", "")

    @functools.wraps(gen)
    def read(item: Any, meta: Any = None) -> Iterator[Any]:
        for file in item if isinstance(item, list) else [item]:
            try:
                if policy == "fail":
                    yield from gen([file], meta)
                    continue
                chunks = list(gen([file], meta))  # whole, so a bad file yields no row
            except Exception as exc:
                bad = _bad(file, exc, resource, reader)
                if policy == "fail":
                    raise BadSourceFileError(
                        resource, source, bad.file, bad.line, bad.error
                    ) from exc
                _set_aside(bad, file, source, policy, root)
                continue
            yield from chunks

    return read


def _name(file: Any) -> str:
    if isinstance(file, dict):
        return str(file.get("relative_path") or file.get("file_name") or file.get("file_url"))
    return str(file)


def _bad(file: Any, exc: Exception, resource: str, reader: str) -> BadFile:
    error = " ".join(redact(f"{type(exc).__name__}: {exc}").split())[:400]
    line = _locate(file, reader)
    if line is None:
        found = _LINE.search(str(exc))
        line = int(found.group(1)) if found and reader != "_read_jsonl" else None
    return BadFile(resource, _name(file), line, error)


def _locate(file: Any, reader: str) -> int | None:
    """The first line of ``file`` its reader cannot take, found by reading it again (only after
    a failure); ``None`` when it cannot tell (a binary format, an unreadable file)."""
    if reader not in ("_read_jsonl", "_read_csv") or not hasattr(file, "open"):
        return None
    try:
        with file.open(mode="rb") as raw:
            text = io.TextIOWrapper(raw, encoding="utf-8", errors="replace", newline="")
            return _jsonl_line(text) if reader == "_read_jsonl" else _csv_line(text)
    except Exception:  # noqa: BLE001 - a best-effort pointer; the error itself is kept
        return None


def _jsonl_line(text: io.TextIOWrapper) -> int | None:
    for number, line in enumerate(text, start=1):
        if line.strip():
            try:
                json.loads(line)
            except ValueError:
                return number
    return None


def _csv_line(text: io.TextIOWrapper) -> int | None:
    rows = csv.reader(text)
    header = next(rows, None)
    if header is None:
        return None
    for row in rows:
        if len(row) > len(header):  # fewer fields read as missing values; more is an error
            return rows.line_num
    return None


def _set_aside(bad: BadFile, file: Any, source: str, policy: str, root: Path) -> None:
    from dlt_ops.project.model import STATE_DIR
    from dlt_ops.runner.context import current_run

    run = current_run()
    if policy == "quarantine" and run is not None:
        target = root / STATE_DIR / QUARANTINE_DIR / source / run.run_id / bad.file
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            with file.open(mode="rb", compression="disable") as src, target.open("wb") as out:
                shutil.copyfileobj(src, out)
            bad = BadFile(bad.resource, bad.file, bad.line, bad.error,
                          target.relative_to(root).as_posix())  # fmt: skip
        except Exception as exc:  # noqa: BLE001 - the file is skipped either way
            log.error("bad_file.quarantine_failed", file=bad.file, error=redact(str(exc)))
    where = f" (line {bad.line})" if bad.line is not None else ""
    log.warning(
        f"[{bad.resource}] skipped {bad.file}{where}: {bad.error}",
        resource=bad.resource, file=bad.file, line=bad.line, policy=policy,
        quarantined=bad.quarantined,
    )  # fmt: skip
    if run is not None:
        run.state.bad_files.append(bad)
