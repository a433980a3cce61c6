"""The pure core: log records in, typed events and verdicts out.

Nothing here performs I/O, reads the environment or the wall clock; time arrives as event timestamps and as an
explicit ``now_ms`` argument. A test enforces the import rules.
"""
