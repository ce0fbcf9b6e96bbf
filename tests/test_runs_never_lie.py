"""Ordinary ways of running the grader never give a silently wrong score (issue P).

- relative paths, from another working directory, give the same reports as absolute ones, for every command;
- a predictions file paired with the wrong gold lines says so, loudly;
- the terminal's lists fit the terminal.

Signals are in test_signals.py and Ray clusters in test_ray_cluster.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest
from doc_examples import QUESTIONS, SEP
from doc_examples import pets as _database
from helpers_io import run_cli

from evaluators.cli import main
from evaluators.cli.options import AbsolutePath

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def world(tmp_path):
    """Every kind of input, written where the commands' relative paths point from `tmp_path / 'here'`."""
    here = tmp_path / "here"
    _database(here / "dbs" / "shop" / "shop.sqlite")  # BIRD's <db_root>/<db>/<db>.sqlite and test-suite's too
    (here / "predict.json").write_text(json.dumps({str(i): p + SEP + "shop" for i, (_, p) in enumerate(QUESTIONS)}))
    (here / "gold.sql").write_text("".join(f"{g}\tshop\n" for g, _ in QUESTIONS))
    (here / "pred.txt").write_text("".join(f"{p}\n" for _, p in QUESTIONS))
    for n, (gold, pred) in enumerate(QUESTIONS):
        _grade_instance(here, f"q{n}", gold, pred)
    return here


def _grade_instance(here: Path, instance_id: str, gold: str, pred: str) -> None:
    spec = {"func": "execution_match", "parameters": {"gold_sql": "gold.sql"}}
    (here / "gold" / instance_id).mkdir(parents=True)
    (here / "gold" / instance_id / "gold.sql").write_text(gold)
    (here / "sub" / instance_id).mkdir(parents=True)
    (here / "sub" / instance_id / "a.sql").write_text(pred)
    line = {"instance_id": instance_id, "evaluation": spec, "type": "SQLite", "db": "shop"}
    with open(here / "gold" / "spider2_eval.jsonl", "a") as handle:
        handle.write(json.dumps(line) + "\n")
    with open(here / "sub" / "results_metadata.jsonl", "a") as handle:
        handle.write(json.dumps({"instance_id": instance_id, "answer_type": "file", "answer_or_path": "a.sql"}) + "\n")


COMMANDS = {  # name -> (arguments with {p} before every path, the report it writes or None)
    "grade": (
        ["grade", "--result-dir", "{p}sub", "--gold-dir", "{p}gold", "--db-dir", "{p}dbs/shop", "--no-plot"],
        "report.json",
    ),
    "bird": (
        ["bird", "--db_root_path", "{p}dbs/", "--predicted_sql_path", "{p}predict.json"]
        + ["--ground_truth_path", "{p}gold.sql", "--sql_dialect", "SQLite"],
        "bird.json",
    ),
    "test-suite": (["test-suite", "--gold", "{p}gold.sql", "--pred", "{p}pred.txt", "--db", "{p}dbs"], "ts.json"),
    "validate": (["validate", "--result-dir", "{p}sub", "--gold-dir", "{p}gold"], None),
    "gold lint": (["gold", "lint", "--gold-dir", "{p}gold", "--no-self-check"], None),
}


def _run(world: Path, name: str, prefix: str, out: Path, monkeypatch):
    words, report = COMMANDS[name]
    args = [w.replace("{p}", prefix) for w in words]
    if report:
        args += ["--output", str(out / report)]
    if name in ("grade",):
        args += ["--work-dir", f"{prefix}work-{out.name}"]
    monkeypatch.chdir(world if prefix == "" else world.parent)
    result = run_cli(*args)
    return result, (json.loads((out / report).read_text()) if report else None)


@pytest.mark.parametrize("name", list(COMMANDS))
def test_relative_and_absolute_paths_give_identical_reports(world, tmp_path, monkeypatch, name):
    relative_out, absolute_out = tmp_path / "rel", tmp_path / "abs"
    relative, rel_report = _run(world, name, "", relative_out, monkeypatch)
    absolute, abs_report = _run(world, name, f"{world}/", absolute_out, monkeypatch)
    assert relative.exit_code == absolute.exit_code, (relative.output, absolute.output)
    assert relative.exit_code in (0, 1), relative.output  # 1: validate/lint findings, never a usage error
    if rel_report is None:
        assert relative.output.replace(str(world) + "/", "") == absolute.output.replace(str(world) + "/", "")
        return
    rows = [
        [(i["instance_id"], i["score"], i["strict_score"], i["reason"]) for i in r["instances"]]
        for r in (rel_report, abs_report)
    ]
    assert rows[0] == rows[1]
    assert rel_report["summary"]["score"] == pytest.approx(0.75), "3 of 4 right, not zeroed by a relative path"


def test_relative_paths_reach_the_workers_of_a_parallel_run(world, tmp_path, monkeypatch):
    monkeypatch.chdir(world)
    out = tmp_path / "r.json"
    args = ["grade", "--result-dir", "sub", "--gold-dir", "gold", "--db-dir", "dbs/shop", "--jobs", "2"]
    result = run_cli(*args, "--output", out, "--no-plot", "--work-dir", "work")
    assert result.exit_code == 0, result.output
    assert json.loads(out.read_text())["summary"]["score"] == pytest.approx(0.75)


def test_a_path_that_does_not_exist_names_the_option_and_the_resolved_path(world, monkeypatch):
    monkeypatch.chdir(world)
    result = run_cli("bird", "--db_root_path", "nowhere/", "--predicted_sql_path", "predict.json",
                     "--ground_truth_path", "gold.sql")  # fmt: skip
    assert result.exit_code == 2
    assert "--db_root_path" in result.output and str(world / "nowhere") in result.output


def _commands(group: click.Group, prefix: str = ""):
    for name in group.list_commands(None):  # the top group imports its commands lazily (cli.COMMANDS)
        command = group.get_command(None, name)
        if isinstance(command, click.Group):
            yield from _commands(command, f"{prefix}{name} ")
        else:
            yield f"{prefix}{name}", command


def test_every_path_option_of_every_command_is_made_absolute_at_the_edge():
    paths = [
        (name, p.name) for name, command in _commands(main) for p in command.params if isinstance(p.type, click.Path)
    ]
    assert len(paths) > 20
    assert not [(name, param) for name, command in _commands(main) for p in command.params
                if isinstance(p.type, click.Path) and not isinstance(p.type, AbsolutePath)
                for param in [p.name]]  # fmt: skip


def test_the_python_api_and_the_executor_make_relative_paths_absolute(world, monkeypatch):
    from evaluators import grade
    from evaluators.execution.executor import ExecConfig, default_executor
    from evaluators.grading.instance import Options

    monkeypatch.chdir(world)
    config = ExecConfig(output_dir=Path("work"), db_dir=Path("dbs/shop"))
    assert config.output_dir == world / "work" and config.db_dir == world / "dbs" / "shop"
    executor = default_executor(Path("gold"))
    report = grade("sub", "gold", options=Options(executor=type(executor)(config)))
    assert report.summary.score == pytest.approx(0.75)


def test_reward_database_paths_are_the_callers(world, monkeypatch):
    from evaluators.rewards.verl import compute_score, with_absolute_paths

    monkeypatch.chdir(world)
    info = with_absolute_paths({"db_path": "dbs/shop/shop.sqlite", "db_root": "dbs", "other": 1})
    assert info == {"db_path": str(world / "dbs/shop/shop.sqlite"), "db_root": str(world / "dbs"), "other": 1}
    gold, pred = QUESTIONS[0]
    result = compute_score("bird", f"```sql\n{pred}\n```", gold, {"db_path": "dbs/shop/shop.sqlite"})
    assert result["score"] == 1.0


# ---- pairing ------------------------------------------------------------------------------------------


def _bird(world: Path, predictions: dict, monkeypatch, *extra):
    monkeypatch.chdir(world)
    (world / "p.json").write_text(json.dumps(predictions, sort_keys="sorted" in extra))
    return run_cli(
        "bird", "--db_root_path", "dbs", "--predicted_sql_path", "p.json", "--ground_truth_path", "gold.sql",
        "--output", "out/b.json",
    )  # fmt: skip


def _many_questions(world: Path, count: int) -> list[str]:
    golds = [f"SELECT {n} FROM pets LIMIT 1" for n in range(count)]
    (world / "gold.sql").write_text("".join(f"{g}\tshop\n" for g in golds))
    return golds


def test_a_sort_keys_predictions_file_is_a_loud_warning_naming_the_cause(world, monkeypatch):
    golds = _many_questions(world, 12)
    result = _bird(world, {str(n): g + SEP + "shop" for n, g in enumerate(golds)}, monkeypatch, "sorted")
    assert result.exit_code == 0, result.output
    warning = [line for line in result.output.splitlines() if line.startswith("warning:") and "pairing:" in line]
    assert warning and "sort_keys" in warning[0] and "position 2 holds key '10'" in warning[0]
    report = json.loads((world / "out" / "b.json").read_text())
    assert any("sort_keys" in p["message"] for p in report["summary"]["problems"])
    scores = [i["score"] for i in report["instances"]]
    assert scores[:2] == [1.0, 1.0] and scores[2] == 0.0, "verdicts stay official: paired by position"


def test_a_file_in_key_order_has_no_pairing_warning(world, monkeypatch):
    golds = _many_questions(world, 12)
    result = _bird(world, {str(n): g + SEP + "shop" for n, g in enumerate(golds)}, monkeypatch)
    assert result.exit_code == 0 and "pairing" not in result.output
    assert json.loads((world / "out" / "b.json").read_text())["summary"]["score"] == 1.0


def test_a_shifted_file_and_a_count_mismatch_are_warned(world, monkeypatch):
    _database(world / "dbs" / "zoo" / "zoo.sqlite")
    golds = [f"SELECT {n} FROM pets LIMIT 1" for n in range(10)]
    dbs = ["shop", "zoo"] * 5
    (world / "gold.sql").write_text("".join(f"{g}\t{d}\n" for g, d in zip(golds, dbs, strict=True)))
    shifted = {str(n): f"{g}{SEP}{d}" for n, (g, d) in enumerate(zip(golds[1:], dbs[1:], strict=True))}
    result = _bird(world, shifted, monkeypatch)
    warnings = [line for line in result.output.splitlines() if line.startswith("warning:") and "pairing:" in line]
    assert any("9 prediction(s) for 10 gold line(s)" in w for w in warnings), warnings
    assert any("9 of 9 predictions name another database" in w and "look shifted" in w for w in warnings), warnings


def test_a_few_wrong_databases_are_not_a_shift(world, monkeypatch):
    _database(world / "dbs" / "zoo" / "zoo.sqlite")
    golds = _many_questions(world, 12)
    predictions = {str(n): g + SEP + ("zoo" if n == 3 else "shop") for n, g in enumerate(golds)}
    assert "pairing" not in _bird(world, predictions, monkeypatch).output


def test_test_suite_warns_about_a_shifted_predictions_file(world, tmp_path, monkeypatch):
    _database(world / "dbs" / "zoo" / "zoo.sqlite")
    golds = [(f"SELECT {n} FROM pets LIMIT 1", "shop" if n % 2 else "zoo") for n in range(10)]
    (world / "g.txt").write_text("".join(f"{g}\t{d}\n" for g, d in golds))
    (world / "p.txt").write_text("".join(f"{g}\t{d}\n" for g, d in golds[1:] + golds[:1]))
    monkeypatch.chdir(world)
    result = run_cli("test-suite", "--gold", "g.txt", "--pred", "p.txt", "--db", "dbs", "--output", tmp_path / "t.json")
    assert result.exit_code == 0, result.output
    assert "pairing: 10 of 10 predictions name another database" in result.output


# ---- the terminal -------------------------------------------------------------------------------------


@pytest.mark.parametrize("width", [60, 80, 100, 160])
def test_the_failed_list_fits_the_terminal_cut_at_a_word(world, monkeypatch, width):
    long_pred = "SELECT name FROM pets WHERE kind = 'a cat whose name nobody remembers any more at all, not even once'"
    with open(world / "sub" / "q0" / "a.sql", "w") as handle:
        handle.write(long_pred)
    monkeypatch.chdir(world)
    monkeypatch.setenv("COLUMNS", str(width))
    result = run_cli("grade", "--result-dir", "sub", "--gold-dir", "gold", "--db-dir", "dbs/shop")
    failed = result.output.split("Failed (")[1].splitlines()[1:3]
    assert failed and all(len(line) <= width for line in failed), failed
    cut = [line for line in failed if line.endswith("...")]
    for line in cut:
        assert line[-4] != " " and not line[:-3].endswith(("clos", "remem")), line  # a whole word before "..."


def test_fit_cuts_at_a_word_and_leaves_short_lines_alone():
    from evaluators.reporting.report import fit

    assert fit("short line", 40) == "short line"
    assert fit("the closest candidate column is gold column b", 30) == "the closest candidate..."
    assert fit("x" * 50, 20) == "x" * 17 + "..."
    assert all(len(fit("word " * 40, n)) <= n for n in range(10, 120))


def test_piped_output_has_a_sane_width(monkeypatch):
    from evaluators.reporting.report import terminal_width

    monkeypatch.delenv("COLUMNS", raising=False)
    assert terminal_width() == 100 or os.isatty(1)
    monkeypatch.setenv("COLUMNS", "5")
    assert terminal_width() == 60


def test_ray_auto_without_a_cluster_is_a_usage_error_not_a_traceback(world, tmp_path):
    pytest.importorskip("ray", reason="pip install '.[ray]'")
    if subprocess.run(["pgrep", "-f", "gcs_server"], capture_output=True).returncode == 0 and not os.environ.get("CI"):
        pytest.skip("a Ray cluster runs on this machine (--ray auto finds it by its processes)")
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    command = [sys.executable, str(ROOT / "evaluate.py"), "--result-dir", "sub", "--gold-dir", "gold", "--ray", "auto"]
    command += ["--db-dir", "dbs/shop"]  # without it, the missing database folder is the exit 2 (test_setup_mistakes)
    result = subprocess.run(command, cwd=world, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 2, result.stderr
    assert "--ray auto: no Ray cluster answers there" in result.stderr and "ray start --head" in result.stderr
    assert "Traceback" not in result.stderr
