"""dltops-owner: a config key: `owner` under [sources.<X>.dlt_ops], a team name."""
