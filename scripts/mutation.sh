#!/usr/bin/env bash
# The mutation-testing lane (docs/testing.md): mutmut over the modules that guard data, then the
# per-module table in docs/testing.md. Slow (tens of minutes), so not part of README command 2.
#   bash scripts/mutation.sh                      # every module in [tool.mutmut] only_mutate
#   bash scripts/mutation.sh ledger/writer.py     # one module (or a mutmut name pattern)
#   bash scripts/mutation.sh --table              # re-render the table from the last results
source "$(dirname "${BASH_SOURCE[0]}")/_env.sh"
exec .venv/bin/python scripts/mutation/lane.py "$@"
