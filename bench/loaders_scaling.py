"""Loaders scale linearly: time at n and at 4n, for the inputs an attacker controls the size of.

    python bench/loaders_scaling.py            # prints a table; exit 1 when a ratio looks quadratic
    python bench/loaders_scaling.py --small    # the quick sizes tests/test_bench_smoke.py could use
    python bench/loaders_scaling.py --only "text rules"   # the rows whose name has these words

- `results_metadata.jsonl` of n broken lines (each once cost a re-read and re-split of the whole file);
- BIRD's predictions object of n keys (each key's line was once counted from the top of the file), plain
  keys and keys written with \\u escapes (which a text search cannot find);
- query similarity of a prediction of n tokens against a 150-token gold (ROUGE-L's table grew with n);
- LiveSQLBench's PostgreSQL statement rules over n bytes of each hostile shape (`copy to ` words in a
  comment once took 5.8 s at 64 KB and was killed at 256 KB; unclosed quotes, comments, dollar quotes,
  DO blocks, backslashes, brackets).

The figure is the ratio t(4n) / t(n): about 4 for linear work, about 16 for quadratic; similarity, bounded,
stays near 1 once n passes the cap.  Medians of a few runs of CPU time; timings are never asserted in tests.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evaluators.bird import native  # noqa: E402
from evaluators.loading import specs  # noqa: E402

LINEAR_ENOUGH = 8.0  # between linear (4) and quadratic (16), with room for noise on a shared machine


def _timed(function, runs: int = 3) -> float:
    """The median CPU time of `function` (the process's own: other work on a shared machine does not count)."""
    times = []
    for _ in range(runs):
        started = time.process_time()
        function()
        times.append(time.process_time() - started)
    return statistics.median(times)


def _metadata(folder: Path, n: int) -> Path:
    sub = folder / f"meta-{n}"
    sub.mkdir()
    lines = (f'{{"instance_id": "q{i}", "answer_type": "answer", "answer_or_path": broken}}' for i in range(n))
    (sub / specs.SUBMISSION_FILE).write_text("\n".join(lines) + "\n")
    return sub


def _predictions(folder: Path, n: int, escaped: bool) -> Path:
    path = folder / f"predict-{n}-{escaped}.json"
    key = (lambda i: "".join(f"\\u{ord(c):04x}" for c in str(i))) if escaped else str
    sep = json.dumps("\t----- bird -----\t")[1:-1]
    path.write_text("{\n" + ",\n".join(f'"{key(i)}": "SELECT {i}{sep}db"' for i in range(n)) + "\n}")
    return path


def _metadata_case(folder: Path):
    def make(n: int):
        sub = _metadata(folder, n)
        return lambda: specs.load_submission(sub)

    return make


def _predictions_case(folder: Path, escaped: bool):
    def make(n: int):
        path = _predictions(folder, n, escaped)
        return lambda: native.read_predictions(path)

    return make


def _similarity(n: int):
    from evaluators.metrics.similarity import query_similarity

    gold = "SELECT " + ", ".join(f"c{i}" for i in range(70)) + " FROM t WHERE a = 1 ORDER BY c1"
    pred = "SELECT " + ", ".join(f"x{i}" for i in range(n // 2)) + " FROM t"
    return lambda: query_similarity(pred, gold)


_PG_TEXT_SHAPES = {
    "comment of `copy to `": ("/* ", "copy to ", "*/"),
    "`copy to ` words": ("", "copy to ", ""),
    "quotes": ("", "'", ""),
    "unclosed comments": ("", "/*", ""),
    "DO blocks": ("", "DO $$ ", ""),
    "backslash strings": ("", "E'\\", ""),
    "dollar signs": ("", "$a", ""),
    "brackets": ("", "()", ""),
}


def _pg_text_case(shape: str):
    from evaluators.livesql.security import refused

    head, unit, tail = _PG_TEXT_SHAPES[shape]
    return lambda n: lambda: refused([head + unit * (n // len(unit)) + tail], "postgres")


def main(small: bool = False, only: str = "") -> dict:
    sizes = {"metadata": 2_000, "bird": 10_000, "similarity": 20_000, "text": 256 * 1024}
    if small:
        sizes = {k: v // 10 for k, v in sizes.items()}
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        cases = {
            "metadata, broken lines": _metadata_case(folder),
            "BIRD predictions, plain keys": _predictions_case(folder, False),
            "BIRD predictions, escaped keys": _predictions_case(folder, True),
        }
        cases.update({f"PostgreSQL text rules, {shape} (bytes)": _pg_text_case(shape) for shape in _PG_TEXT_SHAPES})
        base = {"metadata, broken lines": "metadata", **{name: "text" for name in cases if "text rules" in name}}
        for name, make in cases.items():
            if only not in name:
                continue
            n = sizes[base.get(name, "bird")]
            results[name] = (n, _timed(make(n)), _timed(make(4 * n)))
        try:
            if only not in "similarity, tokens":
                raise LookupError(f"not among --only {only}")
            _similarity(10)()
            n = sizes["similarity"]
            results["similarity, tokens"] = (n, _timed(_similarity(n)), _timed(_similarity(4 * n)))
        except Exception as exc:  # the rewards extra is not installed
            print(f"similarity skipped: {exc}")
    print("| loader | n | t(n) | t(4n) | ratio |\n|---|---|---|---|---|")
    bad = []
    for name, (n, small_t, large_t) in results.items():
        ratio = large_t / max(small_t, 1e-9)
        print(f"| {name} | {n:,} | {small_t * 1000:.1f} ms | {large_t * 1000:.1f} ms | {ratio:.1f} |")
        if ratio > LINEAR_ENOUGH and large_t > 0.05:
            bad.append(name)
    if bad:
        print(f"looks quadratic: {bad}")
    return {"results": results, "quadratic": bad}


if __name__ == "__main__":
    only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else ""
    outcome = main("--small" in sys.argv, only)
    sys.exit(1 if outcome["quadratic"] else 0)
