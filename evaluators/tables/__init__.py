"""Table comparison: reading tables, the official column-vector rule and the strict rule."""
