"""The sandbox child: import one source module under an audit hook and report what it did.

Runs in a child process (a fork of the caller on Linux, else ``python -m`` of this module), so
the parent never imports a module until its verdict is clean. The hook *observes*: the side
effects really happen once, here. Only events attributed to project code count: the nearest
module-level frame on the stack must be a project file outside site-packages, so
``import requests`` opening sockets inside urllib3 is not the project's fault.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from types import FrameType
from typing import Any

MARKER = "@@dlt-ops-sandbox-verdict@@ "
MAX_VIOLATIONS = 50

_NETWORK = {
    "socket.connect", "socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyname_ex",
    "socket.gethostbyaddr", "socket.bind", "socket.sendto", "socket.sendmsg", "urllib.Request",
    "http.client.connect", "ftplib.connect", "smtplib.connect",
}  # fmt: skip
_DISK = {
    "os.mkdir", "os.rename", "os.remove", "os.rmdir", "os.truncate", "os.link", "os.symlink",
    "shutil.rmtree", "shutil.move", "shutil.copyfile", "shutil.copytree", "tempfile.mkstemp",
    "tempfile.mkdtemp", "os.chmod", "os.utime",
}  # fmt: skip
_SPAWN = {"subprocess.Popen", "os.system", "os.posix_spawn", "os.exec", "os.spawn", "os.fork",
          "os.forkpty", "pty.spawn"}  # fmt: skip
PIPELINE_EVENT = "dlt_ops.pipeline"
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC | os.O_EXCL


def classify(event: str, args: tuple[Any, ...]) -> str | None:
    """The violation kind of an audit event, or ``None`` when it is harmless."""
    if event in _NETWORK:
        return "network"
    if event == "open":
        mode = args[1] if len(args) > 1 else None
        flags = args[2] if len(args) > 2 else 0
        if isinstance(mode, str) and any(c in mode for c in "wax+"):
            return "disk-write"
        if isinstance(flags, int) and flags & _WRITE_FLAGS:
            return "disk-write"
        return None
    if event in _DISK:
        return "disk-write"
    if event in _SPAWN:
        return "process-spawn"
    if event == PIPELINE_EVENT:
        return "pipeline-run"
    return None


def _target(event: str, args: tuple[Any, ...]) -> str:
    if event == "open" and args:
        return str(args[0])
    if event == "socket.connect" and len(args) > 1:
        return repr(args[1])
    if event == "socket.getaddrinfo" and len(args) > 1:
        return f"{args[0]}:{args[1]}"
    return repr(args)[:200]


class Recorder:
    """Audit hook state: armed only while the target module executes."""

    def __init__(self, root: Path) -> None:
        real = os.path.realpath(root)
        self.prefixes = tuple({os.path.normcase(str(root)), os.path.normcase(real)})
        self.armed = False
        self.busy = False
        self.violations: list[dict[str, Any]] = []
        self._seen: set[tuple[str, str, str]] = set()

    def _attributed(self, filename: str) -> bool:
        path = os.path.normcase(filename)
        if not path.startswith(self.prefixes):
            return False
        parts = set(Path(path).parts)
        return not ({"site-packages", "dist-packages"} & parts)

    def __call__(self, event: str, args: tuple[Any, ...]) -> None:
        if not self.armed or self.busy:
            return
        kind = classify(event, args)
        if kind is None:
            return
        self.busy = True
        try:
            frame: FrameType | None = sys._getframe(1)
            while frame is not None and frame.f_code.co_name != "<module>":
                frame = frame.f_back
            if frame is None or not self._attributed(frame.f_code.co_filename):
                return
            target = _target(event, args)
            key = (kind, event, target)
            if key in self._seen or len(self.violations) >= MAX_VIOLATIONS:
                return
            self._seen.add(key)
            self.violations.append(
                {
                    "kind": kind,
                    "event": event,
                    "target": target,
                    "file": frame.f_code.co_filename,
                    "line": frame.f_lineno,
                }  # fmt: skip
            )
        finally:
            self.busy = False


def _wrap_dlt() -> None:
    """Make pipeline creation and runs visible to the audit hook (this process only)."""
    import dlt

    def wrap(owner: Any, attr: str) -> None:
        original = getattr(owner, attr, None)
        if original is None:
            return

        def recording(*args: Any, **kwargs: Any) -> Any:
            sys.audit(PIPELINE_EVENT, attr)
            return original(*args, **kwargs)

        setattr(owner, attr, recording)

    for attr in ("pipeline", "run", "attach"):
        wrap(dlt, attr)
    for attr in ("run", "extract", "normalize", "load"):
        wrap(dlt.Pipeline, attr)


def check(root: Path, pipeline: str, module_path: Path) -> dict[str, Any]:
    """Import the module under the hook and return the verdict (never raises)."""
    from dlt_ops.project.loader import forget_project_modules, import_source_module

    sys.dont_write_bytecode = True  # bytecode caching is not the project's disk write
    os.environ["DLT_PROJECT_DIR"] = str(root)
    error: str | None = None
    recorder = Recorder(root)
    try:
        _wrap_dlt()
    except Exception:  # a module that never imports dlt can still be checked
        pass
    forget_project_modules(root)
    sys.addaudithook(recorder)
    recorder.armed = True
    try:
        import_source_module(root, pipeline, module_path)
    except BaseException as exc:  # user code may raise anything, SystemExit included
        error = f"module raised at import: {type(exc).__name__}: {exc}"
    finally:
        recorder.armed = False
    return {"import_error": error, "violations": recorder.violations}


def silence_std_streams() -> int:
    """Point fds 1 and 2 at /dev/null (user prints must not reach the parent's stdout)."""
    saved = os.dup(1)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    os.close(null)
    sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
    return saved


def main(argv: list[str]) -> int:
    """``python -m dlt_ops.project._sandbox_child '<json payload>'`` (the spawn strategy)."""
    try:
        payload = json.loads(argv[1])
        root, pipeline = Path(payload["root"]), payload["pipeline"]
        module_path = Path(payload["module"])
    except (IndexError, KeyError, ValueError, TypeError):
        sys.stderr.write('usage: _sandbox_child \'{"root":..,"pipeline":..,"module":..}\'\n')
        return 2
    saved = silence_std_streams()
    verdict = check(root, pipeline, module_path)
    os.write(saved, (MARKER + json.dumps(verdict) + "\n").encode())
    return 0


if __name__ == "__main__":
    os._exit(main(sys.argv))
