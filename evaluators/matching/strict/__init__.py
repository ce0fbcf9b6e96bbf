"""The strict table rule (rule.py): typed cells, a one-to-one column mapping, rows kept whole."""
