"""The built-in scheduler (``dlt-ops scheduler run``) and schedule evaluation."""
