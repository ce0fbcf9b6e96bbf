"""Every grading command (`grade`, `bird`, `test-suite`, `livesql`) as a user runs it (`python evaluate.py ...`
from the folder of its inputs, relative paths), with each option of the shared tail (cli/options.py): the same
behaviour and the same exit codes everywhere."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from casefolders import write_instance
from helpers_io import run_cli

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = ("grade", "bird", "test-suite", "livesql")
GOOD, WRONG, BROKEN = "SELECT x FROM t", "SELECT x FROM t WHERE x > 1", "SELECT nope FROM nowhere"


def _database(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(path) as con:
        con.executescript("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1), (2), (3);")
    con.close()


def _grade(root: Path, gold_error: bool) -> list[str]:
    write_instance(root, "good", {"func": "string_match", "parameters": {"gold": "Paris"}}, "answer", "paris")
    write_instance(root, "bad", {"func": "number_match", "parameters": {"gold": ["7"]}}, "answer", "eight")
    if gold_error:
        write_instance(root, "broken", {"func": "no_such_func", "parameters": {}}, "answer", "x")
    return ["grade", "--result-dir", "sub", "--gold-dir", "gold"]


def _bird(root: Path, gold_error: bool) -> list[str]:
    _database(root / "dbs" / "shop" / "shop.sqlite")
    golds = [GOOD, GOOD, BROKEN if gold_error else GOOD]
    (root / "gold.sql").write_text("".join(f"{sql}\tshop\n" for sql in golds))
    preds = {str(k): f"{sql}\t----- bird -----\tshop" for k, sql in enumerate([GOOD, WRONG, GOOD])}
    (root / "predict.json").write_text(json.dumps(preds))
    questions = [{"question_id": 100 + k, "db_id": "shop", "difficulty": "simple"} for k in range(3)]
    (root / "questions.json").write_text(json.dumps(questions))
    return [
        "bird",
        "--predicted_sql_path",
        "predict.json",
        "--ground_truth_path",
        "gold.sql",
        "--db_root_path",
        "dbs",
        "--diff_json_path",
        "questions.json",
    ]


def _test_suite(root: Path, gold_error: bool) -> list[str]:
    _database(root / "db" / "shop" / "shop.sqlite")
    golds = [GOOD, GOOD, BROKEN if gold_error else GOOD]
    (root / "gold.txt").write_text("".join(f"{sql}\tshop\n" for sql in golds))
    (root / "pred.txt").write_text(f"{GOOD}\n{WRONG}\n{GOOD}\n")
    return ["test-suite", "--gold", "gold.txt", "--pred", "pred.txt", "--db", "db"]


def _livesql(root: Path, gold_error: bool) -> list[str]:
    _database(root / "dbs" / "shop" / "shop_template.sqlite")
    lines = []
    for k, pred in enumerate([GOOD, WRONG, GOOD]):
        line = {
            "instance_id": f"q{k}",
            "selected_database": "shop",
            "category": "Query",
            "sol_sql": [GOOD + ";"],
            "pred_sqls": [pred + ";"],
            "preprocess_sql": [],
            "clean_up_sql": [],
            "test_cases": [],
            "conditions": {"order": False},
        }
        if gold_error and k == 2:
            del line["sol_sql"]  # the official harness fails it: a gold error, not the model's
        lines.append(json.dumps(line) + "\n")
    (root / "preds.jsonl").write_text("".join(lines))
    return ["livesql", "--jsonl_file", "preds.jsonl", "--db_root", "dbs", "--num_threads", "2"]


INPUTS = {"grade": _grade, "bird": _bird, "test-suite": _test_suite, "livesql": _livesql}


def _run(tmp_path: Path, command: str, *extra: str, gold_error: bool = False) -> subprocess.CompletedProcess:
    """The command run from a new folder holding its inputs (`done.folder`), as a user runs it."""
    folder = tmp_path / f"run{len(list(tmp_path.iterdir()))}"
    folder.mkdir()
    args = INPUTS[command](folder, gold_error)
    done = subprocess.run(
        [sys.executable, str(ROOT / "evaluate.py"), *args, *extra],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
    )
    done.folder = folder
    return done


@pytest.mark.parametrize("command", COMMANDS)
def test_output_html_is_html(tmp_path, command):
    done = _run(tmp_path, command, "--output", "out/x.html")
    assert done.returncode == 0, done.stderr
    assert (done.folder / "out" / "x.html").read_text().lstrip().lower().startswith("<!doctype html")
    assert not (done.folder / "out" / "x.json").exists()


@pytest.mark.parametrize("command", COMMANDS)
def test_format_json_with_provenance_and_fail_under_exits_1(tmp_path, command):
    done = _run(tmp_path, command, "--format", "json", "--output", "out/r.json", "--html", "--fail-under", "101")
    assert done.returncode == 1, done.stderr
    assert "below --fail-under" in done.stderr
    report = json.loads(done.stdout)  # stdout holds the report alone
    provenance = report["summary"]["provenance"]
    assert provenance["command"] and provenance["gold_sha256"] and provenance["gold_digest"]
    out = done.folder / "out"
    assert json.loads((out / "r.json").read_text())["summary"]["score"] == report["summary"]["score"]
    assert (out / "r.html").is_file() and (out / "r.csv").read_text().startswith("instance_id,")


@pytest.mark.parametrize("command", COMMANDS)
def test_a_gold_error_exits_2_unless_allowed(tmp_path, command):
    done = _run(tmp_path, command, gold_error=True)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "gold error" in done.stderr
    done = _run(tmp_path, command, "--allow-gold-errors", "--fail-under", "0.1", "--output", "r.csv", gold_error=True)
    assert done.returncode == 0, done.stderr
    assert (done.folder / "r.csv").read_text().startswith("instance_id,")


# Every command that grades, with the shared options it takes: declared once in cli/options.py, so the same
# spellings, default and help everywhere (a timeout's subject, an official default, grade's figure aside).
GRADING = ("grade", "bird", "test-suite", "livesql", "interact", "ehrsql", "platinum")
TAIL = ("--output", "--html", "--format", "--fail-under", "--allow-gold-errors", "--progress", "--jobs")
LIMITS = ("--timeout", "--memory-limit-mb", "--work-dir")
SHARED = {
    **{command: (*TAIL, *LIMITS) for command in GRADING},
    ("doctor", "fingerprint"): ("--timeout", "--memory-limit-mb", "--postgres-dsn", "--mysql-dsn"),
    ("doctor", "bird"): ("--timeout", "--work-dir", "--postgres-dsn", "--mysql-dsn", "--sql_dialect"),
    ("doctor", "test-suite"): ("--timeout", "--work-dir"),
    ("doctor", "livesql"): ("--timeout", "--work-dir", "--postgres-dsn"),
    ("doctor", "interact"): ("--timeout", "--work-dir", "--postgres-dsn"),
}
DSNS = {"grade": ("--postgres-dsn", "--mysql-dsn"), "bird": ("--postgres-dsn", "--mysql-dsn", "--sql_dialect")}
DSNS |= {"livesql": ("--postgres-dsn",), "interact": ("--postgres-dsn",)}
OFFICIAL = {"bird": ("--meta_time_out", "--num_cpus"), "livesql": ("--num_threads",), "interact": ("--num_threads",)}


def _declared() -> dict:
    """{(command path, option name): the click option}, over every command of SHARED."""
    import click

    from evaluators.cli import main

    found = {}
    for key in SHARED:
        path = key if isinstance(key, tuple) else (key,)
        command = main
        for name in path:
            command = command.get_command(None, name)
        for param in command.params:
            if isinstance(param, click.Option):
                for name in (*param.opts, *param.secondary_opts):
                    found[(path, name)] = param
    return found


def _shape(param) -> tuple:
    """What a user sees of an option: its spellings' kind, default and help (a timeout's subject aside)."""
    words = (param.help or "").split(" may run before")[-1]
    return (param.type.name, param.default if param.name != "timeout" else None, words)


def test_every_shared_option_is_on_every_command_and_the_same_everywhere():
    declared = _declared()
    wanted = {
        (key if isinstance(key, tuple) else (key,), name)
        for key, names in [*SHARED.items(), *DSNS.items(), *OFFICIAL.items()]
        for name in names
    }
    assert sorted(wanted - set(declared)) == []
    by_name: dict = {}
    for (path, name), param in declared.items():
        if name in (*LIMITS, "--postgres-dsn", "--mysql-dsn", "--sql_dialect", *TAIL[1:-1]) and path[0] != "doctor":
            by_name.setdefault(name, {}).setdefault(_shape(param), []).append(" ".join(path))
    differing = {name: shapes for name, shapes in by_name.items() if len(shapes) > 1}
    assert differing == {}, differing


@pytest.mark.parametrize("command", COMMANDS)
def test_the_run_limits_and_work_dir_are_taken_by_every_command(tmp_path, command):
    done = _run(tmp_path, command, "--timeout", "20", "--memory-limit-mb", "512", "--work-dir", "scratch")
    assert done.returncode == 0, done.stderr
    assert not (done.folder / ".grade-work").exists()  # the folder given, never the default


def test_a_misspelt_command_exits_2_and_names_the_nearest():
    from evaluators.cli import COMMANDS as LISTED

    result = run_cli("bidr", "--num_cpus", "2")
    assert result.exit_code == 2 and "Did you mean 'bird'?" in result.output
    assert all(name in result.output for name in LISTED)  # and lists them all


def test_every_listed_command_imports_and_runs_its_help():
    from evaluators.cli import COMMANDS as LISTED

    for name in LISTED:
        result = run_cli(name, "--help")
        assert result.exit_code == 0 and "Usage:" in result.output, name
