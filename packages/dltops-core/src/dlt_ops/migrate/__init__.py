"""``dlt-ops migrate``: read a dlt-ops 0.1 project, say what changes, and adopt it in place.

A 0.1 project keeps working here once three things are done, each idempotent: its
``config.toml`` renames 0.1's plugin axes (:mod:`.config_file`), its tables in the destination
gain the columns this version keeps (:mod:`.tables`: history, backfill coverage and resume
points stay where they are), and dlt's working directories move from dlt's global pipelines
directory into the project (:mod:`.working_dirs`). :mod:`.service` plans and applies them.
"""
