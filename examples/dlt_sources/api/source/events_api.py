"""The events_api source: a paginated JSON API through dlt's declarative ``rest_api``, with
dlt-ops checkpoints so a run that fails at a page resumes from its last checkpoint.

The API sends ``updated_at`` as an ISO string. For backfills and ``--from/--to`` windows dlt
must compare the cursor with datetimes, so ``initial_value`` is a datetime and a processing
step parses the field before the incremental sees it (docs/dlt-sources.md).
"""

from datetime import UTC, datetime

import dlt
from dlt.sources.rest_api import rest_api_resources

from dlt_ops import rest_api_checkpoints

START = datetime(2026, 1, 1, tzinfo=UTC)


def parse_updated_at(event: dict) -> dict:
    """The cursor as a datetime (JSON carries a string)."""
    event["updated_at"] = datetime.fromisoformat(event["updated_at"])
    return event


@dlt.source(name="events_api")
def events_api_source(base_url: str = dlt.config.value):
    """Events, oldest first, four per page."""
    resources = rest_api_resources(
        {
            "client": {
                "base_url": base_url,
                "paginator": {"type": "page_number", "base_page": 1, "total_path": "total_pages"},
            },
            "resources": [
                {
                    "name": "events",
                    "write_disposition": "append",
                    "endpoint": {
                        "path": "events",
                        "data_selector": "data",
                        "params": {"since": "{incremental.start_value}"},
                        "incremental": {"cursor_path": "updated_at", "initial_value": START},
                    },
                    "processing_steps": [{"map": parse_updated_at}],
                }
            ],
        }
    )
    # checkpoint every 2 pages by the incremental's cursor (updated_at)
    return rest_api_checkpoints(resources, ["events"], frequency=2)
