"""Bad input of every kind: a clear problem or reason, never a crash, a partial report, or a touched folder."""

import json
import os
import random
import tempfile
from pathlib import Path

import pytest
from helpers_io import TABLE, clean_folders, run_cli, tree_hash, write_lines
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evaluators import grade
from evaluators.errors import SpecError
from evaluators.goldtools.lint import lint_gold, lint_instance
from evaluators.grading.instance import grade_instance
from evaluators.loading.specs import load_gold, load_submission
from evaluators.loading.validate import validate
from evaluators.matching.registry import FUNCS
from evaluators.reporting.report import REASONS
from evaluators.specs import ANSWER_TYPES, SubmissionLine

GOOD = [
    {"instance_id": "s1", "answer_type": "answer", "answer_or_path": "It is Paris."},
    {"instance_id": "n1", "answer_type": "answer", "answer_or_path": "17.5"},
    {"instance_id": "t1", "answer_type": "file", "answer_or_path": "r.csv"},
    {"instance_id": "f1", "answer_type": "files", "answer_or_path": ["d.csv", "w.csv"]},
    {"instance_id": "d1", "answer_type": "file", "answer_or_path": "r.duckdb"},
]


@pytest.fixture
def folders(tmp_path):
    return clean_folders(tmp_path)


def _everything(sub, gold):
    """Grade, validate and lint; the folders must come out untouched and the report whole."""
    before = tree_hash(sub), tree_hash(gold)
    report = grade(sub, gold)
    assert json.loads(report.to_json())["summary"]["gold_instances"] == len(report.instances)
    assert all(i.reason in REASONS and i.reason != "internal_error" for i in report.instances), report.to_text()
    validation, lint = validate(sub, gold), lint_gold(gold)
    assert (tree_hash(sub), tree_hash(gold)) == before
    return {i.instance_id: i for i in report.instances}, validation, lint


def _meta(sub, lines, newline="\n", prefix=""):
    path = write_lines(sub / "results_metadata.jsonl", lines, newline)
    if prefix:
        path.write_bytes(prefix.encode() + path.read_bytes())
    return path


def test_malformed_json_on_line_n_is_located_and_the_rest_grades(folders):
    sub, gold = folders
    meta = _meta(sub, GOOD[:2] + ['{"instance_id": "t1", "answer_type": "file" "answer_or_path": 1}'] + GOOD[3:])
    graded, validation, _ = _everything(sub, gold)
    assert any(p.startswith(f"{meta}:3:45: invalid JSON") for p in grade(sub, gold).summary.problems)
    assert graded["s1"].score == 1 and graded["t1"].reason == "missing_prediction"
    assert str(validation.errors[0]).startswith(f"{meta}:3:45: invalid JSON")


def test_a_bom_and_crlf_line_ends_are_read_as_usual(folders):
    sub, gold = folders
    _meta(sub, GOOD, newline="\r\n", prefix="\ufeff")
    graded, validation, _ = _everything(sub, gold)
    assert all(i.strict_score == 1 for i in graded.values()) and validation.ok


def test_an_empty_metadata_file_grades_every_instance_as_missing(folders):
    sub, gold = folders
    (sub / "results_metadata.jsonl").write_bytes(b"")
    graded, validation, _ = _everything(sub, gold)
    assert {i.reason for i in graded.values()} == {"missing_prediction"}
    assert len(validation.missing_ids) == 5 and not validation.ok


def test_a_non_utf8_metadata_file_is_refused_with_its_line_and_no_report(folders, tmp_path):
    sub, gold = folders
    (sub / "results_metadata.jsonl").write_bytes(json.dumps(GOOD[0]).encode() + b'\n{"instance_id": "caf\xe9"}\n')
    with pytest.raises(SpecError) as caught:
        grade(sub, gold)
    assert caught.value.location.line == 2 and "UTF-8" in caught.value.message
    out = tmp_path / "out" / "report.json"
    result = run_cli("--result-dir", sub, "--gold-dir", gold, "--output", out)
    assert result.exit_code == 2 and "results_metadata.jsonl:2" in result.output and not out.exists()
    assert "results_metadata.jsonl:2: not UTF-8" in validate(sub, gold).to_text()


def test_a_50_megabyte_line_grades_and_reports_stay_short(folders):
    sub, gold = folders
    huge_text = {"instance_id": "s1", "answer_type": "answer", "answer_or_path": "x" * 50_000_000 + " Paris"}
    huge_path = {"instance_id": "t1", "answer_type": "file", "answer_or_path": "y" * 1_000_000}
    _meta(sub, [huge_text, huge_path] + GOOD[3:])
    graded, validation, _ = _everything(sub, gold)
    assert graded["s1"].score == 1
    assert graded["t1"].reason == "invalid_answer" and len(graded["t1"].detail) < 300
    assert all(len(str(p)) < 500 for p in validation.errors)


@pytest.mark.parametrize("value", [42, None, ["a.csv"], {"path": "r.csv"}])
def test_answer_or_path_of_the_wrong_json_type(folders, value):
    sub, gold = folders
    lines = [dict(line, answer_or_path=value) if line["instance_id"] in ("s1", "t1") else line for line in GOOD]
    _meta(sub, lines)
    graded, validation, _ = _everything(sub, gold)
    assert graded["s1"].reason == graded["t1"].reason == "invalid_answer"
    assert {p.instance_id for p in validation.errors} >= {"s1", "t1"}


def test_files_answer_given_as_text_is_an_invalid_answer(folders):
    sub, gold = folders
    _meta(sub, [dict(GOOD[3], answer_or_path="d.csv")])
    assert grade(sub, gold).instances[3].reason == "invalid_answer"


def test_duplicate_ids_the_later_line_wins_and_the_earlier_is_reported(folders):
    sub, gold = folders
    meta = _meta(sub, [dict(GOOD[0], answer_or_path="Lyon")] + GOOD)
    graded, validation, _ = _everything(sub, gold)
    assert graded["s1"].score == 1  # the later line, "It is Paris."
    assert f"{meta}:1: duplicate instance_id 's1': the later line 2 wins" in validation.to_text()


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_not_json(folders, constant):
    sub, gold = folders
    meta = _meta(sub, GOOD[:1] + [f'{{"instance_id": "n1", "answer_type": "answer", "answer_or_path": {constant}}}'])
    graded, validation, _ = _everything(sub, gold)
    assert graded["n1"].reason == "missing_prediction"
    assert f"{meta}:2" in validation.to_text() and f"{constant} is not valid JSON" in validation.to_text()


def test_an_unknown_func_and_ill_typed_parameters_are_instance_reasons(folders):
    sub, gold = folders
    lines = [json.loads(x) for x in (gold / "spider2_eval.jsonl").read_text().splitlines()]
    lines[0]["evaluation"]["func"] = "string_mach"
    lines[2]["evaluation"]["parameters"].update(condition_cols="0", ignore_order="yes")
    write_lines(gold / "spider2_eval.jsonl", lines)
    graded, _, lint = _everything(sub, gold)
    assert graded["s1"].reason == "unknown_func" and "did you mean 'string_match'?" in graded["s1"].detail
    assert graded["t1"].reason == "invalid_spec" and "'ignore_order' must be true or false" in graded["t1"].detail
    assert set(lint.flagged) == {"s1", "t1"}


@pytest.mark.parametrize(
    "content, reason",
    [
        ("a,b,c\n", "row_count_mismatch"),  # header only: an empty result
        ("a,b,c\n1,x,2.5\n2,y\n", "column_not_found"),  # a short row: padded with NULL
        ("a,b,c\n\n1,x,2.5\n\n2,y,3.5\n\n", "match"),  # blank lines are skipped
        ('a,b,c\n1,x,2.5\n2,"y",3.5\n', "match"),
    ],
)
def test_csv_shapes_grade_without_a_crash(folders, content, reason):
    sub, gold = folders
    (sub / "t1" / "r.csv").write_text(content)
    graded, validation, _ = _everything(sub, gold)
    assert graded["t1"].reason == reason and validation.ok


def test_a_quoted_newline_in_gold_and_answer(folders):
    sub, gold = folders
    text = 'a,b,c\n1,"x\ny",2.5\n2,y,3.5\n'
    (sub / "t1" / "r.csv").write_text(text)
    (gold / "t1" / "g.csv").write_text(text)
    graded, validation, lint = _everything(sub, gold)
    assert graded["t1"].strict_score == 1 and validation.ok and lint.ok


def test_ragged_rows_longer_than_the_header(folders):
    sub, gold = folders
    (sub / "t1" / "r.csv").write_text("a,b,c\n1,x,2.5\n2,y,3.5,9\n")
    graded, validation, _ = _everything(sub, gold)
    assert graded["t1"].reason == "unreadable_prediction" and "Expected 3 fields" in graded["t1"].detail
    assert any("row has 4 fields" in str(w) for w in validation.warnings)


@pytest.mark.parametrize(
    "content",
    [random.Random(3000).randbytes(3000), TABLE.encode(), b"DUCK" + b"\0" * 5000],
    ids=["random bytes", "a csv", "a duckdb tag and zeros"],
)
def test_a_corrupt_duckdb_file_or_a_csv_in_disguise(folders, content):
    sub, gold = folders
    (sub / "d1" / "r.duckdb").write_bytes(content)
    graded, validation, _ = _everything(sub, gold)
    assert graded["d1"].reason == "unreadable_prediction" and "not a readable DuckDB file" in graded["d1"].detail
    assert any("not a readable DuckDB file" in str(p) for p in validation.errors)


def test_path_traversal_and_symbolic_link_escapes(folders, tmp_path):
    sub, gold = folders
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "r.csv").write_text(TABLE)
    (sub / "t1" / "out.csv").symlink_to(tmp_path / "outside" / "r.csv")
    (sub / "d1" / "outdir").symlink_to(tmp_path / "outside", target_is_directory=True)
    (sub / "f1" / "loop.csv").symlink_to(sub / "f1" / "loop.csv")
    (gold / "t1" / "g.csv").unlink()
    (gold / "t1" / "g.csv").symlink_to(tmp_path / "outside" / "r.csv")  # a gold file may not leave its folder
    _meta(
        sub,
        [
            dict(GOOD[2], answer_or_path="out.csv"),
            dict(GOOD[2], instance_id="s1", answer_or_path="x"),
            dict(GOOD[3], answer_or_path=["../t1/r.csv", "loop.csv"]),
            dict(GOOD[4], answer_or_path="outdir/r.csv"),
        ],
    )
    graded, validation, lint = _everything(sub, gold)
    assert [graded[i].reason for i in ("t1", "f1", "d1")] == ["unsafe_path"] * 3, graded
    assert {p.instance_id for p in validation.errors if "symbolic link" in p.hint} >= {"t1", "f1", "d1"}
    assert "t1" in lint.flagged and "resolves outside t1/" in lint.to_text()


def test_a_report_write_that_fails_midway_leaves_the_old_report(folders, tmp_path, monkeypatch):
    sub, gold = folders
    out = tmp_path / "out" / "report.json"
    assert run_cli("--result-dir", sub, "--gold-dir", gold, "--output", out).exit_code == 0
    before = out.read_bytes()
    _meta(sub, GOOD[:2])

    def crash(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", crash)
    result = run_cli("--result-dir", sub, "--gold-dir", gold, "--output", out)
    assert result.exit_code != 0
    assert out.read_bytes() == before
    assert sorted(p.name for p in out.parent.iterdir()) == ["report.csv", "report.json", "report.svg"]


# ---- fuzzing the two jsonl loaders -------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)
ids = st.sampled_from(["a", "b", "a", " ", "", "../x", "c/d"]) | json_values
submission_objects = st.fixed_dictionaries(
    {},
    optional={
        "instance_id": ids,
        "answer_type": st.sampled_from(list(ANSWER_TYPES) + ["table"]) | json_values,
        "answer_or_path": json_values | st.sampled_from(["r.csv", "../r.csv", "/etc/passwd", "a\0b"]),
        "attempts": json_values,
    },
)
param_values = json_values | st.sampled_from([["g.csv"], "g.csv", [[0], [1]], [0, 1], ["t"], "and", 3])
specs = st.fixed_dictionaries(
    {"func": st.sampled_from(list(FUNCS) + ["nope", ""]) | json_values},
    optional={
        "parameters": st.dictionaries(
            st.sampled_from(
                [
                    "gold",
                    "condition_cols",
                    "ignore_order",
                    "ignore_orders",
                    "condition_tabs",
                    "exclude",
                    "conj",
                    "precision",
                    "x",
                ]
            ),
            param_values,
            max_size=4,
        )
        | json_values,
        "temporal": st.booleans() | json_values,
    },
)
gold_objects = st.fixed_dictionaries(
    {},
    optional={
        "instance_id": ids,
        "evaluation": specs | st.lists(specs, max_size=2) | json_values,
        "level": json_values,
    },
)


def _contents(objects):
    line = objects.map(json.dumps) | st.text(max_size=30) | st.sampled_from(["", "  ", "NaN", "[1]", "{", "\x0b"])
    text = st.lists(line, max_size=6).flatmap(
        lambda lines: st.sampled_from(["\n", "\r\n"]).map(lambda nl: nl.join(lines))
    )
    return text.map(str.encode) | text.map(lambda t: ("\ufeff" + t).encode()) | st.binary(max_size=80)


FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _load(folder: Path, loader, name, content):
    (folder / name).write_bytes(content)
    try:
        return folder, loader(folder)
    except SpecError as exc:  # only a file that is not UTF-8 as a whole
        assert exc.location.line >= 1 and "UTF-8" in exc.message
        return folder, None


def _accounted(folder, name, loaded):
    text = (folder / name).read_bytes().decode("utf-8-sig")
    wanted = {n for n, line in enumerate(text.splitlines(), start=1) if line.strip()}
    seen = {r.location.line for r in loaded.records.values()} | {p.location.line for p in loaded.problems}
    assert wanted <= seen, "every non-blank line is a record or a problem"
    assert all(p.location.path == str(folder / name) for p in loaded.problems)


@FUZZ
@given(content=_contents(submission_objects))
def test_fuzz_submission_loader(content):
    with tempfile.TemporaryDirectory() as name:
        _check_submission(Path(name), content)


def _check_submission(folder: Path, content: bytes) -> None:
    folder, loaded = _load(folder, load_submission, "results_metadata.jsonl", content)
    if loaded is not None:
        _accounted(folder, "results_metadata.jsonl", loaded)
        assert all(isinstance(r, SubmissionLine) and r.answer_type in ANSWER_TYPES for r in loaded.records.values())
    result = validate(folder)
    assert not any("internal error" in p.message for p in result.errors), result.to_text()


@FUZZ
@given(content=_contents(gold_objects))
def test_fuzz_gold_loader_then_grade_and_lint(content):
    with tempfile.TemporaryDirectory() as name:
        _check_gold(Path(name), content)


def _check_gold(folder: Path, content: bytes) -> None:
    folder, loaded = _load(folder, load_gold, "spider2_eval.jsonl", content)
    if loaded is None:
        return
    _accounted(folder, "spider2_eval.jsonl", loaded)
    for gold in loaded.records.values():
        for answer_type, answer in (("answer", "12 Paris"), ("file", "x.csv"), ("files", ["x.csv"])):
            line = SubmissionLine(gold.instance_id, answer_type, answer, gold.location)
            verdicts = grade_instance(gold, line, folder, folder).verdicts
            assert all(v.reason in REASONS and v.reason != "internal_error" for v in verdicts.values()), verdicts
        errors, _ = lint_instance(gold, folder)
        assert not any("internal error" in p.message for p in errors), errors


@pytest.mark.parametrize(
    "relative", ["/etc/passwd", "C:\\secret.csv", "C:/secret.csv", "\\\\server\\share\\x.csv", "//server/share/x.csv"]
)
def test_absolute_answer_paths_of_either_system_are_refused(tmp_path, relative):
    from evaluators.errors import InstanceError
    from evaluators.loading.paths import answer_path

    (tmp_path / "t1").mkdir()
    with pytest.raises(InstanceError) as caught:
        answer_path(tmp_path, "t1", relative)
    assert caught.value.reason == "unsafe_path" and "is absolute" in caught.value.detail
