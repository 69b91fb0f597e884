"""dltops-acme: a validate rule: every source module starts with a docstring."""
