"""LiveSQLBench and BIRD-CRITIC: answers graded by running them in a private database, then the task's
test cases (docs/livesql.md).  `run.grade_livesql` is the entry; `sandbox` runs inside a worker process."""
