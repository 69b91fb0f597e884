"""Running one source: window injection, preflight, the dlt pipeline, the ledger."""
