"""No Python repr in any text a user reads: the terminal, the details in the JSON and CSV, the HTML pages.

The bundled example graded as a user grades it (runB: two answers wrong, so number_match's and the table rules'
miss words appear), and the comparison of the two runs; every text is scanned for what Python's repr() leaves
(np.float64(0.0), {'live': 1}, ['12.5%'], `(or)`, 0.22844160091143337).  Machine data stays exact: the JSON's
numbers and the HTML's data-value attributes and embedded JSON are not scanned, only their words.
"""

from __future__ import annotations

import html
import json
import re
import shutil
from pathlib import Path

import pytest
from helpers_io import run_cli

from evaluators.matching.answers import number_official, number_strict, string_strict

ROOT = Path(__file__).resolve().parents[1]
REPRS = re.compile(
    r"np\.\w+\(|numpy\.\w+\(|Decimal\(|Timestamp\(|datetime\.\w+\(|\{'|\['|\(or\)|\(and\)|\b\d+\.\d{9,}"
    r"|<NA>|\bnan\b"
)


def _strings(value, where: str = ""):
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, dict):
        for key, item in value.items():
            if key != "provenance":  # the command line as typed, paths and versions: the user's own words
                yield from _strings(item, f"{where}.{key}")
    elif isinstance(value, list):
        for k, item in enumerate(value):
            yield from _strings(item, f"{where}[{k}]")


def _page_words(page: str) -> str:
    page = re.sub(r"<script.*?</script>|<style.*?</style>", " ", page, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


def _reprs(text: str) -> list[str]:
    return [text[max(0, m.start() - 60) : m.end() + 30] for m in REPRS.finditer(text)]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("words")
    shutil.copytree(ROOT / "example_submission_folder", folder / "runB")
    lines = (folder / "runB" / "results_metadata.jsonl").read_text().replace("Mountain View", "Sunnyvale")
    (folder / "runB" / "results_metadata.jsonl").write_text(lines.replace("17.51%", "12.5%"))
    texts = {}
    for name, submission in (("a", ROOT / "example_submission_folder"), ("b", folder / "runB")):
        out = folder / f"{name}.json"
        result = run_cli(
            "--result-dir", submission, "--gold-dir", ROOT / "gold", "--db-dir", ROOT / "gold" / "databases",
            "--output", out, "--html", "--no-plot", "--work-dir", folder / f"w{name}",
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        texts[f"{name} terminal"] = result.output
    result = run_cli("compare", folder / "a.json", folder / "b.json", "--html", folder / "cmp.html")
    assert result.exit_code == 0, result.output
    texts["compare terminal"] = result.output
    for name in ("a", "b"):
        data = json.loads((folder / f"{name}.json").read_text())
        texts.update({f"{name}.json {where}": text for where, text in _strings(data)})
        texts[f"{name}.csv"] = (folder / f"{name}.csv").read_text()
        texts[f"{name}.html"] = _page_words((folder / f"{name}.html").read_text())
    texts["cmp.html"] = _page_words((folder / "cmp.html").read_text())
    return texts


def test_no_python_repr_in_any_report_text(runs):
    found = {where: _reprs(text) for where, text in runs.items() if _reprs(text)}
    assert found == {}
    # the scan saw the words that held reprs before: the miss of a number, a differing cell, the queries line
    every = "\n".join(runs.values())
    assert "do not match the gold" in every and "first difference at row" in every and "gold sources" in every


@pytest.mark.parametrize(
    "verdict, words",
    [
        (
            number_official("12.5%", [0.1751], percentage=True, precision=2),
            "12.5% do not match the gold 0.1751 (or 17.51)",
        ),
        (number_strict("-3.5", 3.5), "answer numbers -3.5 do not match the gold 3.5 within 1e-4"),
        (number_strict("1 and 2", [1, 5], conj="and"), "answer numbers 1, 2 do not match all of the gold 1, 5"),
        (
            number_strict("7 8 9 10 11 12", ["1", "2"]),
            "numbers 7, 8, 9, 10, 11 and 1 more do not match any of the gold 1, 2",
        ),
        (number_strict("no figure", 3.5), "expected exactly one number in the answer, found 0"),
        (string_strict("abc", ["x", "y", "z", "w"]), "none of 'x', 'y', 'z' and 1 more"),
    ],
)
def test_answer_miss_words(verdict, words):
    assert words in verdict.detail and not _reprs(verdict.detail)


def test_cells_in_words_with_the_digits_that_tell_them_apart():
    from evaluators.matching.verdicts import cell_pair, cell_words

    np = pytest.importorskip("numpy")
    assert cell_pair(np.float64(0.0), None) == ("0", "NULL")
    assert cell_pair(0.22844160091143337, 0.2291) == ("0.228442", "0.2291")
    assert cell_pair(0.22844160091143337, 0.2284416009) == ("0.228441600911", "0.2284416009")
    assert cell_pair(float("nan"), np.int64(3)) == ("NULL", "3")
    assert cell_words("x") == "'x'" and cell_words(1.0) == "1"


@pytest.mark.parametrize(
    "levels",
    [("simple", "moderate", "challenging"), ("easy", "medium", "hard", "extra")],
)
def test_breakdowns_list_difficulty_in_the_benchmarks_order(levels):
    """The terminal and the JSON list difficulty as the benchmark does, not alphabetically (challenging first)."""
    from evaluators.reporting.report import InstanceReport, build_summary

    def one(k: int, level: str) -> InstanceReport:
        return InstanceReport(
            f"q{k}",
            ("sql",),
            "sql",
            1.0,
            1.0,
            "match",
            "",
            "match",
            "",
            {"official": 1.0},
            None,
            {"difficulty": level},
        )

    instances = [one(k, level) for k, level in enumerate(sorted(levels))]
    summary = build_summary("official", instances, len(instances), [], [], ["official"])
    assert list(summary.breakdowns["difficulty"]) == list(levels)
