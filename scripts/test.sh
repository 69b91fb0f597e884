#!/usr/bin/env bash
# README command 2: set everything up, run the whole test suite with coverage, then type-check.
source "$(dirname "${BASH_SOURCE[0]}")/_env.sh"
# The Postgres tests start a throwaway server from the machine's PostgreSQL binaries; the report
# test renders the fleet page in Debian's headless chromium. Installed once, when missing (root).
missing=()
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing+=(postgresql)
command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || missing+=(chromium)
if [ "${#missing[@]}" -gt 0 ] && [ "$(id -u)" = 0 ]; then
  echo "installing ${missing[*]} (apt-get install)..." >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# One pytest-xdist worker per core plus one (3 on these 2-core machines), a test file's tests
# together on one worker. Many tests wait on the CLI subprocesses and servers they start, so a
# spare worker keeps both cores busy: the whole suite took 1,559 s with 3 workers against
# 1,641 s with 2 (`-n auto`) on one 2-core machine, both green. Files go out longest first, as
# tests/durations.json last measured them (conftest.py orders them; xdist would reorder them by
# test count), so the slowest files do not end the run on one worker while the others idle.
workers=$(( $(nproc) + 1 ))
uv run --no-sync pytest -n "$workers" --dist loadfile --no-loadscope-reorder --durations=20 \
  --cov --cov-report=term "$@"
# Type checking: mypy over the four packages, configured in the root pyproject.toml (zero errors).
uv run --no-sync mypy
