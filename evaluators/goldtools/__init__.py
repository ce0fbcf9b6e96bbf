"""Tools for gold folders: `add` a gold instance, `lint` a gold folder, import Spider2-lite gold.

Everything here writes through `jsonl_edit.rewrite_jsonl` (temporary file,
then rename) and grades with the real matchers, so a gold that passes `lint`
is a gold the grader can use.
"""
