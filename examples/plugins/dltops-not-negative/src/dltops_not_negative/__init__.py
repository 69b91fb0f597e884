"""dltops-not-negative: an assertion type: the listed columns are never negative."""
