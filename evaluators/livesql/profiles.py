"""How each official harness runs an instance: which test cases, called how, with which helper names.

Four harnesses, read from their code (docs/livesql.md cites the files):
- `livesql-sqlite`: mini_dev `live_sql_bench_sqlite/evaluation/single_instance_eval_sqlite.py`.
- `livesql`: bird-bench/livesqlbench `evaluation/src/evaluation.py` (PostgreSQL).
- `critic-sqlite`: BIRD-CRITIC-1 `evaluation/src/single_instance_eval_sqlite.py` (checks `issue_sql` first).
- `critic`: BIRD-CRITIC-1 `evaluation/src/single_instance_eval_postgresql.py`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

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


# How each harness's `remove_distinct` cuts DISTINCT out (helpers.remove_distinct).
DISTINCT_VARIANTS = {
    "space": 'tokens of split(" ") equal to DISTINCT dropped',
    "whitespace": "tokens of split() equal to DISTINCT dropped, joined by single spaces",
    "regex": r"re.sub(r'\bDISTINCT\b', '') on the text: COUNT(DISTINCT x) loses its DISTINCT too",
}


@dataclass(frozen=True)
class Profile:
    name: str  # the harness (HARNESS_NAMES, SPARE_CONNECTIONS)
    engine: str  # sqlite | postgres
    prelude: str  # prepended to each test case's source
    required: tuple  # instance fields whose absence fails the instance ("Missing fields")
    checks_issue_sql: bool = False
    remove_distinct: str = "space"  # one of DISTINCT_VARIANTS
    scorer: str = ""  # the official file and commit this preset reproduces
    default_harness: str | None = None  # whose helper names the default test sees (None: this profile's)
    preprocess_must_pass: bool = False  # a failing preprocess_sql fails the phase (BIRD-Interact's phase 2)
    preset: str = ""  # its name in PROFILES (default: the harness's)

    def __post_init__(self) -> None:
        object.__setattr__(self, "preset", self.preset or self.name)

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


CRITIC_BEFORE_REGEX = "critic-before-2025-12-11"
PROFILES = {
    "livesql-sqlite": Profile(
        "livesql-sqlite",
        "sqlite",
        "import datetime\nfrom datetime import date\n",
        ("selected_database", "preprocess_sql", "sol_sql", "pred_sqls"),
        scorer="bird-bench/mini_dev live_sql_bench_sqlite/evaluation/test_utils.py at f9d2750 (2025-09-19)",
    ),
    "critic-sqlite": Profile(
        "critic-sqlite",
        "sqlite",
        "import datetime\nfrom datetime import date\n",
        ("preprocess_sql", "sol_sql", "pred_sqls"),
        checks_issue_sql=True,
        scorer="bird-bench/BIRD-CRITIC-1 evaluation/src/sqlite_test_utils.py at 2995564 (2026-03-23)",
    ),
    "livesql": Profile(
        "livesql",
        "postgres",
        "from datetime import date\n",
        ("selected_database", "preprocess_sql", "sol_sql", "pred_sqls"),
        scorer="bird-bench/livesqlbench evaluation/src/test_utils.py at bfa850d (2025-06-06)",
    ),
    "critic": Profile(
        "critic",
        "postgres",
        "from datetime import date\n",
        ("db_id", "issue_sql", "sol_sql", "pred_sqls"),
        remove_distinct="regex",
        scorer="bird-bench/BIRD-CRITIC-1 evaluation/src/postgresql_test_utils.py at 8264017 (2025-12-11)",
    ),
    # BIRD-Interact's submits (evaluators/interact/): Query tasks the default test only, other tasks their own
    # test cases (none: a pass), exec-ed with nothing prepended; the phase-2 set-up must run.
    "interact-sqlite": Profile(
        "interact-sqlite",
        "sqlite",
        "",
        ("pred_sqls",),
        default_harness="livesql-sqlite",
        preprocess_must_pass=True,
        scorer="bird-bench/BIRD-Interact mini_interact_agent: main.py run_batch_evaluation, execute_submit_action",
    ),
    "interact": Profile(
        "interact",
        "postgres",
        "",
        ("pred_sqls",),
        default_harness="livesql",
        preprocess_must_pass=True,
        scorer="bird-bench/BIRD-Interact bird_interact_agent: the batch loop's execute_submit_action",
    ),
}
PROFILES[CRITIC_BEFORE_REGEX] = replace(  # the same harness, before its regex (a version users may need)
    PROFILES["critic"],
    remove_distinct="whitespace",
    scorer="bird-bench/BIRD-CRITIC-1 evaluation/src/postgresql_test_utils.py before 8264017 (2025-12-11)",
    preset=CRITIC_BEFORE_REGEX,
)


def scorers_help() -> str:
    """Each preset, its remove_distinct and the official file it reproduces, for --help."""
    return "; ".join(f"{name}: {p.scorer}, remove_distinct {p.remove_distinct}" for name, p in PROFILES.items()) + "."


def profile_for(benchmark: str, engine: str, scorer: str | None = None) -> Profile:
    """benchmark: livesql | critic; engine: sqlite | postgresql; `scorer`: a preset by name (PROFILES),
    which must be of that benchmark and engine; None: the current version."""
    sqlite = engine.lower() == "sqlite"
    if benchmark == "interact":
        return PROFILES["interact-sqlite" if sqlite else "interact"]
    if benchmark == "livesql":
        current = PROFILES["livesql-sqlite" if sqlite else "livesql"]
    else:
        current = PROFILES["critic-sqlite" if sqlite else "critic"]
    if scorer is None or scorer == current.preset:
        return current
    chosen = PROFILES.get(scorer)
    if chosen is None or (chosen.name, chosen.engine) != (current.name, current.engine):
        from evaluators.errors import UsageError

        same = [
            p for p, profile in PROFILES.items() if (profile.name, profile.engine) == (current.name, current.engine)
        ]
        raise UsageError(f"--scorer {scorer!r} is not a {benchmark} scorer on {engine}: one of {', '.join(same)}")
    return chosen


def split_field(instance: dict, name: str) -> list:
    """The harness's `split_field`: a string is one statement, a list is kept, anything else is none."""
    value = instance.get(name, "")
    if not value:
        return []
    if isinstance(value, str):
        return [value]
    return list(value) if isinstance(value, list) else []
