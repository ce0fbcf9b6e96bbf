"""The command line as users run it: flags, exit codes, outputs."""

import json
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest
from casefolders import write_instance
from click.testing import CliRunner

from evaluators.cli import main

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def folders(tmp_path):
    write_instance(tmp_path, "good", {"func": "string_match", "parameters": {"gold": "Paris"}}, "answer", "paris")
    write_instance(tmp_path, "bad", {"func": "number_match", "parameters": {"gold": ["7"]}}, "answer", "eight")
    return tmp_path


def _run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_spider2_spelling_grades_without_a_subcommand(folders):
    result = _run("--result_dir", folders / "sub", "--gold_dir", folders / "gold")
    assert result.exit_code == 0, result.output
    assert "50.00%" in result.output and "strict" in result.output


def test_kebab_case_and_output_files(folders, tmp_path):
    out = tmp_path / "out" / "report.json"
    result = _run("grade", "--result-dir", folders / "sub", "--gold-dir", folders / "gold", "--output", out)
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert data["summary"]["gold_instances"] == 2
    assert {i["instance_id"]: i["score"] for i in data["instances"]} == {"good": 1.0, "bad": 0.0}
    assert out.with_suffix(".csv").read_text().startswith("instance_id,")
    figure = ElementTree.fromstring(out.with_suffix(".svg").read_text())
    texts = [t.text or "" for t in figure.iter("{http://www.w3.org/2000/svg}text")]
    assert figure.tag.endswith("svg") and "0%" in texts and "100%" in texts  # a fixed 0-100 % axis
    assert any("(n=2)" in t for t in texts) and "2 gold instances" in texts[0]
    assert not out.with_suffix(".png").exists()
    assert not list(out.parent.glob(".report.*")), "temporary files must not be left behind"


def test_plot_format_png_draws_with_matplotlib(folders, tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "report.json"
    result = _run(
        "--result-dir", folders / "sub", "--gold-dir", folders / "gold", "--output", out, "--plot-format", "png"
    )
    assert result.exit_code == 0, result.output
    assert out.with_suffix(".png").read_bytes()[:4] == b"\x89PNG"
    assert not out.with_suffix(".svg").exists()


def test_fail_under_exits_1(folders):
    result = _run("--result-dir", folders / "sub", "--gold-dir", folders / "gold", "--fail-under", "0.9")
    assert result.exit_code == 1
    assert _run("--result-dir", folders / "sub", "--gold-dir", folders / "gold", "--fail-under", "0.5").exit_code == 0


def test_unreadable_gold_file_exits_2_with_file_and_line(folders):
    (folders / "gold" / "spider2_eval.jsonl").write_bytes(b'{"instance_id": "x"}\n\xff\xfe broken\n')
    result = _run("--result-dir", folders / "sub", "--gold-dir", folders / "gold")
    assert result.exit_code == 2
    assert "spider2_eval.jsonl:2" in result.output and "UTF-8" in result.output


def test_missing_metadata_file_exits_2(folders):
    (folders / "sub" / "results_metadata.jsonl").unlink()
    result = _run("--result-dir", folders / "sub", "--gold-dir", folders / "gold")
    assert result.exit_code == 2 and "results_metadata.jsonl: file not found" in result.output


def test_help_shows_examples():
    result = _run("grade", "--help")
    assert result.exit_code == 0 and "Examples:" in result.output and "--result-dir" in result.output


def test_evaluate_py_runs_as_a_script_and_stays_quiet_when_piped(folders):
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "evaluate.py"),
            "--result_dir",
            str(folders / "sub"),
            "--gold_dir",
            str(folders / "gold"),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    assert "grading [" not in proc.stderr  # no progress bar when stderr is not a terminal
    assert "Graded 2 of 2" in proc.stdout


def test_python_api_returns_the_report(folders):
    from evaluators import grade

    report = grade(folders / "sub", folders / "gold", semantics="strict")
    assert report.summary.semantics == "strict"
    assert report.summary.score == report.summary.strict_score == 0.5


def test_no_plot_writes_the_report_without_a_figure(folders, tmp_path):
    out = tmp_path / "report.json"
    result = _run("--result-dir", folders / "sub", "--gold-dir", folders / "gold", "--output", out, "--no-plot")
    assert result.exit_code == 0, result.output
    assert out.is_file() and out.with_suffix(".csv").is_file()
    assert not out.with_suffix(".png").exists() and not out.with_suffix(".svg").exists()


def test_jobs_auto_shares_out_only_enough_work(monkeypatch):
    from evaluators.grading import jobs as run

    monkeypatch.setattr(run.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    assert run.resolve_jobs("auto", 11) == 1  # the example: one process, no pool to start
    assert run.resolve_jobs("auto", 250) == 2
    assert run.resolve_jobs("auto", 5000) == 4  # never more than the cores
    assert run.resolve_jobs(3, 11) == 3  # a number is taken as given


def test_jobs_auto_and_one_give_the_same_report(folders, monkeypatch):
    from evaluators.grading import jobs as run

    monkeypatch.setattr(run, "AUTO_INSTANCES_PER_JOB", 1)  # two instances: two processes
    monkeypatch.setattr(run.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    assert run.resolve_jobs("auto", 2) == 2
    one = _run("--result-dir", folders / "sub", "--gold-dir", folders / "gold", "--jobs", "1")
    auto = _run("--result-dir", folders / "sub", "--gold-dir", folders / "gold", "--jobs", "auto")
    assert one.exit_code == auto.exit_code == 0
    assert one.output == auto.output
