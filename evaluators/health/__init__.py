"""Benchmark health: is the benchmark itself sound before a model is graded on it.

`fingerprint.py` (what each database holds: schema, row counts, a content checksum; written by `evaluate.py
doctor fingerprint` and checked before a run given `--fingerprint FILE`), `fingerprint_worker.py` (the part
that reads a database, inside a worker, through the one opener and the existing backends).  docs/doctor.md.
"""
