"""Spider 1 and test-suite execution accuracy (test-suite-sql-eval's `eval_exec_match`), reproduced.

`rules` holds the official comparison and query rewrites, `native` reads Spider's
own files (`gold.txt`, `pred.txt`, `database/<db>/*.sqlite`), `run` grades.
"""
