"""What dlt-ops 0.1's users call that has another shape here, kept callable as 0.1 called it.

Everything in this package is re-exported lazily from :mod:`dlt_ops` under 0.1's names; what
each maps to, and what was dropped and why, is docs/migrating-from-0.1.md.
"""
