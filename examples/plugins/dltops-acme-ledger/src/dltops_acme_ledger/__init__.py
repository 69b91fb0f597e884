"""dltops-acme-ledger: a runs-ledger sink that keeps each run attempt's latest state in a JSON file."""
