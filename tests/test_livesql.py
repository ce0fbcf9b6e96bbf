"""`evaluate.py livesql`: LiveSQLBench (SQLite edition) and BIRD-CRITIC SQLite instances from the generator,
graded verdict for verdict as the unmodified official scripts graded them (tests/data/
livesql_official_verdicts.json, recorded by `tests/livesql_generator.py --record`), on private copies."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from livesql_generator import VERDICTS, write
from processes import busy_descendants, descendants

from evaluators.livesql.run import LiveSQLOptions, grade_livesql

OFFICIAL = json.loads(VERDICTS.read_text())


def _hashes(root: Path) -> dict:
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    return write(tmp_path_factory.mktemp("livesql"))


def _grade(generated, label: str, work: Path, path: Path | None = None, **options):
    settings = {"benchmark": label, "db_root": generated["root"], "work_dir": work, "num_threads": 2, **options}
    return grade_livesql(path or generated[label], None, LiveSQLOptions(**settings))


@pytest.mark.parametrize("label", ["livesql", "critic"])
def test_every_verdict_equals_the_official_one_and_the_gold_is_untouched(generated, tmp_path, label):
    before = _hashes(generated["root"])
    report = _grade(generated, label, tmp_path / "work")
    official = {k: v["status"] == "success" for k, v in OFFICIAL[label].items()}
    ours = {i.instance_id: i.score == 1 for i in report.instances}
    assert ours == official
    for instance in report.instances:  # the failing test case is named as the official harness names it
        failed = OFFICIAL[label][instance.instance_id]["failed_test_cases"]
        if failed:
            assert instance.detail.startswith(failed[0]), instance.detail
    assert _hashes(generated["root"]) == before  # byte-identical templates, nothing created beside them
    assert not any((tmp_path / "work").rglob("*.sqlite*"))  # every private copy deleted


def test_strict_disagrees_only_where_the_official_helpers_are_lossy(generated, tmp_path):
    report = _grade(generated, "livesql", tmp_path)
    by_id = {i.instance_id: i for i in report.instances}
    lossy = {"q_round_kept", "q_round_2dp", "q_distinct", "q_dupes", "q_custom_rounded"}
    # q_rewrite deletes rows and the official ex_base re-runs the gold on what is left; strict does not
    assert {i for i, r in by_id.items() if r.score == 1 and r.strict_score == 0} == lossy | {"q_rewrite"}
    assert {i for i, r in by_id.items() if r.score == 0 and r.strict_score == 1} == {"q_empty_gold"}
    assert report.summary.breakdowns["category"]["Management"]["n"] == 14
    assert set(report.summary.breakdowns["database"]) == {"shop", "library"}
    table = report.summary.execution_metrics["livesql"]
    assert table["overall"]["n"] == 31


def _one(tmp_path: Path, generated, **fields) -> Path:
    base = json.loads(generated["livesql"].read_text().splitlines()[0])
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps({**base, **fields}) + "\n")
    return path


def test_a_looping_test_case_is_stopped_and_nothing_keeps_running(generated, tmp_path):
    loop = "def test_case(pred_sqls, sol_sqls, db_path, conn):\n    while True:\n        pass\n"
    path = _one(tmp_path, generated, test_cases=[loop])
    report = _grade(generated, "livesql", tmp_path / "work", path, instance_timeout_s=0.5)
    assert report.instances[0].reason == "timeout"
    assert busy_descendants(0.5) < 0.2
    assert not any((tmp_path / "work").rglob("*.sqlite*"))


@pytest.mark.parametrize(
    "statement",
    [
        "ATTACH DATABASE '{dir}/stolen.sqlite' AS x",
        "VACUUM INTO '{dir}/copy.sqlite'",
        "SELECT load_extension('/tmp/nothing')",
        "PRAGMA max_page_count = 1000000000",
    ],
)
def test_a_prediction_cannot_reach_outside_its_copy(generated, tmp_path, statement):
    path = _one(tmp_path, generated, pred_sqls=[statement.format(dir=tmp_path)])
    report = _grade(generated, "livesql", tmp_path / "work", path)
    assert report.instances[0].reason == "exec_error", report.instances[0].detail
    assert not list(tmp_path.glob("*.sqlite"))


def test_a_prediction_that_fills_the_disk_fails_at_the_limit(generated, tmp_path):
    fill = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n LIMIT 200000) "
    fill = "CREATE TABLE big AS " + fill + "SELECT i, printf('%.100c', 'x') FROM n"
    path = _one(
        tmp_path, generated, category="Management", pred_sqls=[fill], test_cases=["def test_case(*a):\n    pass\n"]
    )
    report = _grade(generated, "livesql", tmp_path / "work", path, disk_limit_mb=1)
    assert report.instances[0].reason == "exec_error"
    assert "full" in report.instances[0].detail


def test_the_command_line_writes_the_reports(generated, tmp_path):
    from click.testing import CliRunner

    from evaluators.cli import main

    out = tmp_path / "out" / "live.json"
    args = ["livesql", "--jsonl_file", str(generated["critic"]), "--benchmark", "critic"]
    args += ["--db_root", str(generated["root"]), "--output", str(out), "--html", "--num_threads", "2"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "overall" in result.output and "issue_sql_passed" in result.output
    assert out.exists() and out.with_suffix(".csv").exists() and out.with_suffix(".html").exists()


def test_gold_mode_and_a_separate_gold_file(generated, tmp_path):
    lines = [json.loads(x) for x in generated["livesql"].read_text().splitlines()]
    gold, preds = tmp_path / "gold.jsonl", tmp_path / "preds.jsonl"
    gold.write_text("".join(json.dumps({k: v for k, v in x.items() if k != "pred_sqls"}) + "\n" for x in lines))
    preds.write_text(
        "".join(json.dumps({"instance_id": x["instance_id"], "pred_sqls": x["pred_sqls"]}) + "\n" for x in lines[:5])
    )
    options = LiveSQLOptions(db_root=generated["root"], work_dir=tmp_path / "w", num_threads=2)
    report = grade_livesql(preds, gold, options)
    assert [i.reason for i in report.instances[5:]] == ["missing_prediction"] * (len(lines) - 5)
    gold_mode = grade_livesql(
        gold, None, LiveSQLOptions(db_root=generated["root"], work_dir=tmp_path / "w", mode="gold")
    )
    failing = {i.instance_id for i in gold_mode.instances if i.score < 1}
    # the gold fails where the official harness fails it too: no rows, tests declaring conditions, no QEP
    # helper, a test reading the TEMP table on a connection of its own
    assert failing == {"q_empty_gold", "q_custom_cond", "m_qep_missing", "m_conditions_param", "m_temp_table"}


def interrupt_run(args: list, work: Path, signum: int = signal.SIGINT) -> tuple[int, list, str]:
    """Start `evaluate.py livesql ARGS`, signal it once a worker runs; (exit code, processes left, stderr)."""
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(root)}
    command = [sys.executable, str(root / "evaluate.py"), "livesql", *args, "--work-dir", str(work)]
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen: set = set()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not any((work / "livesql").glob("*/*.sqlite")) and len(seen) < 1:
        seen.update(descendants(proc.pid))
        time.sleep(0.05)
    time.sleep(1.0)  # the worker is inside the instance now
    seen.update(descendants(proc.pid))
    proc.send_signal(signum)
    _, stderr = proc.communicate(timeout=30)
    time.sleep(0.5)
    return proc.returncode, [p for p in seen if Path(f"/proc/{p}").exists()], stderr


def test_ctrl_c_leaves_nothing_running_and_no_copy(generated, tmp_path):
    before = _hashes(generated["root"])
    loop = "def test_case(pred_sqls, sol_sqls, db_path, conn):\n    while True:\n        pass\n"
    path = _one(tmp_path, generated, test_cases=[loop])
    code, left, stderr = interrupt_run(["--jsonl_file", str(path), "--db_root", str(generated["root"])], tmp_path / "w")
    assert code == 130, stderr
    assert not left
    assert not any((tmp_path / "w").rglob("*.sqlite*"))
    assert _hashes(generated["root"]) == before


def test_a_test_case_that_takes_all_memory_fails_alone(generated, tmp_path):
    greedy = "def test_case(pred_sqls, sol_sqls, db_path, conn):\n    hog = bytearray(64 * 1024 ** 3)\n"
    path = _one(tmp_path, generated, test_cases=[greedy])
    report = _grade(generated, "livesql", tmp_path / "work", path, memory_limit_mb=256)
    assert report.instances[0].reason == "test_failed"
    assert "MemoryError" in report.instances[0].detail or "memory" in report.instances[0].detail.lower()


def test_relative_paths_grade_as_absolute_ones(generated, tmp_path, monkeypatch):
    absolute = _grade(generated, "critic", tmp_path / "a")
    monkeypatch.chdir(generated["root"].parent)
    options = LiveSQLOptions(benchmark="critic", db_root=Path("databases"), work_dir=Path("w"))
    relative = grade_livesql(Path("critic.jsonl"), None, options)
    assert [i.score for i in relative.instances] == [i.score for i in absolute.instances]


def _public_and_gt(generated, tmp_path: Path, gt_extra=None) -> tuple[Path, Path]:
    """The files as LiveSQLBench ships them: the public lines (empty sol_sql and test_cases) with the
    predictions, and a GT file holding only the protected fields (integrate_gt_data.py's)."""
    lines = [json.loads(x) for x in generated["livesql"].read_text().splitlines()]
    public, gt = tmp_path / "public.jsonl", tmp_path / "gt.jsonl"
    public.write_text("".join(json.dumps({**x, "sol_sql": "", "test_cases": []}) + "\n" for x in lines))
    protected = ("instance_id", "sol_sql", "test_cases")
    gt.write_text(
        "".join(
            json.dumps({**{k: x[k] for k in protected}, "external_knowledge": [], **(gt_extra or {})}) + "\n"
            for x in lines
        )
    )
    return public, gt


def test_a_gt_file_is_laid_over_the_public_lines_as_the_benchmark_does(generated, tmp_path):
    public, gt = _public_and_gt(generated, tmp_path)
    report = grade_livesql(public, gt, LiveSQLOptions(db_root=generated["root"], work_dir=tmp_path / "w"))
    official = {k: v["status"] == "success" for k, v in OFFICIAL["livesql"].items()}
    # conditions.order and the category come from the public line (q_order_wrong fails, Management runs its tests)
    assert {i.instance_id: i.score == 1 for i in report.instances} == official
    assert not report.summary.problems


def test_fields_the_two_files_give_differently_are_said_and_the_gold_wins(generated, tmp_path):
    public, gt = _public_and_gt(generated, tmp_path, {"conditions": {"order": True}})
    report = grade_livesql(public, gt, LiveSQLOptions(db_root=generated["root"], work_dir=tmp_path / "w"))
    by_id = {i.instance_id: i for i in report.instances}
    assert by_id["q_order_free"].score == 0  # the gold's order applies
    said = [p.message for p in report.summary.problems]
    assert any("q_order_free: 'conditions' differs" in m and "gold's is used" in m for m in said), said


def test_gold_errors_exit_2_unless_allowed(generated, tmp_path):
    from click.testing import CliRunner

    from evaluators.cli import main

    public, gt = _public_and_gt(generated, tmp_path)
    lines = gt.read_text().splitlines()
    broken = json.loads(lines[0])
    del broken["sol_sql"]
    gt.write_text("\n".join([json.dumps(broken), *lines[1:]]) + "\n")
    args = ["livesql", "--jsonl_file", str(public), "--gold", str(gt), "--db_root", str(generated["root"])]
    args += ["--work-dir", str(tmp_path / "w"), "--num_threads", "2"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    assert "gold error" in result.output and "q_exact" in result.output
    assert CliRunner().invoke(main, [*args, "--allow-gold-errors"]).exit_code == 0


def test_the_command_prints_the_official_statistics_block(generated, tmp_path):
    """The official evaluation.py's report.txt block: its counts from the recorded official verdicts."""
    from click.testing import CliRunner

    from evaluators.cli import main

    args = ["livesql", "--jsonl_file", str(generated["livesql"]), "--db_root", str(generated["root"])]
    result = CliRunner().invoke(main, [*args, "--num_threads", "2", "--work-dir", str(tmp_path / "w")])
    assert result.exit_code == 0, result.output
    statuses = [v["status"] for v in OFFICIAL["livesql"].values()]
    failed = statuses.count("failed")
    block = result.output[result.output.index("-" * 50) :].splitlines()
    assert block[:3] == [
        "-" * 50,
        "BIRD-Interact Statistics (Postgres, Multi-Thread):",
        f"Number of Instances: {len(statuses)}",
    ]
    counts = [int(line.rsplit(": ", 1)[1]) for line in block[3:6]]
    assert [line.split(":")[0] for line in block[3:8]] == [
        "Number of Execution Errors",
        "Number of Timeouts",
        "Number of Assertion Errors",
        "Total Errors",
        "Overall Accuracy",
    ]
    assert sum(counts) == failed and block[6] == f"Total Errors: {failed}"
    assert block[7] == f"Overall Accuracy: {100 * (len(statuses) - failed) / len(statuses):.2f}%"


def test_output_writes_the_official_report_txt_beside_ours(generated, tmp_path):
    """With --output, the official evaluation.py's report.txt goes beside our report: its statistics block,
    a timestamp, then per instance (sorted by id) the failed test cases the official run recorded."""
    import re

    from click.testing import CliRunner

    from evaluators.cli import main

    args = ["livesql", "--jsonl_file", str(generated["livesql"]), "--db_root", str(generated["root"])]
    args += ["--num_threads", "2", "--work-dir", str(tmp_path / "w"), "--output", str(tmp_path / "run.json")]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    text = (tmp_path / "run.report.txt").read_text()
    head, _, questions = text.partition("\n\n")
    printed = result.output[result.output.index("-" * 50) :].splitlines()[:8]
    assert head.splitlines()[:8] == printed and head.splitlines()[8].startswith("Timestamp: ")
    official = OFFICIAL["livesql"]
    rows = questions.splitlines()
    assert [re.match(r"Question_(\S+): ", row).group(1) for row in rows] == sorted(official)
    for row in rows:
        found = re.match(r"Question_(\S+): \((\d+)/(\d+)\) test cases passed, failed test cases: ([^|]*)(.*)", row)
        instance, listed, note = found.group(1), found.group(4).strip(), found.group(5)
        failed = [] if listed in ("", "None") else listed.split(", ")
        assert failed == official[instance]["failed_test_cases"], row
        assert bool(note) == (official[instance]["status"] == "failed"), row
    assert "run.report.txt" in result.output


def test_the_memory_cap_counts_from_what_a_reused_worker_holds_already():
    """A worker that mapped gigabytes before (DuckDB and pyarrow reserve that much) must still give the next
    instance its room: the first allocation failed, and the instance was exec_error instead of its verdict."""
    code = """
import mmap
from evaluators.livesql.security import process_memory_limit
held = mmap.mmap(-1, 6 * 1024 ** 3, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, prot=0)  # PROT_NONE: address space only
with process_memory_limit(256):
    room = bytearray(64 * 1024 ** 2)
    try:
        bytearray(64 * 1024 ** 3)
        print("uncapped")
    except MemoryError:
        print("capped")
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=Path(__file__).parents[1])
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["capped"]
