"""BIRD in its own format: `evaluate.py bird` with the official evaluation scripts' arguments.

`native` reads BIRD's files (dev and mini-dev layouts), `official` holds the scorer's rules and quirks,
`run` grades: the official EX verdict (`ex_bird`) and our typed one (`ex_strict`) for every question.
"""
