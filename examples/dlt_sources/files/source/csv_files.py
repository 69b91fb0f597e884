"""The csv_files source: CSV files in a folder through dlt's ``filesystem`` + ``read_csv``,
incremental on the files' modification time (a re-run reads only new or changed files).
"""

import os
from datetime import UTC, datetime

import dlt
from dlt.sources.filesystem import filesystem, read_csv

START = datetime(2026, 1, 1, tzinfo=UTC)


def project_path(bucket_url: str) -> str:
    """A relative folder is relative to the project root (dlt's run dir), not the cwd."""
    if "://" in bucket_url or os.path.isabs(bucket_url):
        return bucket_url
    return os.path.join(dlt.current.run_context().run_dir, bucket_url)


@dlt.source(name="csv_files")
def csv_files_source(bucket_url: str = dlt.config.value, file_glob: str = "*.csv"):
    """Every row of every matching file; ``bucket_url`` is a folder or any fsspec URL."""
    files = filesystem(bucket_url=project_path(bucket_url), file_glob=file_glob)
    files.apply_hints(incremental=dlt.sources.incremental("modification_date", initial_value=START))
    return (files | read_csv()).with_name("orders")
