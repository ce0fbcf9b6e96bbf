"""`gold add` and `gold lint`: specs checked before they are written, gold folders checked as a whole."""

import json
import os
import shutil
from pathlib import Path

import pytest
from casefolders import _write_duckdb
from helpers_io import DUCKDB_SQL, TABLE, clean_folders, run_cli, tree_hash, write_lines

from evaluators import grade
from evaluators.goldtools.jsonl_edit import rewrite_jsonl
from evaluators.goldtools.lint import lint_gold
from evaluators.loading.specs import load_gold

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def table(tmp_path):
    path = tmp_path / "result.csv"
    path.write_text(TABLE)
    return path


def _add(gold, *args):
    return run_cli("gold", "add", "--gold-dir", gold, *args)


def _lines(gold):
    return [json.loads(line) for line in (gold / "spider2_eval.jsonl").read_text().splitlines()]


def test_add_copies_files_writes_the_spec_and_the_gold_grades_its_own_file(tmp_path, table):
    gold = tmp_path / "gold"
    result = _add(
        gold,
        "--instance-id",
        "q1",
        "--func",
        "table_match",
        "--file",
        table,
        "--condition-cols",
        "0,2",
        "--ignore-order",
        "--metadata",
        "difficulty=easy",
        "--metadata",
        "level=3",
    )
    assert result.exit_code == 0, result.output
    assert _lines(gold) == [
        {
            "instance_id": "q1",
            "evaluation": {
                "func": "table_match",
                "parameters": {"gold": "result.csv", "condition_cols": [0, 2], "ignore_order": True},
            },
            "difficulty": "easy",
            "level": 3,
        }
    ]
    assert (gold / "q1" / "result.csv").read_text() == TABLE
    assert not [p for p in gold.iterdir() if p.name.startswith(".")], "no staging folder may be left"
    sub = tmp_path / "sub"
    write_lines(
        sub / "results_metadata.jsonl", [{"instance_id": "q1", "answer_type": "file", "answer_or_path": "result.csv"}]
    )
    (sub / "q1").mkdir()
    shutil.copy(table, sub / "q1")
    assert grade(sub, gold).summary.strict_score == 1.0
    assert lint_gold(gold).ok


def test_add_builds_each_matchers_parameters(tmp_path, table):
    gold = tmp_path / "gold"
    other = tmp_path / "other.csv"
    other.write_text("x,a\n9,1\n9,2\n")
    db = tmp_path / "g.duckdb"
    _write_duckdb(db, DUCKDB_SQL)
    sql = tmp_path / "q.sql"
    sql.write_text("SELECT 1")
    runs = {
        "v": ["--func", "table_match", "--file", table, "--file", other, "--condition-cols", "0"],
        "s": ["--func", "string_match", "--answer", "Mountain View", "--answer", "MV", "--exclude", "Sunnyvale"],
        "n": ["--func", "number_match", "--answer", "17.51%", "--percentage", "--precision", "2"],
        "d": [
            "--func",
            "duckdb_match",
            "--file",
            db,
            "--condition-tabs",
            "customers,audit",
            "--condition-cols",
            "0,1",
            "--condition-cols",
            "0",
            "--ignore-order",
        ],
        "t": ["--func", "table_match", "--file", table, "--temporal", "--sql", sql],
        "m": ["--func", "tables_match", "--file", table, "--file", other, "--ignore-order"],
    }
    for iid, args in runs.items():
        result = _add(gold, "--instance-id", iid, *args)
        assert result.exit_code == 0, (iid, result.output)
    params = {line["instance_id"]: line["evaluation"]["parameters"] for line in _lines(gold)}
    assert params["v"] == {"gold": ["result.csv", "other.csv"], "condition_cols": [[0], [0]], "ignore_order": False}
    assert params["s"] == {"gold": ["Mountain View", "MV"], "exclude": ["Sunnyvale"]}
    assert params["n"] == {"gold": "17.51%", "percentage": True, "precision": 2}
    assert params["d"] == {
        "gold": "g.duckdb",
        "condition_tabs": ["customers", "audit"],
        "condition_cols": [[0, 1], [0]],
        "ignore_orders": [True, True],
    }
    assert params["m"] == {"gold": ["result.csv", "other.csv"], "condition_cols": None, "ignore_orders": [True, True]}
    assert _lines(gold)[-2]["evaluation"]["temporal"] is True
    assert (gold / "t" / "gold.sql").read_text() == "SELECT 1"
    assert not (gold / "s").exists(), "text golds get no folder"
    assert lint_gold(gold).ok, lint_gold(gold).to_text()


@pytest.mark.parametrize(
    "args, words",
    [
        (["--func", "table_match", "--file", "TABLE", "--exclude", "x"], "unknown parameter 'exclude' for table_match"),
        (
            ["--func", "table_match", "--file", "TABLE", "--condition-cols", "0,7"],
            "name column(s) that result.csv lacks",
        ),
        (["--func", "table_match", "--file", "TABLE", "--condition-cols", "0,a"], "comma-separated column positions"),
        (["--func", "string_match"], "string_match takes gold text: give --answer"),
        (["--func", "table_match", "--file", "TABLE", "--temporal"], "--temporal needs --sql"),
        (
            ["--func", "duckdb_match", "--file", "TABLE", "--condition-cols", "0"],
            "name the tables with --condition-tabs",
        ),
        (["--func", "duckdb_match", "--file", "TABLE"], "result.csv: not a readable DuckDB file"),
        (["--func", "number_match", "--answer", "-3"], "fails under spider2, spider2-2024, spider2-lite"),
        (["--func", "string_match", "--answer", "a/b", "--metadata", "evaluation=1"], "--metadata may not set"),
    ],
)
def test_add_refuses_a_bad_spec_and_writes_nothing(tmp_path, table, args, words):
    gold = tmp_path / "gold"
    assert _add(gold, "--instance-id", "q0", "--func", "table_match", "--file", table).exit_code == 0
    before = tree_hash(gold)
    result = _add(gold, "--instance-id", "q1", *[table if a == "TABLE" else a for a in args])
    assert result.exit_code == 2 and words in result.output, result.output
    assert tree_hash(gold) == before


def test_an_existing_id_needs_replace_and_other_lines_are_kept_byte_for_byte(tmp_path, table):
    gold = tmp_path / "gold"
    gold.mkdir()
    original = (
        '\ufeff{"instance_id": "a", "evaluation": {"func": "string_match", "parameters": {"gold": "x"}}}\r\n'
        '{"instance_id": "q1", "evaluation": {"func": "string_match", "parameters": {"gold": "old"}}}\r\n'
        "not json at all\r\n"
        '{"instance_id": "z", "evaluation": {"func": "string_match", "parameters": {"gold": "y"}}}\r\n'
    )
    (gold / "spider2_eval.jsonl").write_text(original, newline="")
    refused = _add(gold, "--instance-id", "q1", "--func", "string_match", "--answer", "new")
    assert refused.exit_code == 2 and "pass --replace" in refused.output
    assert (gold / "spider2_eval.jsonl").read_bytes().decode() == original
    assert _add(gold, "--instance-id", "q1", "--func", "string_match", "--answer", "new", "--replace").exit_code == 0
    lines = (gold / "spider2_eval.jsonl").read_bytes().decode().split("\r\n")
    assert lines[0] == original.split("\r\n")[0] and lines[2:] == original.split("\r\n")[2:]
    assert json.loads(lines[1])["evaluation"]["parameters"]["gold"] == "new"


def test_an_interrupted_add_leaves_the_old_gold_file_whole(tmp_path, table, monkeypatch):
    gold = tmp_path / "gold"
    assert _add(gold, "--instance-id", "q0", "--func", "string_match", "--answer", "x").exit_code == 0
    before = (gold / "spider2_eval.jsonl").read_bytes()

    def interrupted(fd):
        raise KeyboardInterrupt  # the moment between writing the temporary file and renaming it

    monkeypatch.setattr(os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        from evaluators.goldtools.add import NewGold, add_gold

        add_gold(gold, NewGold("q1", "table_match", files=(table,)))
    assert (gold / "spider2_eval.jsonl").read_bytes() == before
    # The files were moved in before the spec line: at worst they are unreferenced, and no temporary is left.
    assert sorted(p.name for p in gold.iterdir()) == ["q1", "spider2_eval.jsonl"]
    assert list(load_gold(gold).records) == ["q0"]


def test_rewrite_appends_with_the_files_line_ends(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_bytes(b'{"instance_id": "a"}\r\n{"instance_id": "b"}')  # no final newline
    rewrite_jsonl(path, {"c": '{"instance_id": "c"}', "a": '{"instance_id": "a", "v": 1}'})
    assert path.read_bytes() == b'{"instance_id": "a", "v": 1}\r\n{"instance_id": "b"}\r\n{"instance_id": "c"}\r\n'


def _broken_gold(root: Path) -> Path:
    gold = root / "gold"
    for name, content in {
        "ok/r.csv": TABLE,
        "cols/r.csv": TABLE,
        "count/a.csv": TABLE,
        "count/b.csv": TABLE,
        "sneaky/r.csv": TABLE,
        "orphan/r.csv": TABLE,
        "flat/a.csv": TABLE,
        "flat/b.csv": TABLE,
    }.items():
        (gold / name).parent.mkdir(parents=True, exist_ok=True)
        (gold / name).write_text(content)

    def table(iid, **p):
        return {
            "instance_id": iid,
            "evaluation": {
                "func": "table_match",
                "parameters": {"gold": "r.csv", "condition_cols": [], "ignore_order": True, **p},
            },
        }

    write_lines(
        gold / "spider2_eval.jsonl",
        [
            table("ok"),
            table("excl", exclude=["x"]),
            {"instance_id": "typo", "evaluation": {"func": "tabel_match", "parameters": {"gold": "r.csv"}}},
            table("types", ignore_order="yes", condition_cols="0"),
            table("nofile"),
            table("cols", condition_cols=[0, 3]),
            table("count", gold=["a.csv", "b.csv"], condition_cols=[[0], [1], [2]]),
            {
                "instance_id": "temporal",
                "evaluation": {"func": "string_match", "parameters": {"gold": "x"}, "temporal": True},
            },
            {
                "instance_id": "never",
                "evaluation": {"func": "string_match", "parameters": {"gold": "Paris", "exclude": ["par"]}},
            },
            '{"instance_id": "broken", "evaluation": ',
            table("sneaky", gold="../ok/r.csv"),
            table("ok"),
            table("flat", gold=["a.csv", "b.csv"], condition_cols=[0]),
        ],
    )
    return gold


def test_lint_lists_every_problem_with_its_line(tmp_path):
    gold = _broken_gold(tmp_path)
    before = tree_hash(gold)
    result = lint_gold(gold)
    text = result.to_text()
    where = f"{gold / 'spider2_eval.jsonl'}"
    expected = {
        2: "excl (table_match): unknown parameter 'exclude' for table_match",
        3: "typo (tabel_match): unknown func 'tabel_match'; did you mean 'table_match'?",
        4: "types (table_match): table_match parameter 'condition_cols' must be",
        5: "nofile (table_match): nofile/r.csv: the spec names a file that does not exist",
        6: "cols (table_match): condition_cols [3] name column(s) that r.csv lacks: it has 3 column(s)",
        7: "count (table_match): 2 gold file(s) but 3 condition_cols lists",
        8: "temporal (string_match): the spec is temporal but temporal/gold.sql does not exist",
        9: "never (string_match): graded as the answer to itself, 'Paris' fails under spider2",
        10: "invalid JSON",
        11: "sneaky (table_match): '../ok/r.csv' leaves sneaky/ with '..'",
        13: "flat (table_match): a flat condition_cols list with 2 gold files is read differently by the presets",
    }
    for line, words in expected.items():
        assert any(f"{where}:{line}" in row and words in row for row in text.splitlines()), (line, text)
    assert "duplicate instance_id 'ok'" in text and "ignore_order" in text
    assert "folder 'orphan' has no line" in text and result.warnings
    assert set(result.flagged) == {
        "excl",
        "typo",
        "types",
        "nofile",
        "cols",
        "count",
        "temporal",
        "never",
        "broken",
        "sneaky",
        "ok",
        "flat",
    }
    cli = run_cli("gold", "lint", "--gold_dir", gold)
    assert cli.exit_code == 1 and "flagged:" in cli.output
    assert tree_hash(gold) == before


def test_lint_passes_a_clean_gold_in_one_or_two_processes(tmp_path):
    _, gold = clean_folders(tmp_path)
    assert lint_gold(gold).ok and lint_gold(gold, jobs=2).ok
    cli = run_cli("gold", "lint", "--gold-dir", gold, "--jobs", "2")
    assert cli.exit_code == 0 and "5 gold instance(s) linted: 0 error(s)" in cli.output


def test_lint_passes_the_bundled_gold():
    result = lint_gold(ROOT / "gold")
    assert result.ok and result.flagged == (), result.to_text()


def test_lint_flags_a_negative_number_gold_no_official_answer_can_pass(tmp_path):
    # The official number pattern has no sign: no answer can pass a negative gold under the official presets.
    gold = tmp_path / "gold"
    gold.mkdir()
    (gold / "spider2_eval.jsonl").write_text(
        json.dumps({"instance_id": "neg", "evaluation": {"func": "number_match", "parameters": {"gold": [-3.5]}}})
        + "\n"
    )
    result = lint_gold(gold)
    assert result.flagged == ("neg",)
    assert "fails under spider2, spider2-2024, spider2-lite:" in result.to_text()


def test_gold_help_pages_show_examples():
    for command in (["gold"], ["gold", "add"], ["gold", "lint"], ["gold", "import-spider2-lite"]):
        result = run_cli(*command, "--help")
        assert result.exit_code == 0 and "Examples:" in result.output, command
    assert "--gold-dir, --gold_dir" in run_cli("gold", "add", "--help").output


def test_lint_lists_a_gold_file_that_cannot_be_decoded(tmp_path):
    gold = tmp_path / "gold"
    gold.mkdir()
    (gold / "spider2_eval.jsonl").write_bytes(b'{"instance_id": "a"}\n\xfe\n')
    result = run_cli("gold", "lint", "--gold-dir", gold)
    assert result.exit_code == 1 and "spider2_eval.jsonl:2: not UTF-8 text" in result.output
    refused = _add(gold, "--instance-id", "b", "--func", "string_match", "--answer", "x")
    assert refused.exit_code == 2 and (gold / "spider2_eval.jsonl").read_bytes() == b'{"instance_id": "a"}\n\xfe\n'
