"""``dlt-ops report``: the fleet as one self-contained HTML page, read from the ledgers only."""
