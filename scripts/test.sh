#!/usr/bin/env bash
# README command 2: set everything up, run the whole test suite with coverage, then type-check.
source "$(dirname "${BASH_SOURCE[0]}")/_env.sh"
# The Postgres tests start a throwaway server from the machine's PostgreSQL binaries.
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  echo "installing the PostgreSQL server binaries (apt-get install postgresql)..." >&2
  apt-get update -qq && apt-get install -y -qq --no-install-recommends postgresql >/dev/null
fi
uv run --no-sync pytest --cov --cov-report=term "$@"
# Type checking: mypy over the four packages, configured in the root pyproject.toml (zero errors).
uv run --no-sync mypy
