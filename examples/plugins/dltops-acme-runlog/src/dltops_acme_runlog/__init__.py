"""dltops-acme-runlog: a lifecycle observer: one JSON line per finished run."""
