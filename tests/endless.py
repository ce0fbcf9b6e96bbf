"""Queries that run far longer than any test timeout, whatever the machine.

A plain ``count(*) FROM range(10^10)`` is not one: DuckDB splits it across cores and a large CI
machine finishes it in under two seconds. A cross join of a million rows with itself hashes 10^12
pairs, which is hours of work even on a hundred cores, and DuckDB stops it within milliseconds of an
interrupt.
"""

DUCKDB_ENDLESS = "SELECT sum(hash(a.range + b.range)) FROM range(1000000) a, range(1000000) b"
