"""One garbage-collector setting for processes the ``dlt-ops`` command owns.

By the time a run starts extracting, its process holds ~100,000 objects that live until it
exits: modules, dlt's and the source's classes and functions, SQLAlchemy's dialect tables. Every
full collection during the run walks all of them again; on a small 1,000-row run that is
~60 ms, a twentieth of the run. :func:`settle` moves them out of the collector's view
(``gc.freeze()``) once per process, just before the first extract. It acts only after the CLI
called :func:`allow`: a library caller (an Airflow task, a notebook) keeps its own heap as it
was. Later runs of the same process (a backfill's chunks, the scheduler) leave the heap alone,
so only the first run's start-up objects stay pinned, never a growing pile.
"""

from __future__ import annotations

import gc

_allowed = False
_settled = False


def allow() -> None:
    """This process is the ``dlt-ops`` command: :func:`settle` may freeze its heap."""
    global _allowed
    _allowed = True


def settle() -> bool:
    """Freeze what start-up built, once per allowed process; whether it did now."""
    global _settled
    if not _allowed or _settled:
        return False
    _settled = True
    gc.freeze()
    return True
