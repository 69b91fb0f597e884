pytest_plugins = ["dlt_ops.testing.fixtures"]
