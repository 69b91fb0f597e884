"""dltops-litefile: a destination adapter on SQLite (sqlite3), a dataset as a table-name prefix."""
