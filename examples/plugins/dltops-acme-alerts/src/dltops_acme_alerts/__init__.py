"""dltops-acme-alerts: an alert sink that appends each alert to a JSON-lines file."""
