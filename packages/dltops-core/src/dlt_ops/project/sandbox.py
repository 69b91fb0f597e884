"""Phase 2, parent side: get an import-safety verdict for each module, from cache or a child.

A verdict is cached in ``<root>/.dlt-ops/sandbox-verdicts.json`` keyed by the module's path and
a hash of its content *and* of every other ``.py`` file in its pipeline directory (a source
module imports its siblings), plus the dlt-ops and Python versions. So an unchanged module is
sandboxed once, not on every run. Only deterministic verdicts are cached: clean, or with
violations. Timeouts, crashes and import errors are re-checked next time.

Children run concurrently (at most one per CPU). On Linux, when the caller is single-threaded,
a child is a ``fork`` of the caller, which has already imported dlt, so a check costs the
module's own import time instead of a fresh interpreter plus ``import dlt``. Otherwise (or with
``DLT_OPS_SANDBOX=spawn``) it is ``python -m dlt_ops.project._sandbox_child``.
"""

from __future__ import annotations

import hashlib
import json
import os
import select
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dlt_ops import __version__
from dlt_ops.atomic_file import write_atomically
from dlt_ops.log import get_logger
from dlt_ops.project.model import STATE_DIR

log = get_logger(__name__)

CACHE_FILE = "sandbox-verdicts.json"
DEFAULT_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class Violation:
    """One import-time side effect attributed to project code."""

    kind: str  # network | disk-write | process-spawn | pipeline-run
    event: str
    target: str
    file: str = ""
    line: int = 0

    def describe(self, root: Path | None = None) -> str:
        """``network at demo.py:3 — socket.connect(('127.0.0.1', 9))``."""
        where = self.file
        if root is not None and where.startswith(str(root)):
            where = os.path.relpath(where, root)
        return f"{self.kind} at {where}:{self.line}: {self.event}({self.target})"


@dataclass(frozen=True)
class Verdict:
    """The sandbox's answer for one module."""

    import_error: str | None = None
    violations: tuple[Violation, ...] = ()
    sandbox_error: str | None = None
    cached: bool = False

    @property
    def clean(self) -> bool:
        """Safe to import in-process."""
        return not (self.import_error or self.violations or self.sandbox_error)

    @classmethod
    def from_json(cls, data: dict[str, Any], *, cached: bool = False) -> Verdict:
        """Build from the child's JSON."""
        return cls(
            import_error=data.get("import_error"),
            violations=tuple(Violation(**v) for v in data.get("violations", [])),
            cached=cached,
        )

    def to_json(self) -> dict[str, Any]:
        """The cacheable part."""
        return {
            "import_error": self.import_error,
            "violations": [v.__dict__ for v in self.violations],
        }


@dataclass(frozen=True)
class ModuleJob:
    """One module to check."""

    root: Path
    pipeline: str
    module: Path
    digest: str = field(default="", compare=False)


def module_digest(root: Path, pipeline_dir: Path, module: Path) -> str:
    """Hash of the module, its pipeline's other Python files and the tool versions."""
    h = hashlib.sha256(f"{__version__}|{sys.version_info[:2]}|".encode())
    h.update(module.read_bytes())
    for path in sorted(pipeline_dir.rglob("*.py")):
        if "__pycache__" not in path.parts and path != module:
            try:
                content = path.read_bytes()
            except OSError:  # a symlink loop or a dangling link: validate names it
                content = b"\0unreadable"
            h.update(path.relative_to(root).as_posix().encode() + b"\0" + content)
    return h.hexdigest()


class VerdictCache:
    """The per-project verdict cache; unreadable or unwritable state is never fatal."""

    def __init__(self, root: Path) -> None:
        self.path = root / STATE_DIR / CACHE_FILE
        self.root = root
        self._entries: dict[str, Any] = {}
        self._dirty = False
        try:
            data = json.loads(self.path.read_text("utf-8"))
            if data.get("version") == __version__:
                self._entries = data.get("entries", {})
        except (OSError, ValueError, AttributeError):
            pass

    def _key(self, module: Path) -> str:
        return module.relative_to(self.root).as_posix()

    def get(self, module: Path, digest: str) -> Verdict | None:
        """The cached verdict when the digest still matches."""
        entry = self._entries.get(self._key(module))
        if isinstance(entry, dict) and entry.get("digest") == digest:
            try:
                return Verdict.from_json(entry["verdict"], cached=True)
            except (KeyError, TypeError):
                return None
        return None

    def put(self, module: Path, digest: str, verdict: Verdict) -> None:
        """Remember a deterministic verdict."""
        if verdict.sandbox_error or verdict.import_error:
            self._entries.pop(self._key(module), None)
        else:
            self._entries[self._key(module)] = {"digest": digest, "verdict": verdict.to_json()}
        self._dirty = True

    def save(self) -> None:
        """Write atomically; a read-only project just goes uncached."""
        if not self._dirty:
            return
        try:
            write_atomically(
                self.path, json.dumps({"version": __version__, "entries": self._entries})
            )
        except OSError as exc:
            log.debug("sandbox.cache_unwritable", path=str(self.path), error=str(exc))


def _strategy() -> str:
    forced = os.environ.get("DLT_OPS_SANDBOX")
    if forced in ("fork", "spawn"):
        return forced
    if sys.platform == "linux" and threading.active_count() == 1:
        return "fork"
    return "spawn"


class _Running:
    """A child in flight: reads its verdict and enforces the timeout."""

    def __init__(self, job: ModuleJob, strategy: str) -> None:
        from dlt_ops.project import _sandbox_child as child

        self.job, self.started = job, time.monotonic()
        self.buf = b""
        self.proc: subprocess.Popen[bytes] | None = None
        self.pid = 0
        if strategy == "fork":
            rfd, wfd = os.pipe()
            pid = os.fork()
            if pid == 0:  # child: never return into the caller's stack
                code = 1
                try:
                    os.close(rfd)
                    child.silence_std_streams()
                    verdict = child.check(job.root, job.pipeline, job.module)
                    os.write(wfd, (child.MARKER + json.dumps(verdict) + "\n").encode())
                    code = 0
                finally:
                    os._exit(code)
            os.close(wfd)
            self.pid, self.fd = pid, rfd
        else:
            payload = json.dumps(
                {"root": str(job.root), "pipeline": job.pipeline, "module": str(job.module)}
            )
            env = {**os.environ, "DLT_PROJECT_DIR": str(job.root)}
            self.proc = subprocess.Popen(
                [sys.executable, "-B", "-m", "dlt_ops.project._sandbox_child", payload],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=job.root, env=env,
            )  # fmt: skip
            self.pid, self.fd = self.proc.pid, self.proc.stdout.fileno()  # type: ignore[union-attr]

    def read(self) -> bool:
        """Consume available output; ``True`` at EOF."""
        chunk = os.read(self.fd, 65536)
        self.buf += chunk
        return not chunk

    def kill(self) -> None:
        """Stop a child that ran out of time."""
        try:
            os.kill(self.pid, 9)
        except ProcessLookupError:
            pass

    def finish(self, timed_out: bool, timeout: float) -> Verdict:
        """Reap the child and turn its output into a verdict."""
        from dlt_ops.project._sandbox_child import MARKER

        if self.proc is not None:
            stderr = self.proc.stderr.read() if self.proc.stderr else b""
            rc = self.proc.wait()
            self.proc.stdout.close()  # type: ignore[union-attr]
        else:
            os.close(self.fd)
            _, status = os.waitpid(self.pid, 0)
            rc, stderr = os.waitstatus_to_exitcode(status), b""
        if timed_out:
            return Verdict(sandbox_error=f"import-safety check timed out after {timeout:g}s")
        lines = [ln for ln in self.buf.decode(errors="replace").splitlines()
                 if ln.startswith(MARKER)]  # fmt: skip
        if not lines:
            tail = " | ".join(stderr.decode(errors="replace").strip().splitlines()[-3:])
            return Verdict(sandbox_error=f"sandbox child exited {rc} without a verdict: {tail}")
        try:
            return Verdict.from_json(json.loads(lines[-1][len(MARKER) :]))
        except (ValueError, TypeError) as exc:
            return Verdict(sandbox_error=f"corrupt sandbox verdict: {exc}")


def run_children(
    jobs: Sequence[ModuleJob],
    *,
    timeout: float = DEFAULT_TIMEOUT_S,
    on_done: Callable[[ModuleJob, Verdict], None] | None = None,
) -> dict[Path, Verdict]:
    """Check ``jobs`` in child processes, at most one per CPU at a time."""
    if not jobs:
        return {}  # all verdicts cached: do not pay for ``import dlt``
    strategy = _strategy()
    if strategy == "fork":
        import dlt  # noqa: F401 - imported once here so every forked child inherits it
    limit = max(1, os.cpu_count() or 1)
    pending, out = list(jobs), {}
    running: list[_Running] = []
    while pending or running:
        while pending and len(running) < limit:
            running.append(_Running(pending.pop(0), strategy))
        ready, _, _ = select.select([r.fd for r in running], [], [], 0.05)
        now = time.monotonic()
        for r in list(running):
            timed_out = now - r.started > timeout
            if timed_out:
                r.kill()
            elif r.fd not in ready or not r.read():
                continue
            running.remove(r)
            out[r.job.module] = verdict = r.finish(timed_out, timeout)
            log.debug("sandbox.checked", module=str(r.job.module), strategy=strategy,
                      clean=verdict.clean)  # fmt: skip
            if on_done is not None:
                on_done(r.job, verdict)
    return out


def verdicts(
    jobs: Sequence[ModuleJob],
    *,
    timeout: float = DEFAULT_TIMEOUT_S,
    use_cache: bool = True,
    on_done: Callable[[ModuleJob, Verdict], None] | None = None,
) -> dict[Path, Verdict]:
    """Verdicts for ``jobs``: cached ones first, the rest from sandbox children."""
    if not jobs:
        return {}
    root = jobs[0].root
    cache = VerdictCache(root) if use_cache else None
    out: dict[Path, Verdict] = {}
    todo: list[ModuleJob] = []
    for job in jobs:
        hit = cache.get(job.module, job.digest) if cache else None
        if hit is not None:
            out[job.module] = hit
            if on_done is not None:
                on_done(job, hit)
        else:
            todo.append(job)
    fresh = run_children(todo, timeout=timeout, on_done=on_done)
    out.update(fresh)
    if cache is not None:
        for job in todo:
            cache.put(job.module, job.digest, fresh[job.module])
        cache.save()
    return out
