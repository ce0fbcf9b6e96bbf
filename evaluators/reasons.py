"""The closed vocabularies every floor shares: the reason codes of a verdict (what a report's `reason` and
`strict_reason` hold) and what each means.  A `StrEnum`, so a member is the string itself: JSON, CSV and
every comparison with a plain string stay as they were (`Reason.MATCH == "match"`).

tests/test_reasons.py checks that every reason code written in the code (a Verdict's, an InstanceError's, a
QueryFailed's) is a member, so a new reason is added here, with its meaning, or not at all."""

from __future__ import annotations

from enum import StrEnum


class Reason(StrEnum):
    MATCH = "match"
    PARTIAL = "partial"
    VALUE_MISMATCH = "value_mismatch"
    STRUCTURE_MISMATCH = "structure_mismatch"
    ROW_COUNT_MISMATCH = "row_count_mismatch"
    COLUMN_NOT_FOUND = "column_not_found"
    TABLE_NOT_FOUND = "table_not_found"
    FILE_COUNT_MISMATCH = "file_count_mismatch"
    MAPPING_SEARCH_EXHAUSTED = "mapping_search_exhausted"
    NO_NUMBER = "no_number"
    MISSING_PREDICTION = "missing_prediction"
    UNREADABLE_PREDICTION = "unreadable_prediction"
    UNREADABLE_GOLD = "unreadable_gold"
    INVALID_ANSWER = "invalid_answer"
    UNSAFE_PATH = "unsafe_path"
    ANSWER_TYPE_MISMATCH = "answer_type_mismatch"
    UNKNOWN_FUNC = "unknown_func"
    INVALID_SPEC = "invalid_spec"
    INVALID_GOLD = "invalid_gold"
    NEEDS_EXECUTION = "needs_execution"
    INTERNAL_ERROR = "internal_error"
    EXEC_ERROR = "exec_error"
    TIMEOUT = "timeout"
    TEST_FAILED = "test_failed"
    ISSUE_SQL_PASSED = "issue_sql_passed"
    COST_LIMIT = "cost_limit"
    CREDENTIALS_MISSING = "credentials_missing"
    NETWORK_ERROR = "network_error"
    MISSING_EXTRA = "missing_extra"
    NO_DATABASE = "no_database"
    RESULT_TOO_LARGE = "result_too_large"
    MEMORY_LIMIT = "memory_limit"
    DISK_LIMIT = "disk_limit"
    UNHASHABLE_RESULT = "unhashable_result"
    ABSTAINED = "abstained"
    CORRECT_ABSTENTION = "correct_abstention"
    ANSWERED_UNANSWERABLE = "answered_unanswerable"
    OFFICIAL_ERROR = "official_error"
    NO_SUBMIT = "no_submit"
    SOLVED = "solved"
    REWARD_RESET = "reward_reset"
    PHASE1_ONLY = "phase1_only"
    GOLD_FULL_REWARD = "gold_full_reward"
    GOLD_MISSING = "gold_missing"
    GOLD_MULTI_STATEMENT = "gold_multi_statement"
    GOLD_DOES_NOT_RUN = "gold_does_not_run"
    GOLD_TODAY_DATE = "gold_today_date"
    GOLD_EMPTY_OR_UNEQUAL = "gold_empty_or_unequal"
    GOLD_FAILS_OWN_TEST = "gold_fails_own_test"
    UNDECIDED = "undecided"  # internal: the out-of-core route could not decide; pandas grades the pair


# Reasons that never reach a report (a route hands the pair on): no meaning for a reader.
INTERNAL_REASONS = frozenset({Reason.UNDECIDED})


# Gold problems, not the model's: exit 2 unless --allow-gold-errors.
GOLD_ERROR_REASONS = (Reason.INVALID_GOLD, Reason.UNKNOWN_FUNC, Reason.INVALID_SPEC, Reason.UNREADABLE_GOLD)

MEANINGS: dict[Reason, str] = {
    Reason.MATCH: "the answer passes",
    Reason.PARTIAL: "a reward between 0 and 1 (qa_f1)",
    Reason.VALUE_MISMATCH: "same shape, different values",
    Reason.STRUCTURE_MISMATCH: "Spider exact set match (test-suite --etype match): the parsed clauses differ",
    Reason.ROW_COUNT_MISMATCH: "the tables have different numbers of rows",
    Reason.COLUMN_NOT_FOUND: "a gold column has no matching predicted column",
    Reason.TABLE_NOT_FOUND: "a table the gold names is missing from the predicted DuckDB file",
    Reason.FILE_COUNT_MISMATCH: "the answer lists a different number of files than the gold",
    Reason.MAPPING_SEARCH_EXHAUSTED: "strict: too many equal-looking columns to find a mapping within budget",
    Reason.NO_NUMBER: "number_match found no number in the answer",
    Reason.MISSING_PREDICTION: "no submission line, or its file does not exist",
    Reason.UNREADABLE_PREDICTION: "the predicted file cannot be read (encoding, format, size)",
    Reason.UNREADABLE_GOLD: "a gold file cannot be read",
    Reason.INVALID_ANSWER: "answer_or_path has the wrong JSON type",
    Reason.UNSAFE_PATH: "the answer path leaves the instance folder",
    Reason.ANSWER_TYPE_MISMATCH: "the answer type does not fit any of the gold's specs",
    Reason.UNKNOWN_FUNC: "a gold spec names a func that does not exist",
    Reason.INVALID_SPEC: "a gold spec has unknown or ill-typed parameters",
    Reason.INVALID_GOLD: "the gold line itself is broken",
    Reason.NEEDS_EXECUTION: "SQL must run to grade this (a .sql answer or a temporal gold)",
    Reason.INTERNAL_ERROR: "a bug in the harness while grading this instance (the run goes on)",
    Reason.EXEC_ERROR: "the SQL failed on its engine (the engine's message is the detail)",
    Reason.TIMEOUT: "the SQL ran past the timeout and was stopped",
    Reason.TEST_FAILED: "LiveSQLBench/BIRD-CRITIC: a test case failed (which one and its message are the detail)",
    Reason.ISSUE_SQL_PASSED: "BIRD-CRITIC: the gold's issue_sql passes its own tests, so every answer fails (official)",
    Reason.COST_LIMIT: "BigQuery: the query would process more bytes than --max-bytes-billed allows",
    Reason.CREDENTIALS_MISSING: "no credentials for the BigQuery/Snowflake backend this instance needs",
    Reason.NETWORK_ERROR: "a server the backend needs (a token endpoint, the warehouse) could not be reached",
    Reason.MISSING_EXTRA: "the driver for this instance's backend is not installed (pip install '.[extra]')",
    Reason.NO_DATABASE: "no database to run the SQL on (unknown backend, or no file under --db-dir)",
    Reason.RESULT_TOO_LARGE: "the query returned more rows, or more bytes of rows, than the run allows "
    "(--max-result-rows, half of --memory-limit-mb)",
    Reason.MEMORY_LIMIT: "the query's worker passed its memory cap (--memory-limit-mb) and the query was stopped, or a table pair too big for memory could not be compared out of core",
    Reason.DISK_LIMIT: "the query wrote more into its private database copy than the run allows",
    Reason.UNHASHABLE_RESULT: "BIRD EX: a result holds json or arrays, which the official set() cannot hold: 0",
    Reason.ABSTAINED: "EHRSQL: the answer abstains (null) on a question that has one: 0 in the reliability score",
    Reason.CORRECT_ABSTENTION: "EHRSQL: the answer abstains (null) on a question that has none: +1",
    Reason.ANSWERED_UNANSWERABLE: "EHRSQL: an answer to a question that has none: -1 (then the penalty)",
    Reason.OFFICIAL_ERROR: "the official scorer raises on this question and gives no verdict (strict grades it)",
    Reason.NO_SUBMIT: "BIRD-Interact: the task ended with no graded submit (the budget, or another action)",
    Reason.SOLVED: "BIRD-Interact: every phase of the task solved, the full reward kept",
    Reason.REWARD_RESET: "BIRD-Interact (official): a failed submit after the solving one reset the reward to 0",
    Reason.PHASE1_ONLY: "BIRD-Interact: phase 1 solved, the follow-up (phase 2) not",
    Reason.GOLD_FULL_REWARD: "BIRD-Interact --oracle: the gold gets the full reward",
    Reason.GOLD_MISSING: "BIRD-Interact --oracle: the task has no gold SQL, or no database",
    Reason.GOLD_MULTI_STATEMENT: "BIRD-Interact --oracle: the gold is several statements, which the SQLite submit refuses",
    Reason.GOLD_DOES_NOT_RUN: "BIRD-Interact --oracle: the gold (or its set-up) fails on its database",
    Reason.GOLD_TODAY_DATE: "BIRD-Interact --oracle: the gold depends on today's date and its result is empty",
    Reason.GOLD_EMPTY_OR_UNEQUAL: "BIRD-Interact --oracle: the gold's result is empty (ex_base gives 0) or unequal to itself",
    Reason.GOLD_FAILS_OWN_TEST: "BIRD-Interact --oracle: the gold fails the task's own test cases",
}
