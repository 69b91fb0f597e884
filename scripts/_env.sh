# Shared setup for the two README commands: uv on PATH, the workspace synced with compiled
# bytecode, and no Python downloads (the machine's interpreter is the one we use).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export UV_PYTHON_DOWNLOADS=never
export UV_COMPILE_BYTECODE=1
export RUNTIME__DLTHUB_TELEMETRY=false
if ! command -v uv >/dev/null 2>&1; then
  if ! python3 -m uv --version >/dev/null 2>&1; then
    echo "installing uv (pip install uv)..." >&2
    python3 -m pip install --quiet uv
  fi
  uv() { python3 -m uv "$@"; }
fi
uv sync --all-packages --quiet
