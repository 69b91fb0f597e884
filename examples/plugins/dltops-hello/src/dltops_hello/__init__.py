"""dltops-hello: a command: `dlt-ops hello` counts the project's sources."""
