"""Sandboxed probe of one custom predicate: ``python -m dlt_ops.assertions._probe '<json>'``.

Imports the predicate's module under the same audit hook as the source-module sandbox, so
``validate`` never runs a predicate module's import side effects in its own process, and
reports (as one marked JSON line on the original stdout) whether it resolved and which
import-time side effects project code caused.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any


def probe(root: Path, spec: str) -> dict[str, Any]:
    """Resolve ``spec`` under the audit hook; never raises."""
    from dlt_ops.assertions.checks import resolve_predicate
    from dlt_ops.project._sandbox_child import Recorder

    sys.dont_write_bytecode = True
    os.environ["DLT_PROJECT_DIR"] = str(root)
    recorder = Recorder(root)
    sys.addaudithook(recorder)
    error = None
    recorder.armed = True
    try:
        resolve_predicate(spec, root)
    except BaseException as exc:  # user code may raise anything, SystemExit included
        error = f"{type(exc).__name__}: {exc}"
    finally:
        recorder.armed = False
    return {"error": error, "violations": recorder.violations}


def main(argv: list[str]) -> int:
    """Entry point of the child process."""
    from dlt_ops.project._sandbox_child import MARKER, silence_std_streams

    payload = json.loads(argv[1])
    saved = silence_std_streams()
    result = probe(Path(payload["root"]), payload["predicate"])
    os.write(saved, (MARKER + json.dumps(result) + "\n").encode())
    return 0


if __name__ == "__main__":
    os._exit(main(sys.argv))
