#!/usr/bin/env bash
# README command 1: set everything up, then run the DuckDB quickstart.
source "$(dirname "${BASH_SOURCE[0]}")/_env.sh"
uv run --no-sync python scripts/quickstart.py
