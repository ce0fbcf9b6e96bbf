"""`validate`: every problem of a submission at once, with file:line and a hint; exit 0 only when clean."""

import os

import pytest
from helpers_io import TABLE, clean_folders, run_cli, tree_hash, write_lines

from evaluators import grade
from evaluators.errors import InstanceError
from evaluators.grading.instance import Options
from evaluators.loading.paths import answer_path
from evaluators.loading.submissions import load_flat_submission
from evaluators.loading.validate import validate


@pytest.fixture
def folders(tmp_path):
    return clean_folders(tmp_path)


def _messages(result):
    return [str(p) for p in result.errors]


def test_a_clean_submission_passes_and_grades_fully(folders):
    sub, gold = folders
    result = validate(sub, gold)
    assert result.ok and not result.warnings, result.to_text()
    assert result.lines == 5 and "ready to grade" in result.to_text()
    assert grade(sub, gold).summary.strict_score == 1.0  # what validate accepts, grading can grade
    cli = run_cli("validate", "--result_dir", sub, "--gold_dir", gold)
    assert cli.exit_code == 0, cli.output


def test_every_problem_is_listed_at_once_with_its_line_and_a_hint(folders):
    sub, gold = folders
    (sub / "t1" / "r.csv").unlink()
    meta = sub / "results_metadata.jsonl"
    write_lines(
        meta,
        [
            {"instance_id": "s1", "answer_type": "answer", "answer_or_path": "Paris"},
            '{"instance_id": "x1", "answer_type": "file",',
            {"instance_id": "x2", "answer_type": "table", "answer_or_path": "r.csv"},
            {"instance_id": "t1", "answer_type": "file", "answer_or_path": "r.csv"},
            {"instance_id": "t1x", "answer_type": "answer", "answer_or_path": "Paris"},
            {"instance_id": "f1", "answer_type": "files", "answer_or_path": ["d.csv", "w.csv"]},
            {"instance_id": "d1", "answer_type": "file", "answer_or_path": "r.duckdb"},
        ],
    )
    result = validate(sub, gold)
    text = result.to_text()
    assert f"{meta}:2:45: invalid JSON" in text
    assert f"{meta}:3: 'answer_type' must be one of" in text
    assert f"{meta}:4: t1/r.csv: file not found" in text
    assert f"{meta}:5: instance_id 't1x' is not in the gold (hint: did you mean 't1'?)" in text
    assert f"{gold / 'spider2_eval.jsonl'}:2: gold instance 'n1' has no submission line (scored 0)" in text
    assert len(result.errors) == 5 and all(p.hint for p in result.errors), text
    assert result.unknown_ids == ("t1x",) and result.missing_ids == ("n1",)
    assert "1 instance id(s) not in the gold, 1 gold instance(s) without a submission" in text
    cli = run_cli("validate", "--result-dir", sub, "--gold-dir", gold)
    assert cli.exit_code == 1 and cli.output.count("\n") == len(result.errors) + 2  # the summary, the exit's reason


def test_paths_that_leave_the_instance_folder_are_refused(folders, tmp_path):
    sub, gold = folders
    outside = tmp_path / "secret.csv"
    outside.write_text(TABLE)
    (sub / "t1" / "link.csv").symlink_to(outside)
    (sub / "t1" / "inner.csv").symlink_to(sub / "t1" / "r.csv")  # a link that stays inside is fine
    for answer, expected in [
        ("../../secret.csv", "leaves t1/ with '..'"),
        (str(outside), "is absolute"),
        ("link.csv", "resolves outside t1/"),
        ("inner.csv", None),
    ]:
        write_lines(
            sub / "results_metadata.jsonl", [{"instance_id": "t1", "answer_type": "file", "answer_or_path": answer}]
        )
        result = validate(sub)
        if expected is None:
            assert result.ok, result.to_text()
        else:
            assert expected in result.to_text() and "symbolic links" in result.errors[0].hint


def test_files_are_read_the_way_their_matcher_reads_them(folders):
    sub, gold = folders
    (sub / "t1" / "r.csv").write_bytes(b"a,b,c\n1,x,2.5\ncaf\xe9,y,3\n")
    (sub / "d1" / "r.duckdb").write_text(TABLE)  # a CSV under a DuckDB name
    (sub / "f1" / "w.csv").write_text("")
    result = validate(sub, gold)
    text = result.to_text()
    assert f"{sub / 't1' / 'r.csv'}:3: byte 0xe9 at column 4 is not UTF-8 (hint: save the file as UTF-8)" in text
    assert "r.duckdb: not a readable DuckDB file" in text
    assert f"{sub / 'f1' / 'w.csv'}: empty file: no header row" in text
    assert len(result.errors) == 3
    reasons = {i.instance_id: i.reason for i in grade(sub, gold).instances}
    assert reasons["t1"] == reasons["d1"] == reasons["f1"] == "unreadable_prediction"  # grading agrees


def test_duckdb_answers_must_hold_the_tables_the_gold_names(folders):
    import duckdb

    sub, gold = folders
    path = sub / "d1" / "r.duckdb"
    path.unlink()
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE customers AS SELECT 1 AS id")
    con.close()
    result = validate(sub, gold)
    assert "r.duckdb lacks table(s) ['audit'] named by the gold" in result.to_text()
    assert validate(sub).ok  # without the gold there is nothing to compare the tables with


def test_an_answer_type_the_gold_cannot_grade_is_an_error(folders):
    sub, gold = folders
    write_lines(
        sub / "results_metadata.jsonl",
        [
            {"instance_id": "t1", "answer_type": "answer", "answer_or_path": "1, 2"},
            {"instance_id": "s1", "answer_type": "file", "answer_or_path": "x.csv"},
        ],
    )
    text = validate(sub, gold).to_text()
    assert "the answer is text but the gold has only ['table_match'] specs" in text
    assert "the answer is a file but the gold has only ['string_match'] specs" in text
    reasons = {i.instance_id: i.reason for i in grade(sub, gold).instances}
    assert reasons["t1"] == reasons["s1"] == "answer_type_mismatch"


def test_ragged_rows_and_other_delimiters_are_warnings_with_lines(folders):
    sub, gold = folders
    (sub / "t1" / "r.csv").write_text('a,b,c\n1,x,2.5\n2,y\n\n3,"q\nr",4\n')
    (sub / "f1" / "d.csv").write_text("a;b;c\n1;x;2.5\n")
    result = validate(sub, gold)
    warnings = [str(w) for w in result.warnings]
    assert any(f"{sub / 't1' / 'r.csv'}:3: row has 2 fields, the header (line 1) has 3" in w for w in warnings)
    assert len(warnings) == 2  # the blank line and the quoted newline are fine
    assert any("semicolon-separated" in w and f"{sub / 'f1' / 'd.csv'}:1" in w for w in warnings)
    assert result.ok  # both are still read by the graders: listed, not fatal
    assert run_cli("validate", "--result-dir", sub).exit_code == 0


def test_size_limit_is_configurable_and_says_how_to_raise_it(folders):
    sub, gold = folders
    result = validate(sub, gold, max_file_bytes=10)
    assert any("over the limit of 10" in m and "--max-file-mb" in m for m in _messages(result))
    assert grade(sub, gold, options=Options(max_file_bytes=10)).summary.score < 1


def test_empty_sql_files_fail_in_validate_and_in_grading_alike(folders):
    sub, gold = folders
    (sub / "t1" / "q.sql").write_text("  \n")
    (sub / "n1" / "q.sql").write_text("SELECT 1")
    write_lines(
        sub / "results_metadata.jsonl",
        [
            {"instance_id": "t1", "answer_type": "file", "answer_or_path": "q.sql"},
            {"instance_id": "n1", "answer_type": "answer", "answer_or_path": "17.5"},
        ],
    )
    assert "q.sql: empty SQL file" in validate(sub, gold).to_text()
    assert {i.instance_id: i.reason for i in grade(sub, gold).instances}["t1"] == "unreadable_prediction"


def test_a_missing_metadata_file_is_a_listed_problem_not_a_crash(folders):
    sub, gold = folders
    (sub / "results_metadata.jsonl").unlink()
    result = run_cli("validate", "--result-dir", sub, "--gold-dir", gold)
    assert result.exit_code == 1 and "results_metadata.jsonl: file not found" in result.output


def _flat_folder(root):
    flat = root / "flat"
    flat.mkdir()
    (flat / "t1.csv").write_text(TABLE)
    (flat / "n1.sql").write_text("SELECT 17.5")
    (flat / "s1.csv").write_text(TABLE)
    (flat / "s1.sql").write_text("SELECT 1")
    (flat / "notes.txt").write_text("hello")
    return flat


def test_flat_layout_builds_lines_from_file_names(tmp_path):
    flat = _flat_folder(tmp_path)
    loaded = load_flat_submission(flat)
    assert {iid: (line.answer_type, line.answer) for iid, line in loaded.records.items()} == {
        "t1": ("file", "t1.csv"),
        "n1": ("file", "n1.sql"),
        "s1": ("file", "s1.csv"),
    }
    messages = [p.message for p in loaded.problems]
    assert any("both s1.csv and s1.sql exist; the CSV is graded" in m for m in messages)
    assert any("file ignored" in m for m in messages)
    assert answer_path(flat, "t1", "t1.csv", flat=True) == flat / "t1.csv"


def test_flat_layout_refuses_a_link_out_of_the_folder(tmp_path):
    flat = tmp_path / "flat"
    flat.mkdir()
    (tmp_path / "outside.csv").write_text(TABLE)
    (flat / "t1.csv").symlink_to(tmp_path / "outside.csv")
    with pytest.raises(InstanceError) as caught:
        answer_path(flat, "t1", "t1.csv", flat=True)
    assert caught.value.reason == "unsafe_path"


def test_flat_layout_validates_and_grades(folders, tmp_path):
    _, gold = folders
    flat = _flat_folder(tmp_path)
    hashes = tree_hash(flat)
    result = validate(flat, gold, layout="flat")
    text = result.to_text()
    assert "warning:" in text and "notes.txt" in text  # layout notes are warnings
    assert "the answer is a file but the gold has only ['string_match'] specs" in text
    assert set(result.missing_ids) == {"f1", "d1"}
    report = grade(flat, gold, options=Options(layout="flat", execute_sql=False))
    reasons = {i.instance_id: i.reason for i in report.instances}
    # a .sql answer is run and its first cell graded by the text spec: without an executor that waits
    assert reasons["t1"] == "match" and reasons["n1"] == "needs_execution"
    cli = run_cli("grade", "--result-dir", flat, "--gold-dir", gold, "--layout", "flat")
    assert cli.exit_code == 0 and "Graded 3 of 5" in cli.output
    assert tree_hash(flat) == hashes


def test_validate_help_shows_examples_and_both_spellings():
    result = run_cli("validate", "--help")
    assert result.exit_code == 0 and "Examples:" in result.output
    assert "--result-dir, --result_dir" in result.output and "--layout" in result.output


def test_unsafe_instance_ids_never_name_a_folder(folders):
    sub, gold = folders
    write_lines(
        sub / "results_metadata.jsonl", [{"instance_id": "../t1", "answer_type": "file", "answer_or_path": "r.csv"}]
    )
    assert "cannot name a folder" in validate(sub).to_text()
    assert os.path.exists(sub / "t1" / "r.csv")


def test_an_unreadable_gold_is_a_usage_error_not_the_submissions_fault(folders):
    sub, gold = folders
    (gold / "spider2_eval.jsonl").write_bytes(b'{"instance_id": "s1"}\n\xff\n')
    result = run_cli("validate", "--result-dir", sub, "--gold-dir", gold)
    assert result.exit_code == 2 and "spider2_eval.jsonl:2: not UTF-8" in result.output


def test_many_missing_instances_are_summed_up_on_one_line(tmp_path):
    from casefolders import write_instance

    for k in range(14):
        write_instance(tmp_path, f"q{k:02}", {"func": "string_match", "parameters": {"gold": "x"}}, "answer", None)
    result = validate(tmp_path / "sub", tmp_path / "gold")
    lines = result.to_text().splitlines()
    assert len(result.missing_ids) == 14 and len(result.errors) == 14
    assert len(lines) == 12 and "and 4 more gold instances without a submission: q10, q11, q12, q13" in lines[10]
