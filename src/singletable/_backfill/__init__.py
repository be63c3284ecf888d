"""Backfill: rewrite the stored items of one entity whose derived attributes are stale.

``items`` decides about one stored item and compiles the requests that fix it (pure); ``flow``
scans the table and drives those decisions as a flow the twins run.
"""
