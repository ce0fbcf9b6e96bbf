"""Reports a researcher can put in a paper: intervals, provenance, gold errors, JSON on stdout, compare, HTML."""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from browser import render
from casefolders import write_instance
from helpers_io import run_cli

from evaluators import grade
from evaluators.metrics.stats import bootstrap_ci, mcnemar_exact, paired_bootstrap_ci

ROOT = Path(__file__).resolve().parents[1]
TABLE = "a,b\n1,x\n2,y\n"
SPEC = {"func": "table_match", "parameters": {"gold": "g.csv", "ignore_order": True}}


def _run(root: Path, name: str, right: set[int], n: int = 60) -> Path:
    """A submission of n instances of which `right` are answered correctly; the same gold every time."""
    sub = root / name
    for k in range(n):
        iid = f"q{k:03d}"
        pred = TABLE if k in right else "a,b\n9,z\n"
        meta = {"difficulty": ["easy", "medium", "hard"][k % 3]}
        if not (root / "gold" / iid).exists():
            write_instance(root, iid, SPEC, "file", "r.csv", {"g.csv": TABLE}, {"r.csv": pred}, meta)
        else:
            (root / "sub" / iid).mkdir(parents=True, exist_ok=True)
            (root / "sub" / iid / "r.csv").write_text(pred)
            with open(root / "sub" / "results_metadata.jsonl", "a") as handle:
                handle.write(json.dumps({"instance_id": iid, "answer_type": "file", "answer_or_path": "r.csv"}) + "\n")
    (root / "sub").rename(sub)
    out = root / f"{name}.json"
    result = run_cli("--result-dir", sub, "--gold-dir", root / "gold", "--output", out, "--no-plot", "--jobs", "1")
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    baseline = _run(root, "base", set(range(0, 60, 2)))  # 30 right
    candidate = _run(root, "cand", set(range(0, 60, 2)) - {0, 2, 4} | {1, 3, 5, 7, 9, 11, 13, 15, 17, 19})  # 37 right
    return root, baseline, candidate


def test_compare_matches_an_independent_computation(two_runs, tmp_path):
    from scipy.stats import binomtest

    root, baseline, candidate = two_runs
    out = tmp_path / "cmp.json"
    result = run_cli("compare", baseline, candidate, "--output", out, "--html", tmp_path / "cmp.html")
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    base = {i["instance_id"]: i["score"] for i in json.loads(baseline.read_text())["instances"]}
    cand = {i["instance_id"]: i["score"] for i in json.loads(candidate.read_text())["instances"]}
    fixed = sorted(i for i in base if base[i] == 0 and cand[i] == 1)
    broken = sorted(i for i in base if base[i] == 1 and cand[i] == 0)
    assert data["fixed"] == fixed and data["broken"] == broken and (len(fixed), len(broken)) == (10, 3)
    assert data["delta"] == pytest.approx((sum(cand.values()) - sum(base.values())) / 60)
    assert data["mcnemar"] == {"b": 3, "c": 10, "p_value": pytest.approx(binomtest(10, 13, 0.5).pvalue, rel=1e-9)}
    ids = sorted(base)
    import numpy as np

    diffs = np.array([cand[i] - base[i] for i in ids])
    rng = np.random.default_rng(20241)
    means = diffs[rng.integers(0, len(diffs), size=(2000, len(diffs)))].mean(axis=1)
    assert data["delta_ci95"] == pytest.approx(list(np.quantile(means, [0.025, 0.975])))
    assert data["strict"]["mcnemar"]["b"] == 3 and set(data) >= {"semantics", "n", "baseline", "candidate"}
    assert "Baseline vs Candidate" in result.output and "by difficulty" in result.output


def test_compare_refuses_reports_of_different_gold(two_runs, tmp_path):
    root, baseline, candidate = two_runs
    other = json.loads(candidate.read_text())
    other["summary"]["provenance"]["gold_digest"] = "0" * 64
    changed = tmp_path / "other.json"
    changed.write_text(json.dumps(other))
    result = run_cli("compare", baseline, changed)
    assert result.exit_code == 2 and "different gold" in result.output


def test_every_report_has_intervals_graded_score_and_provenance(two_runs):
    root, baseline, _ = two_runs
    summary = json.loads(baseline.read_text())["summary"]
    assert json.loads(baseline.read_text())["version"] == 2
    low, high = summary["score_ci95"]
    assert low < summary["score"] < high and summary["graded_score"] == pytest.approx(0.5)
    provenance = summary["provenance"]
    assert (
        provenance["gold_sha256"]["spider2_eval.jsonl"]
        == __import__("hashlib").sha256((root / "gold" / "spider2_eval.jsonl").read_bytes()).hexdigest()
    )
    assert provenance["python"] and provenance["libraries"]["pandas"] and provenance["command"]


def test_csv_has_the_metadata_columns(two_runs):
    _, baseline, _ = two_runs
    rows = list(csv.DictReader(io.StringIO(baseline.with_suffix(".csv").read_text())))
    assert rows[0]["difficulty"] == "easy" and rows[1]["difficulty"] == "medium"


def test_gold_errors_are_counted_apart_and_exit_2(tmp_path):
    write_instance(tmp_path, "ok", SPEC, "file", "r.csv", {"g.csv": TABLE}, {"r.csv": TABLE})
    write_instance(
        tmp_path,
        "typo",
        {"func": "table_matc", "parameters": {"gold": "g.csv"}},
        "file",
        "r.csv",
        {"g.csv": TABLE},
        {"r.csv": TABLE},
    )
    result = run_cli("--result-dir", tmp_path / "sub", "--gold-dir", tmp_path / "gold")
    assert result.exit_code == 2 and "gold error" in result.output and "typo" in result.output
    assert "Gold errors (1" in result.output
    allowed = run_cli("--result-dir", tmp_path / "sub", "--gold-dir", tmp_path / "gold", "--allow-gold-errors")
    assert allowed.exit_code == 0


def test_format_json_prints_only_the_report_on_stdout(two_runs):
    root, _, _ = two_runs
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "evaluate.py"),
            "--result-dir",
            str(root / "base"),
            "--gold-dir",
            str(root / "gold"),
            "--format",
            "json",
            "--jobs",
            "1",
        ],
        capture_output=True,
        text=True,
        cwd=root,
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)["summary"]
    assert summary["gold_instances"] == 60 and "--format json" in summary["provenance"]["command"]


def test_failed_instances_are_listed_in_the_terminal(two_runs):
    root, _, _ = two_runs
    result = run_cli("--result-dir", root / "base", "--gold-dir", root / "gold", "--jobs", "1")
    assert "Failed (30; reason and detail)" in result.output and "q001: row_count_mismatch" in result.output
    assert "... and 10 more" in result.output


def test_api_and_cli_give_the_same_report_on_the_example(tmp_path):
    out = tmp_path / "cli.json"
    result = run_cli(
        "--result-dir",
        ROOT / "example_submission_folder",
        "--gold-dir",
        ROOT / "gold",
        "--output",
        out,
        "--no-plot",
        "--work-dir",
        tmp_path / "w",
    )
    assert result.exit_code == 0, result.output
    cli = json.loads(out.read_text())
    graded = grade(ROOT / "example_submission_folder", ROOT / "gold")  # one grading serves both views
    api = graded.to_dict()

    def strip(d):
        return [(i["instance_id"], i["score"], i["strict_score"], i["reason"]) for i in d["instances"]]

    assert strip(api) == strip(cli) and api["summary"]["score"] == cli["summary"]["score"]
    frame = graded.to_pandas()
    assert list(frame["instance_id"]) == [i["instance_id"] for i in cli["instances"]]


@pytest.mark.parametrize("fixed, broken", [(0, 0), (1, 0), (10, 3), (3, 10), (25, 25), (0, 40)])
def test_mcnemar_equals_scipy(fixed, broken):
    from scipy.stats import binomtest

    expected = 1.0 if fixed + broken == 0 else binomtest(fixed, fixed + broken, 0.5).pvalue
    assert mcnemar_exact(fixed, broken) == pytest.approx(expected, rel=1e-12)


def test_bootstrap_intervals_are_seeded_and_sane():
    assert bootstrap_ci([1.0] * 10) == (1.0, 1.0)
    assert bootstrap_ci([0.0, 1.0] * 50) == bootstrap_ci([0.0, 1.0] * 50)
    low, high = paired_bootstrap_ci([0.0] * 50, [1.0] * 25 + [0.0] * 25)
    assert 0.3 < low < 0.5 < high < 0.7


def test_html_report_renders_in_chromium_with_the_reports_numbers(two_runs, tmp_path):
    root, baseline, candidate = two_runs
    page = tmp_path / "report.html"
    result = run_cli("--result-dir", root / "base", "--gold-dir", root / "gold", "--output", page, "--jobs", "1")
    assert result.exit_code == 0, result.output
    text = page.read_text()
    assert not re.search(r"""(src|href)=["']https?://""", text), "self-contained: nothing fetched"
    dom = render(page, tmp_path / "report.png")
    summary = json.loads(baseline.read_text())["summary"]
    assert f'id="score">{100 * summary["score"]:.2f}%' in dom
    assert f'id="strict-score">{100 * summary["strict_score"]:.2f}%' in dom
    assert f'id="gold-instances">{summary["gold_instances"]}<' in dom
    assert dom.count("<tr>") >= 60 and "<svg" in dom and "q059" in dom
    assert (tmp_path / "report.png").stat().st_size > 10_000


def test_comparison_html_renders_in_chromium_with_the_flips(two_runs, tmp_path):
    _, baseline, candidate = two_runs
    page = tmp_path / "cmp.html"
    result = run_cli("compare", baseline, candidate, "--html", page)
    assert result.exit_code == 0
    dom = render(page, tmp_path / "cmp.png")
    assert "Baseline vs Candidate" in dom
    for semantics in ("spider2", "strict"):  # table_match: strict flips the same instances here
        assert dom.count(f'<td>{semantics}</td><td class="pass">fixed (0 → 1)') == 10
        assert dom.count(f'<td>{semantics}</td><td class="fail">broken (1 → 0)') == 3


def test_compare_text_prints_readable_numbers():
    from evaluators.reporting.compare import comparison_text

    part = {
        "baseline": {"score": 0.5},
        "candidate": {"score": 0.6},
        "delta": 0.1,
        "delta_ci95": [0.01, 0.2],
        "mcnemar": {"b": 1, "c": 2, "p_value": 0.5},
        "fixed": ["q2", "q3"],
        "broken": ["q1"],
    }
    group = {"n": 3, "baseline": 0.5, "candidate": 0.6, "delta": 0.1, "fixed": 1, "broken": 0}
    data = {
        "n": 3,
        "semantics": "spider2",
        **part,
        "strict": {**part, "fixed": ["q9"], "broken": []},
        "breakdowns": {"func": {"table_match": {**group, "strict": {**group, "delta": -0.25}}}},
        "execution": {
            "mean_seconds": {"baseline": 0.0040134189998752845, "candidate": 0.0051},
            "ex_bird": {"baseline": 0.5, "candidate": 0.625},
            "ves": {"baseline": 101.23456, "candidate": None},
        },
    }
    text = comparison_text(data)
    assert "mean_seconds 4.0 ms -> 5.1 ms, ex_bird 50.00% -> 62.50%, ves 101.23 -> n/a" in text
    assert "0.0040134" not in text
    assert "fixed (0 -> 1) under strict: q9" in text and "broken (1 -> 0) under spider2: q1" in text
    assert re.search(r"table_match\s+3\s+50\.00\s+60\.00\s+\+10\.00\s+-25\.00", text)


def test_plot_axes_are_0_to_100_and_40_labels_do_not_overlap(tmp_path):
    pytest.importorskip("matplotlib")
    from evaluators.reporting.plots import report_figure

    for k in range(80):
        write_instance(
            tmp_path,
            f"i{k:02d}",
            SPEC,
            "file",
            "r.csv",
            {"g.csv": TABLE},
            {"r.csv": TABLE if k % 3 else "a,b\n0,q\n"},
            {"db": f"database_number_{k % 40:02d}"},
        )
    report = grade(tmp_path / "sub", tmp_path / "gold")
    fig = report_figure(report)
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    axes = fig.get_axes()
    assert all(ax.get_xlim() == (0.0, 100.0) for ax in axes)
    by_db = next(ax for ax in axes if ax.get_title(loc="left") == "by db")
    labels = [t for t in by_db.get_yticklabels() if t.get_text()]
    assert len(labels) == 40 and all("(n=2)" in t.get_text() for t in labels)
    boxes = sorted((t.get_window_extent(renderer) for t in labels), key=lambda b: b.y0)
    assert all(a.y1 <= b.y0 + 0.5 for a, b in zip(boxes, boxes[1:], strict=False)), "labels overlap"


@pytest.mark.parametrize("n, passed", [(10, 5), (60, 30), (7, 1), (200, 173), (1000, 862), (400, 399)])
def test_the_exact_binary_interval_is_what_resampling_approximates(n, passed):
    """Scores of 0 and 1 take the exact bootstrap distribution (no numpy); numpy's resampling, run long, lands
    within one step (1/n) of it at both ends."""
    import numpy as np

    values = np.array([1.0] * passed + [0.0] * (n - passed))
    rng = np.random.default_rng(7)
    means = np.concatenate([values[rng.integers(0, n, size=(5000, n))].mean(axis=1) for _ in range(10)])
    expected = np.quantile(means, [0.025, 0.975])
    exact = bootstrap_ci([1.0] * passed + [0.0] * (n - passed))
    assert exact == pytest.approx(list(expected), abs=1 / n + 1e-9)
    assert exact[0] <= passed / n <= exact[1]


def test_library_versions_are_what_importlib_metadata_says(tmp_path, monkeypatch):
    """The provenance reads versions from the dist-info folders' names; importlib.metadata (which the report no
    longer imports) gives the same, for the libraries it names, this package, and a made-up distribution."""
    from importlib import metadata

    from evaluators.reporting.provenance import LIBRARIES, _version

    made = tmp_path / "Made_Up.Pkg-1.2.3.dist-info"
    made.mkdir()
    (made / "METADATA").write_text("Metadata-Version: 2.1\nName: Made_Up.Pkg\nVersion: 1.2.3\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in (*LIBRARIES, "spider-grade", "made-up-pkg", "Made_Up.Pkg"):
        assert _version(name) == metadata.version(name), name
    assert _version("no-such-distribution") is None
