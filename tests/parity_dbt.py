"""Parity data for `duckdb_match` against Spider2-dbt's official scorer, and the recorder of its verdicts.

`build(root)` writes a gold folder and a submission (tests/casefolders.write_instance): DuckDB files whose
tables are named plainly, with spaces, as reserved words, with digits first, and compared with and without
`condition_tabs`.  Recording (tests/data/parity/dbt.json), the official code unmodified:

    python tests/parity_dbt.py record /path/to/Spider2/spider2-dbt/evaluation_suite

calls its `eval_utils.duckdb_match` on each instance as its `evaluate.py` does (any exception scores 0).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

RECORDED = Path(__file__).parent / "data" / "parity" / "dbt.json"

T = "CREATE TABLE {name} (id INTEGER, v VARCHAR); INSERT INTO {name} VALUES (1, 'a'), (2, 'b');"
OTHER = "CREATE TABLE {name} (id INTEGER, v VARCHAR); INSERT INTO {name} VALUES (1, 'a'), (3, 'c');"

# (instance, gold table names, predicted table names, condition_tabs or None, predicted rows differ)
CASES = [
    ("plain", ["orders"], ["orders"], None, False),
    ("plain_wrong", ["orders"], ["orders"], None, True),
    ("spaced", ['"order items"'], ['"order items"'], ["order items"], False),
    ("spaced_all", ['"order items"'], ['"order items"'], None, False),
    ("reserved", ['"order"'], ['"order"'], ["order"], False),
    ("digits", ['"2024_sales"'], ['"2024_sales"'], ["2024_sales"], False),
    ("dash", ['"a-b"'], ['"a-b"'], None, False),
    ("mixed_case", ["Orders"], ["orders"], ["Orders"], False),
    ("unicode", ["été"], ["été"], None, False),
    ("dollar", ["a$b"], ["a$b"], None, False),
    ("two_tables", ["orders", "users"], ["orders", "users"], None, False),
    ("missing", ["orders", "users"], ["orders"], None, False),
    ("name_word", ["name"], ["name"], ["name"], False),
]


def build(root: Path) -> None:
    sys.path.insert(0, str(Path(__file__).parent))
    from casefolders import write_instance

    for iid, gold_tables, pred_tables, tabs, differ in CASES:
        params: dict = {"gold": "g.duckdb"}
        if tabs is not None:
            params["condition_tabs"] = tabs
        gold_sql = "".join(T.format(name=n) for n in gold_tables)
        pred_sql = "".join((OTHER if differ else T).format(name=n) for n in pred_tables)
        write_instance(
            root,
            iid,
            {"func": "duckdb_match", "parameters": params},
            "file",
            "result.duckdb",
            {"g.duckdb": {"sql": gold_sql}},
            {"result.duckdb": {"sql": pred_sql}},
        )


def official_verdicts(suite: Path, root: Path) -> dict:
    sys.path.insert(0, str(suite))
    from eval_utils import duckdb_match  # the official function, unmodified

    out = {}
    for iid, _, _, tabs, _ in CASES:
        try:
            score = duckdb_match(str(root / "sub" / iid / "result.duckdb"), str(root / "gold" / iid / "g.duckdb"), tabs)
        except Exception:  # evaluate.py: any exception scores 0
            score = 0
        out[iid] = int(score)
    return out


def project_verdicts(root: Path, work: Path) -> dict:
    from evaluators.grading.run import grade

    report = grade(root / "sub", root / "gold", semantics="spider2")
    return {i.instance_id: {"spider2": int(i.score), "strict": int(i.strict_score)} for i in report.instances}


if __name__ == "__main__" and sys.argv[1] == "record":
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        build(Path(tmp))
        found = official_verdicts(Path(sys.argv[2]).resolve(), Path(tmp))
    RECORDED.write_text(json.dumps(found, indent=1) + "\n", encoding="utf-8")
