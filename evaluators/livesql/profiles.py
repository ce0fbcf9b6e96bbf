"""How each official harness runs an instance: which test cases, called how, with which helper names.

Four harnesses, read from their code (docs/livesql.md cites the files):
- `livesql-sqlite`: mini_dev `live_sql_bench_sqlite/evaluation/single_instance_eval_sqlite.py`.
- `livesql`: bird-bench/livesqlbench `evaluation/src/evaluation.py` (PostgreSQL).
- `critic-sqlite`: BIRD-CRITIC-1 `evaluation/src/single_instance_eval_sqlite.py` (checks `issue_sql` first).
- `critic`: BIRD-CRITIC-1 `evaluation/src/single_instance_eval_postgresql.py`.
"""

from __future__ import annotations

from dataclasses import dataclass

# The default test case, as every harness defines it (its text is the official behaviour: strip comments,
# DISTINCT and ROUND from both sides, then ex_base with the instance's conditions).
DEFAULT_TEST_CASE = """
def test_case(pred_sqls, sol_sqls, db_path, conn, conditions):
    pred_sqls = remove_comments(pred_sqls)
    sol_sqls = remove_comments(sol_sqls)
    pred_sqls = remove_distinct(pred_sqls)
    pred_sqls = remove_round(pred_sqls)
    sol_sqls = remove_distinct(sol_sqls)
    sol_sqls = remove_round(sol_sqls)
    result = ex_base(pred_sqls, sol_sqls, db_path, conn, conditions)
    assert result == 1, f"ex_base returned {result} but expected 1."
    return result
"""

# Exactly the globals each harness's `run_test_case` hands to `exec` (besides `pred_query_result`).  The
# `from datetime import date` each prepends to a test lands in exec's locals, which a function defined there
# cannot see: a test case sees `date` only where the harness puts it in the globals (not LiveSQLBench's
# PostgreSQL evaluation.py, where a test naming `date` fails with a NameError).
_SQLITE_NAMES = (
    "perform_query_on_sqlite_databases",
    "execute_queries",
    "ex_base",
    "check_sql_function_usage",
    "remove_distinct",
    "remove_comments",
    "remove_round",
    "preprocess_results",
    "date",
)
HARNESS_NAMES = {
    "livesql-sqlite": _SQLITE_NAMES,
    "critic-sqlite": _SQLITE_NAMES,
    "livesql": (
        "perform_query_on_postgresql_databases",
        "execute_queries",
        "ex_base",
        "performance_compare_by_qep",
        "check_sql_function_usage",
        "remove_distinct",
        "remove_comments",
        "remove_round",
        "preprocess_results",
    ),
    "critic": (
        "perform_query_on_postgresql_databases",
        "execute_queries",
        "ex_base",
        "performance_compare_by_qep",
        "check_sql_function_usage",
        "remove_distinct",
        "preprocess_results",
        "date",
    ),
}
# How many connections a helper called without one can still take from the harness's psycopg2 pool (its
# `maxconn` less the phase's own connection; they are never put back): LiveSQLBench 5, BIRD-CRITIC 10.
SPARE_CONNECTIONS = {"livesql": 4, "critic": 9, "interact": 4}
# BIRD-Interact's submit handling (`execute_submit_action`) hands a custom test case only `execute_queries`
# (and `pred_query_result`); its default test is the module's own function, which sees every helper.
HARNESS_NAMES["interact-sqlite"] = HARNESS_NAMES["interact"] = ("execute_queries",)


@dataclass(frozen=True)
class Profile:
    name: str
    engine: str  # sqlite | postgres
    prelude: str  # prepended to each test case's source
    required: tuple  # instance fields whose absence fails the instance ("Missing fields")
    checks_issue_sql: bool = False
    default_harness: str | None = None  # whose helper names the default test sees (None: this profile's)
    preprocess_must_pass: bool = False  # a failing preprocess_sql fails the phase (BIRD-Interact's phase 2)

    def plan(self, instance: dict) -> tuple[list, dict]:
        """(test case sources, the keyword arguments each is called with) for `instance`."""
        tests = list(instance.get("test_cases") or [])
        conditions = instance.get("conditions") or {}
        if self.name in ("livesql", "interact", "interact-sqlite"):
            if instance.get("category", "Query") == "Query":
                return [DEFAULT_TEST_CASE], {"conditions": conditions}
            return tests, {}  # a Management task without test cases passes on execution alone
        if self.name == "critic":
            return tests, {}  # no default test: none given, none run
        if not tests:
            return [DEFAULT_TEST_CASE], {"conditions": conditions}
        return tests, ({"conditions": conditions} if self.name == "critic-sqlite" else {})


PROFILES = {
    "livesql-sqlite": Profile(
        "livesql-sqlite",
        "sqlite",
        "import datetime\nfrom datetime import date\n",
        ("selected_database", "preprocess_sql", "sol_sql", "pred_sqls"),
    ),
    "critic-sqlite": Profile(
        "critic-sqlite",
        "sqlite",
        "import datetime\nfrom datetime import date\n",
        ("preprocess_sql", "sol_sql", "pred_sqls"),
        checks_issue_sql=True,
    ),
    "livesql": Profile(
        "livesql",
        "postgres",
        "from datetime import date\n",
        ("selected_database", "preprocess_sql", "sol_sql", "pred_sqls"),
    ),
    "critic": Profile(
        "critic", "postgres", "from datetime import date\n", ("db_id", "issue_sql", "sol_sql", "pred_sqls")
    ),
    # BIRD-Interact's submits (evaluators/interact/): Query tasks the default test only, other tasks their own
    # test cases (none: a pass), exec-ed with nothing prepended; the phase-2 set-up must run.
    "interact-sqlite": Profile(
        "interact-sqlite", "sqlite", "", ("pred_sqls",), default_harness="livesql-sqlite", preprocess_must_pass=True
    ),
    "interact": Profile(
        "interact", "postgres", "", ("pred_sqls",), default_harness="livesql", preprocess_must_pass=True
    ),
}


def profile_for(benchmark: str, engine: str) -> Profile:
    """benchmark: livesql | critic | interact; engine: sqlite | postgresql."""
    sqlite = engine.lower() == "sqlite"
    if benchmark == "interact":
        return PROFILES["interact-sqlite" if sqlite else "interact"]
    if benchmark == "livesql":
        return PROFILES["livesql-sqlite" if sqlite else "livesql"]
    return PROFILES["critic-sqlite" if sqlite else "critic"]


def split_field(instance: dict, name: str) -> list:
    """The harness's `split_field`: a string is one statement, a list is kept, anything else is none."""
    value = instance.get(name, "")
    if not value:
        return []
    if isinstance(value, str):
        return [value]
    return list(value) if isinstance(value, list) else []
