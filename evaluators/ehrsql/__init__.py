"""EHRSQL 2024 (glee4810/ehrsql-2024): its files, its scorer's rule in each version, and a run (docs/ehrsql.md)."""
