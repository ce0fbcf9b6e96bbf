"""The docs' example commands, found where users read them, and a working folder where every one of them runs.

`documented_commands()` reads every fenced block of README.md and docs/*.md and every `--help` epilog
of the CLI, and returns each `evaluate.py` command once (continuation lines joined, spaces collapsed, the
trailing `# comment` dropped). `build_world(root)` writes, under `root`, the files those commands name, with
the names they use, and returns the working directory to run them from (`root/work`, so that BIRD's
`../sqlite/...` resolves too). What each command must print is in tests/data/doc_examples.yaml.
"""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parent.parent
SHARED_LITE_GOLD = ROOT.parent / "shared" / "corpora" / "spider2-lite" / "gold"
FENCE = re.compile(r"```[a-z]*\n(.*?)```", re.S)
SEP = "\t----- bird -----\t"
QUESTIONS = [  # BIRD and test-suite: (gold, prediction), 3 of 4 right
    ("SELECT name FROM pets WHERE kind = 'cat'", "SELECT name FROM pets WHERE kind = 'cat'"),
    ("SELECT count(*) FROM pets", "SELECT count(*) FROM pets"),
    ("SELECT max(age) FROM pets", "SELECT min(age) FROM pets"),
    ("SELECT kind FROM pets WHERE age > 3", "SELECT kind FROM pets WHERE 3 < age"),
]


def normalise(command: str) -> str:
    command = re.sub(r"\s+#\s.*$", "", command.replace("\\\n", " ").strip())
    return re.sub(r"\s+", " ", command)


def _commands_in(text: str) -> list[str]:
    joined = text.replace("\\\n", " ")
    return [normalise(line) for line in joined.splitlines() if re.search(r"\bpython evaluate\.py\b", line)]


def doc_commands() -> dict[str, str]:
    """command -> the first file that shows it, from README.md and docs/*.md fenced shell blocks."""
    found: dict[str, str] = {}
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for block in FENCE.findall(path.read_text()):
            for command in _commands_in(block):
                found.setdefault(command, path.relative_to(ROOT).as_posix())
    return found


def epilog_commands() -> dict[str, str]:
    """command -> the `--help` page (command path) whose epilog shows it."""
    import click

    from evaluators.cli import main

    found: dict[str, str] = {}

    def walk(command: click.Command, name: str) -> None:
        for line in _commands_in((command.epilog or "").replace("\b", "")):
            found.setdefault(line, f"{name} --help")
        if isinstance(command, click.Group):  # the top group imports its commands lazily (cli.COMMANDS)
            for sub_name in command.list_commands(None):
                walk(command.get_command(None, sub_name), f"{name} {sub_name}")

    walk(main, "evaluate.py")
    return found


def documented_commands() -> dict[str, str]:
    return {**epilog_commands(), **doc_commands()}


def build_world(root: Path) -> Path:
    """Every file the examples name, under the names they use; returns the folder to run them from."""
    work = root / "work"
    work.mkdir(parents=True)
    _spider2_folders(work)
    _authoring_files(work)
    _bird_folders(root, work)
    _test_suite_files(work)
    _cypher_files(work)
    _lite_sources(work)
    _server_files(work)
    _livesql_files(root, work)
    _ehrsql_files(work)
    _platinum_files(work)
    _interact_files(work)
    return work


def _spider2_folders(work: Path) -> None:
    """The bundled example under every name the docs give it; runB gets two answers wrong."""
    for name in ("example_submission_folder", "SUB", "sub", "runA", "runB"):
        shutil.copytree(ROOT / "example_submission_folder", work / name)
    for name in ("gold", "GOLD", "lite_gold"):
        shutil.copytree(ROOT / "gold", work / name)
    shutil.copytree(ROOT / "gold" / "databases", work / "dbs")
    lines = (work / "runB" / "results_metadata.jsonl").read_text().replace("Mountain View", "Sunnyvale")
    (work / "runB" / "results_metadata.jsonl").write_text(lines.replace("17.51%", "12.5%"))
    for flat in ("lite_csvs", "lite_submission"):  # the flat layout: <id>.csv
        (work / flat).mkdir()
        for instance, answer in (
            ("ex_table", "result.csv"),
            ("ex_nulls", "result.csv"),
            ("ex_scrambled", "answer.csv"),
        ):
            shutil.copy(ROOT / "example_submission_folder" / instance / answer, work / flat / f"{instance}.csv")


def _authoring_files(work: Path) -> None:
    table = "id,name,amount\n1,ann,2.5\n2,bob,3.5\n"
    for name in ("result.csv", "q2_a.csv", "r.csv"):
        (work / name).write_text(table)
    (work / "q2_b.csv").write_text("id,amount\n1,2.5\n2,3.5\n")
    (work / "gold.sql").write_text("SELECT 1 AS one")
    con = duckdb.connect(str(work / "gold.duckdb"))
    con.execute("CREATE TABLE customers AS SELECT 1 AS id, 'ann' AS name UNION ALL SELECT 2, 'bob'")
    con.execute("CREATE TABLE audit AS SELECT 7 AS n")
    con.close()


def pets(path: Path) -> None:
    """A small SQLite database `pets` (3 rows) that QUESTIONS run on."""
    path.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE pets (name TEXT, kind TEXT, age INTEGER)")
    con.executemany("INSERT INTO pets VALUES (?,?,?)", [("tom", "cat", 4), ("rex", "dog", 2), ("kit", "cat", 1)])
    con.commit()
    con.close()


def _bird_folders(root: Path, work: Path) -> None:
    """mini-dev's run script layout (../sqlite, ../sql_result) and dev's (data/dev, exp_result)."""
    predictions = json.dumps({str(i): p + SEP + "shop" for i, (_, p) in enumerate(QUESTIONS)})
    gold = "".join(f"{g}\tshop\n" for g, _ in QUESTIONS)
    levels = ["simple", "simple", "moderate", "challenging"]
    pets(root / "sqlite" / "dev_databases" / "shop" / "shop.sqlite")
    (root / "sqlite" / "mini_dev_sqlite_gold.sql").write_text(gold)
    questions = [{"question_id": i, "db_id": "shop", "difficulty": d} for i, d in enumerate(levels)]
    (root / "sqlite" / "mini_dev_sqlite.jsonl").write_text("".join(json.dumps(q) + "\n" for q in questions))
    (root / "sql_result").mkdir()
    (root / "sql_result" / "predict_mini_dev_gpt-4-32k_cot_SQLite.json").write_text(predictions)
    (work / "predict_mini_dev.json").write_text(predictions)
    pets(work / "data" / "dev" / "dev_databases" / "shop" / "shop.sqlite")
    (work / "data" / "dev" / "dev_gold.sql").write_text(gold)
    (work / "data" / "dev" / "dev.json").write_text(json.dumps(questions))
    (work / "exp_result").mkdir()
    (work / "exp_result" / "predict_dev.json").write_text(predictions)


def _test_suite_files(work: Path) -> None:
    """On `pets`: livesql's examples use the same `database/` folder for their own `shop` (test-suite reads
    every .sqlite file in a database's folder as one more database of its suite)."""
    for name in ("dev_gold.sql", "gold.txt"):
        (work / name).write_text("".join(f"{g}\tpets\n" for g, _ in QUESTIONS))
    (work / "pred.txt").write_text("".join(f"{p}\n" for _, p in QUESTIONS))
    for folder in ("database", "test_suite_database"):
        pets(work / folder / "pets" / "pets.sqlite")
    columns = [[-1, "*"], [0, "name"], [0, "kind"], [0, "age"]]  # Spider's tables.json for `pets`
    entry = {"db_id": "pets", "table_names_original": ["pets"], "column_names_original": columns, "foreign_keys": []}
    (work / "tables.json").write_text(json.dumps([entry]))


def _cypher_files(work: Path) -> None:
    (work / "graphs").mkdir()
    shutil.copy(ROOT / "gold" / "cypher" / "databases" / "movies.cypher", work / "graphs" / "movies.cypher")
    rows = [
        {"question": "Who acted?", "cypher": "MATCH (p:Person) RETURN p.name", "database_reference_alias": "movies"},
        {"question": "How many movies?", "cypher": "MATCH (m:Movie) RETURN count(m)", "data_source": "movies"},
    ]
    for name in ("text2cypher.jsonl", "text2cypher_test.jsonl"):
        (work / name).write_text("".join(json.dumps(row) + "\n" for row in rows))
    import pandas as pd

    pd.DataFrame(rows).to_parquet(work / "test.parquet")


def _lite_sources(work: Path) -> None:
    """The public Spider2-lite gold where it lives, and a small Spider2-snow folder in its layout."""
    suite = work / "Spider2" / "spider2-lite" / "evaluation_suite"
    suite.mkdir(parents=True)
    if SHARED_LITE_GOLD.is_dir():
        (suite / "gold").symlink_to(SHARED_LITE_GOLD)
        (suite.parent / "spider2-lite.jsonl").symlink_to(SHARED_LITE_GOLD.parent / "spider2-lite.jsonl")
    snow = work / "snow_gold"
    (snow / "exec_result").mkdir(parents=True)
    tasks = {"sf_bq001": "GA4", "sf_local002": "F1"}
    for instance in tasks:
        (snow / "exec_result" / f"{instance}.csv").write_text("k,v\n1,2\n")
    lines = [{"instance_id": i, "condition_cols": [], "ignore_order": True} for i in tasks]
    (snow / "spider2snow_eval.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    task_lines = [{"instance_id": i, "db_id": db} for i, db in tasks.items()]
    (work / "spider2-snow.jsonl").write_text("".join(json.dumps(x) + "\n" for x in task_lines))


def _server_files(work: Path) -> None:
    pets(work / "dev_databases" / "california_schools" / "california_schools.sqlite")
    pets(work / "shop.sqlite")


def _livesql_files(root: Path, work: Path) -> None:
    """The generated LiveSQLBench and BIRD-CRITIC sets (tests/livesql_generator.py) under the docs' names;
    preds.jsonl holds both PostgreSQL sets, each gold file one of them."""
    from livesql_generator import write, write_postgres

    sqlite_files, pg_files = write(root / "livesql"), write_postgres(root / "livesql_pg")
    for name in ("database", "sqlite_databases"):
        shutil.copytree(sqlite_files["root"], work / name, dirs_exist_ok=True)
    shutil.copy(sqlite_files["livesql"], work / "post_processed_sql.jsonl")
    shutil.copy(sqlite_files["critic"], work / "critic_preds.jsonl")
    (work / "preds.jsonl").write_text(pg_files["livesql_pg"].read_text() + pg_files["critic_pg"].read_text())
    shutil.copy(pg_files["critic_pg"], work / "gt.jsonl")
    for name in ("livesql_gt.jsonl", "livesqlbench_gt.jsonl"):
        shutil.copy(pg_files["livesql_pg"], work / name)


def _ehrsql_files(work: Path) -> None:
    """EHRSQL's layout twice (input/ref, input/res; label.json, prediction.json beside mimic_iv.sqlite):
    right, wrong, abstaining on an answerable question, abstaining rightly, answering an unanswerable one."""
    import parity_ehrsql

    count = "SELECT COUNT(*) FROM patients"
    cases = [
        (count, "SELECT COUNT(subject_id) FROM patients"),
        (count, "SELECT COUNT(*) FROM patients WHERE gender = 'F'"),
        (count, "null"),
        ("null", "null"),
        ("null", count),
    ]
    parity_ehrsql.build(work / "input", cases)
    shutil.move(work / "input" / "mimic_iv.sqlite", work / "mimic_iv.sqlite")
    shutil.copy(work / "input" / "ref" / "label.json", work / "label.json")
    shutil.copy(work / "input" / "res" / "prediction.json", work / "prediction.json")


def _platinum_files(work: Path) -> None:
    """grade.py's files: right; columns swapped (strict right, bird wrong); duplicates (bird right); one row of
    a two-row tie (right only where the tie annotation counts)."""
    import parity_platinum

    kinds = "SELECT name, kind FROM items"
    cases = [
        ("SELECT name FROM items", None, "SELECT name FROM items"),
        (kinds, None, "SELECT kind, name FROM items"),
        ("SELECT kind FROM items", None, "SELECT DISTINCT kind FROM items"),
        (kinds + " WHERE kind = 'a'", "subset,=,1", kinds + " WHERE id = 1"),
    ]
    parity_platinum.build(work / "platinum", cases)
    shutil.copytree(work / "platinum" / "db", work / "dev_databases", dirs_exist_ok=True)  # BIRD's may be there
    shutil.move(work / "platinum" / "data.json", work / "bird_platinum.json")
    (work / "results").mkdir(exist_ok=True)
    shutil.move(work / "platinum" / "results" / "preds.json", work / "results" / "model.json")


def _interact_files(work: Path) -> None:
    """mini-interact's layout (tests/interact_generator.py): the public tasks and their GT beside the database
    folder, and the recorded run of the unmodified official loop on them (results.jsonl)."""
    import interact_generator

    folder = work / "mini_interact"
    interact_generator.build(folder)
    shutil.move(folder / "public.jsonl", work / "mini_interact.jsonl")
    shutil.move(folder / "gt.jsonl", work / "mini_interact_gt.jsonl")
    recorded = json.loads(interact_generator.RECORDED.read_text())
    (work / "results.jsonl").write_text("".join(json.dumps(s) + "\n" for s in recorded["run"]))
