"""BIRD in its own format: `evaluate.py bird` with the official evaluation scripts' arguments.

`native` reads BIRD's files (dev and mini-dev layouts), `official` holds the scorer's rules and quirks,
`run` grades: the official EX verdict (`ex_bird`) and our typed one (`ex_strict`) for every question.
"""

# What a SQLite question's worker runs: the engine, then the comparison (`pair`), imported once in the
# workers' zygote (execution/zygote.py) rather than in each worker forked from it.
SQLITE_WORKER_IMPORTS = (
    "evaluators.execution.backends.sqlite_backend",
    "evaluators.bird.pair",
    "evaluators.matching.typed_rows",
    "evaluators.metrics.bird",
    "evaluators.metrics.soft_f1",
)
