"""Grading: one instance (instance.py), SQL answers and execution_match, a whole submission (run.py)."""
