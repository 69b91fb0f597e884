"""The github_events_api source: one checkpointed, incremental, paginated resource.

The file name is the source name, ``@dlt.source(name=...)`` states it, and
``.dlt/config.toml`` has a ``[sources.github_events_api]`` section with a schedule.
"""

import dlt

from ..resource.events import events


@dlt.source(name="github_events_api")
def github_events_api_source():
    """Events from the fixture-backed "API"."""
    return events
