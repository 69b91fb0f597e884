"""Built-in plugins. They register through dltops-core's own entry points, like any plugin."""
