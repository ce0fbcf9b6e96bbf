"""Execution: the killable workers, the one opener, the engines (backends/), gold cache, EXPLAIN."""
