"""The public Spider2 table rule (rule.py) and its fast paths."""
