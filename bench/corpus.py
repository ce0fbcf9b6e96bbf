"""Self-grading a Spider2-lite gold corpus: every instance answered with its own first gold file.

`build_self_grade` writes, in a temporary folder, the gold in this project's
format (through `evaluators.goldtools.lite_import`, which copies the files)
and a submission whose `results_metadata.jsonl` points each instance at a
copy of its first gold file (answers are copied, not linked: grading refuses
links that leave the instance folder).  `time_self_grade` then runs
`evaluate.py` and `bench/baseline.py` on it as child processes, process start
included, and returns wall and CPU seconds.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpora" / "spider2-lite"


def build_self_grade(corpus: Path, work: Path) -> tuple[Path, Path, int]:
    """(gold_dir, result_dir, instances) for grading the corpus against itself."""
    sys.path.insert(0, str(ROOT))
    from evaluators.goldtools.lite_import import import_spider2_lite
    from evaluators.loading.specs import load_gold

    gold_dir, result_dir = work / "gold", work / "submission"
    if gold_dir.exists():
        shutil.rmtree(gold_dir)
    import_spider2_lite(corpus / "gold", gold_dir)
    result_dir.mkdir(parents=True, exist_ok=True)
    lines = []
    for iid, gold in load_gold(gold_dir).records.items():
        files = [f for s in gold.specs for f in _files(s.parameters.get("gold"))]
        if not files or not (gold_dir / iid / files[0]).is_file():
            continue
        (result_dir / iid).mkdir(exist_ok=True)
        shutil.copyfile(gold_dir / iid / files[0], result_dir / iid / files[0])
        lines.append(json.dumps({"instance_id": iid, "answer_type": "file", "answer_or_path": files[0]}))
    (result_dir / "results_metadata.jsonl").write_text("\n".join(lines) + "\n")
    return gold_dir, result_dir, len(lines)


def _files(gold) -> list[str]:
    return [gold] if isinstance(gold, str) else list(gold or [])


def _timed(command: list[str]) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds of the child, its stderr's last line)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": "0"})
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise RuntimeError(f"{command[:3]} failed ({done.returncode}): {done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    tail = (done.stderr.strip().splitlines() or [""])[-1]
    return wall, cpu, tail


def time_self_grade(
    gold_dir: Path, result_dir: Path, work: Path, semantics: str = "spider2", jobs: int | str = 1
) -> dict:
    """Wall and CPU seconds of this project's grader and of the baseline, and whether their verdicts agree.

    The grader writes its JSON report (to compare verdicts) but no PNG: the baseline draws no picture either."""
    python = sys.executable
    report = work / "report.json"
    ours = _timed(
        [
            python,
            "evaluate.py",
            "--result_dir",
            str(result_dir),
            "--gold_dir",
            str(gold_dir),
            "--semantics",
            semantics,
            "--output",
            str(report),
            "--no-plot",
            "--jobs",
            str(jobs),
        ]
    )
    scores = work / "baseline.json"
    base = _timed(
        [python, "bench/baseline.py", str(gold_dir), str(result_dir), "--semantics", semantics, "--output", str(scores)]
    )
    graded = {i["instance_id"]: i["score"] for i in json.loads(report.read_text())["instances"]}
    baseline = json.loads(scores.read_text())
    differ = sorted(i for i in baseline if float(graded.get(i, -1)) != float(baseline[i]))
    return {
        "ours_wall": ours[0],
        "ours_cpu": ours[1],
        "baseline_wall": base[0],
        "baseline_cpu": base[1],
        "instances": len(baseline),
        "matched_ours": int(sum(float(v) for v in graded.values())),
        "matched_baseline": int(sum(baseline.values())),
        "verdicts_differ": differ,
    }
