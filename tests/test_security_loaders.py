"""Untrusted submissions, round 3 (issue 24, "Loaders"): CPU, memory and time spent reading what was submitted.

Each attack of docs/security.md's loader rows, with payloads of its own: deep JSON, nested brackets for
sqlglot, loaders that must stay linear (work counted, never timed), metadata and predictions that are
FIFOs, links to /dev/zero or to another submission, zip members that cannot be read, an answer swapped
for a link while it is graded, and a huge answer against a short gold for the similarity metrics.
"""

from __future__ import annotations

import io
import json
import os
import sqlite3
import struct
import subprocess
import sys
import threading
import zipfile
from pathlib import Path

import pytest
from casefolders import write_instance
from helpers_io import run_cli, tree_hash

from evaluators.bird import native
from evaluators.bird.run import BirdOptions, grade_bird
from evaluators.errors import InstanceError, SpecError
from evaluators.loading import specs
from evaluators.loading.paths import PinnedPath, answer_path
from evaluators.loading.validate import validate
from evaluators.sqltext import read_only_problem
from evaluators.tables.read import TableReader
from evaluators.testsuite.run import grade_test_suite

ROOT = Path(__file__).resolve().parents[1]
TEXT_SPEC = {"func": "string_match", "parameters": {"gold": "Paris"}}
TABLE_SPEC = {"func": "table_match", "parameters": {"gold": "g.csv", "ignore_order": True}}
TABLE = "city,n\nParis,1\nRome,2\n"
SECRET = "city,n\nSECRET-OTHER-SUBMISSION,9\n"
SEP = "\t----- bird -----\t"


def _grade(root: Path, *extra) -> tuple[object, dict]:
    out = root / "out" / "report.json"
    result = run_cli(
        "--result-dir", root / "sub", "--gold-dir", root / "gold", "--output", out, "--no-plot", "--jobs", "1", *extra
    )
    report = json.loads(out.read_text()) if out.exists() else {}
    return result, {i["instance_id"]: i for i in report.get("instances", [])}


def _nested_line(kind: str, depth: int) -> str:
    """A results_metadata.jsonl line nested `depth` deep, in a few shapes."""
    if kind == "array":
        return "[" * depth + "]" * depth
    if kind == "object":
        return '{"a":' * depth + "1" + "}" * depth
    if kind == "answer":  # a well-formed line whose answer is the deep part
        return (
            json.dumps({"instance_id": "deep", "answer_type": "answer"})[:-1]
            + ', "answer_or_path": '
            + ("[" * depth + '"Paris"' + "]" * depth + "}")
        )
    return '{"instance_id": "deep", "x": ' + '[{"k":' * (depth // 2) + "0" + "}]" * (depth // 2) + "}"


# ---- deep JSON: that line's problem, the rest graded -----------------------------------------------------


@pytest.mark.parametrize("kind", ["array", "object", "answer", "mixed"])
@pytest.mark.parametrize("depth", [150, 1_000, 100_000])
def test_a_deeply_nested_metadata_line_is_that_lines_problem(tmp_path, kind, depth):
    write_instance(tmp_path, "ok", TEXT_SPEC, "answer", "It is Paris.")
    meta = tmp_path / "sub" / "results_metadata.jsonl"
    with open(meta, "a") as handle:
        handle.write(_nested_line(kind, depth) + "\n")
    loaded = specs.load_submission(tmp_path / "sub")
    assert list(loaded.records) == ["ok"]
    assert [str(p.location) for p in loaded.problems] == [f"{meta}:2"]
    assert "nested more than 100 levels deep" in loaded.problems[0].message
    checked = validate(tmp_path / "sub", tmp_path / "gold")
    assert any(f"{meta}:2" in str(p) and "nested" in str(p) for p in checked.errors)
    result, instances = _grade(tmp_path)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert "Traceback" not in result.output and "RecursionError" not in result.output
    assert instances["ok"]["score"] == 1.0


def test_nesting_up_to_the_limit_still_loads(tmp_path):
    write_instance(tmp_path, "ok", TEXT_SPEC, "answer", "It is Paris.")
    with open(tmp_path / "sub" / "results_metadata.jsonl", "a") as handle:
        handle.write(json.dumps({"instance_id": "d", "answer_type": "answer", "answer_or_path": "x", "n": [[[[1]]]]}))
    assert set(specs.load_submission(tmp_path / "sub").records) == {"ok", "d"}
    assert not specs.too_deep(json.loads("[" * 100 + "]" * 100)) and specs.too_deep(json.loads("[" * 101 + "]" * 101))


@pytest.mark.parametrize("depth", [150, 200_000])
def test_a_deeply_nested_trajectory_file_is_that_instances_problem(tmp_path, depth):
    from evaluators import grade

    write_instance(tmp_path, "ok", TEXT_SPEC, "answer", "It is Paris.")
    spec = {"func": "qa_f1_tool", "parameters": {"gold": "Paris"}}
    deep = '[{"role": "tool", "content": ' + "[" * depth + '"Paris"' + "]" * depth + "}]"
    write_instance(tmp_path, "q", spec, None, None, pred_files={"trajectory.json": deep})
    line = {"instance_id": "q", "answer_type": "answer", "answer_or_path": "Paris", "trajectory": "trajectory.json"}
    with open(tmp_path / "sub" / "results_metadata.jsonl", "a") as handle:
        handle.write(json.dumps(line) + "\n")
    by_id = {i.instance_id: i for i in grade(tmp_path / "sub", tmp_path / "gold").instances}
    assert by_id["q"].reason == "unreadable_prediction" and "nested more than 100" in by_id["q"].detail
    assert by_id["ok"].score == 1.0


def _bird(tmp_path: Path, predictions_text: str, golds: list[str]) -> tuple[Path, Path]:
    db = tmp_path / "dbs" / "shop" / "shop.sqlite"
    db.parent.mkdir(parents=True)
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE t (a INTEGER)")
    con.executemany("INSERT INTO t VALUES (?)", [(1,), (2,)])
    con.commit()
    con.close()
    (tmp_path / "predict_dev.json").write_text(predictions_text)
    (tmp_path / "dev_gold.sql").write_text("".join(f"{g}\tshop\n" for g in golds))
    return tmp_path / "predict_dev.json", tmp_path / "dbs"


def test_a_bird_prediction_nested_deep_in_json_is_that_questions_problem(tmp_path):
    deep = "[" * 50_000 + "]" * 50_000
    sep = json.dumps(SEP)[1:-1]
    text = '{"0": "SELECT a FROM t' + sep + 'shop",\n "1": ' + deep + ',\n "2": {"x": ' + '{"y":' * 300
    text += "1" + "}" * 300 + '},\n "3": "SELECT count(*) FROM t' + sep + 'shop"}'
    preds, dbs = _bird(tmp_path, text, ["SELECT a FROM t", "SELECT a FROM t WHERE 0", "SELECT 1", "SELECT 2"])
    values = native.read_predictions(preds)
    assert [(v.key, v.location.line) for v in values] == [("0", 1), ("1", 2), ("2", 3), ("3", 4)]
    assert values[1].problem and values[2].problem and values[1].value is None
    report = grade_bird(preds, tmp_path / "dev_gold.sql", None, BirdOptions(dbs, num_cpus=1, work_dir=tmp_path / "w"))
    assert [i.score for i in report.instances] == [1.0, 1.0, 0.0, 1.0]  # a non-string is run as " " (official)
    assert sum("nested more than 100 levels" in p.message for p in report.summary.problems) == 2


@pytest.mark.parametrize(
    "payload",
    [
        "SELECT " + "(" * 1_000 + "1" + ")" * 1_000,
        "SELECT a FROM t WHERE a IN " + "(SELECT a FROM t WHERE a IN " * 400 + "(1)" + ")" * 400,
        "SELECT " + "CASE WHEN 1 THEN " * 700 + "1" + " END" * 700,
        "SELECT " + "-" * 5_000 + "1",
        "SELECT " + "abs(" * 2_000 + "1" + ")" * 2_000,
    ],
    ids=["parens", "subqueries", "case", "unary", "calls"],
)
def test_sqlglot_recursion_is_a_parse_failure_not_a_crash(payload):
    problem = read_only_problem(payload, "sqlite")
    assert problem is None or "cannot be parsed" in problem
    assert read_only_problem(payload, "bigquery", unparsed_ok=True) in (None, problem) or "cannot be parsed" in (
        read_only_problem(payload, "bigquery", unparsed_ok=True) or ""
    )


def test_a_bird_prediction_of_nested_parentheses_is_that_questions_problem(tmp_path):
    bomb = "SELECT " + "(" * 1_000 + "1" + ")" * 1_000
    preds = {
        "0": "SELECT a FROM t" + SEP + "shop",
        "1": bomb + SEP + "shop",
        "2": "SELECT a FROM t WHERE a IN " + "(SELECT a FROM t WHERE a IN " * 500 + "(1)" + ")" * 500 + SEP + "shop",
        "3": "SELECT count(*) FROM t" + SEP + "shop",
    }
    path, dbs = _bird(tmp_path, json.dumps(preds), ["SELECT a FROM t", "SELECT 1", "SELECT 1", "SELECT 2"])
    report = grade_bird(path, tmp_path / "dev_gold.sql", None, BirdOptions(dbs, num_cpus=2, work_dir=tmp_path / "w"))
    assert [i.score for i in report.instances][0::3] == [1.0, 1.0]
    assert report.instances[1].score == 0.0 and report.instances[2].score == 0.0


def test_a_test_suite_prediction_of_nested_parentheses_is_that_pairs_problem(tmp_path):
    db = tmp_path / "database" / "shop"
    db.mkdir(parents=True)
    con = sqlite3.connect(db / "shop.sqlite")
    con.execute("CREATE TABLE t (a INTEGER)")
    con.commit()
    con.close()
    (tmp_path / "gold.txt").write_text("SELECT 1\tshop\nSELECT 1\tshop\nSELECT 2\tshop\n")
    bomb = "SELECT " + "(" * 3_000 + "1" + ")" * 3_000
    (tmp_path / "pred.txt").write_text(f"SELECT 1\n{bomb}\nSELECT 2\n")
    report = grade_test_suite(tmp_path / "gold.txt", tmp_path / "pred.txt", tmp_path / "database", tmp_path / "w")
    assert [i.score for i in report.instances] == [1.0, 0.0, 1.0]


# ---- linear loaders: work counted, not timed (bench/loaders_scaling.py has the ratios) ------------------


def test_the_submission_loader_reads_the_file_once_however_many_lines_are_bad(tmp_path, monkeypatch):
    sub = tmp_path / "sub"
    sub.mkdir()
    lines = [f'{{"instance_id": "q{i}", "answer_type": "answer", broken' for i in range(3_000)]
    (sub / "results_metadata.jsonl").write_text("\n".join(lines) + "\n")
    reads: list = []
    real = specs.read_untrusted
    monkeypatch.setattr(specs, "read_untrusted", lambda *a, **k: reads.append(a) or real(*a, **k))
    monkeypatch.setattr(Path, "read_text", lambda *a, **k: pytest.fail("the file is read again"))
    monkeypatch.setattr(Path, "read_bytes", lambda *a, **k: pytest.fail("the file is read again"))
    loaded = specs.load_submission(sub)
    assert len(reads) == 1 and len(loaded.problems) == 3_000
    assert [p.instance_id for p in loaded.problems[:3]] == ["q0", "q1", "q2"]  # still guessed from the line


class _CountingText(str):
    """A str that adds up how many characters its count/find calls cover."""

    scanned = 0

    def count(self, sub, start=None, end=None):  # type: ignore[override]
        _CountingText.scanned += (len(self) if end is None else end) - (start or 0)
        return super().count(sub, start, end)

    def find(self, sub, start=None, end=None):  # type: ignore[override]
        _CountingText.scanned += (len(self) if end is None else end) - (start or 0)
        return super().find(sub, start, end)


@pytest.mark.parametrize("escaped", [False, True])
def test_the_bird_predictions_reader_scans_the_text_once(tmp_path, monkeypatch, escaped):
    n = 5_000
    key = (lambda i: "".join(f"\\u{ord(c):04x}" for c in str(i))) if escaped else str
    text = "{\n" + ",\n".join(f'"{key(i)}": "SELECT {i}{SEP.encode("unicode_escape").decode()}db"' for i in range(n))
    text += "\n}"
    path = tmp_path / "predict_dev.json"
    path.write_text(text)
    _CountingText.scanned = 0
    monkeypatch.setattr(native, "_read_text", lambda p, named: _CountingText(text))
    values = native.read_predictions(path)
    assert [v.key for v in values[:3]] == ["0", "1", "2"] and values[-1].location.line == n + 1
    assert _CountingText.scanned <= 2 * len(text), "every character is looked at a bounded number of times"


# ---- only regular files inside the submission, with a size cap ------------------------------------------


def _metadata_as(tmp_path: Path, make) -> Path:
    write_instance(tmp_path, "t1", TABLE_SPEC, "file", "r.csv", {"g.csv": TABLE}, {"r.csv": TABLE})
    meta = tmp_path / "sub" / "results_metadata.jsonl"
    meta.unlink()
    make(meta, tmp_path)
    return meta


def _other_submission(meta: Path, root: Path) -> None:
    other = root / "other"
    (other / "t1").mkdir(parents=True)
    (other / "t1" / "r.csv").write_text(SECRET)
    (other / "results_metadata.jsonl").write_text(
        json.dumps({"instance_id": "t1", "answer_type": "file", "answer_or_path": "r.csv"}) + "\n"
    )
    meta.symlink_to(other / "results_metadata.jsonl")


METADATA_ATTACKS = {
    "fifo": (lambda meta, root: os.mkfifo(meta), "a FIFO"),
    "dev_zero": (lambda meta, root: meta.symlink_to("/dev/zero"), "symbolic link"),
    "dev_urandom_relative": (lambda meta, root: meta.symlink_to("../../../../../../../dev/urandom"), "symbolic link"),
    "another_submission": (_other_submission, "symbolic link"),
    "folder": (lambda meta, root: meta.mkdir(), "is a folder"),
}


@pytest.mark.parametrize("attack", sorted(METADATA_ATTACKS))
def test_metadata_that_is_no_regular_file_of_the_submission_is_refused(tmp_path, attack):
    make, words = METADATA_ATTACKS[attack]
    meta = _metadata_as(tmp_path, make)
    with pytest.raises(SpecError, match=words):
        specs.load_submission(tmp_path / "sub")
    # In a child process with a deadline: a FIFO that blocked would hang it, /dev/zero would fill memory.
    args = ["--result-dir", tmp_path / "sub", "--gold-dir", tmp_path / "gold", "--output", tmp_path / "o" / "r.json"]
    for command in (["grade", *args, "--no-plot"], ["validate", "--result-dir", tmp_path / "sub"]):
        done = subprocess.run(
            [sys.executable, str(ROOT / "evaluate.py"), *map(str, command)],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=tmp_path,
        )
        assert done.returncode in (1, 2), done.stdout + done.stderr
        assert words in done.stdout + done.stderr and "Traceback" not in done.stderr
        assert "SECRET-OTHER-SUBMISSION" not in done.stdout + done.stderr
    assert not (tmp_path / "o" / "r.json").exists()
    assert meta.is_symlink() or meta.exists()


def test_metadata_past_the_size_cap_is_refused(tmp_path, monkeypatch):
    write_instance(tmp_path, "ok", TEXT_SPEC, "answer", "It is Paris.")
    monkeypatch.setattr(specs, "MIN_MAX_METADATA_BYTES", 10)
    with pytest.raises(SpecError, match="more than 10 bytes"):
        specs.load_submission(tmp_path / "sub", max_bytes=10)


@pytest.mark.parametrize("attack", ["fifo", "dev_zero", "outside"])
def test_bird_and_test_suite_predictions_are_regular_files(tmp_path, attack):
    folder = tmp_path / "preds"
    folder.mkdir()
    (tmp_path / "elsewhere.json").write_text('{"0": "SELECT 1"}')
    target = folder / "predict_dev.json"
    if attack == "fifo":
        os.mkfifo(target)
    else:
        target.symlink_to("/dev/zero" if attack == "dev_zero" else tmp_path / "elsewhere.json")
    done = []
    reader = threading.Thread(target=lambda: done.append(_error_of(native.read_predictions, target, False)))
    reader.start()
    reader.join(60)
    assert done and isinstance(done[0], SpecError), "refused, without blocking or reading forever"
    if attack != "outside":  # the operator may name a linked file; never a FIFO or a device
        assert isinstance(_error_of(native.read_predictions, target, True), SpecError)
        from evaluators.testsuite.native import read_predictions

        assert isinstance(_error_of(read_predictions, target), SpecError)


def _error_of(function, *args):
    try:
        function(*args)
    except Exception as exc:
        return exc
    return None


@pytest.mark.parametrize("attack", ["fifo", "dev_zero", "link_to_other_instance", "dir_link_escape"])
def test_answers_that_are_no_regular_file_of_their_instance_are_refused(tmp_path, attack):
    write_instance(tmp_path, "t1", TABLE_SPEC, "file", "sub/r.csv", {"g.csv": TABLE}, {})
    write_instance(tmp_path, "t2", TABLE_SPEC, "file", "r.csv", {"g.csv": SECRET}, {"r.csv": SECRET})
    folder = tmp_path / "sub" / "t1" / "sub"
    if attack == "dir_link_escape":
        folder.symlink_to("../../t2", target_is_directory=True)
    else:
        folder.mkdir()
        target = folder / "r.csv"
        if attack == "fifo":
            os.mkfifo(target)
        elif attack == "dev_zero":
            target.symlink_to("/dev/zero")
        else:
            target.symlink_to(tmp_path / "sub" / "t2" / "r.csv")
    with pytest.raises(InstanceError) as caught:
        answer_path(tmp_path / "sub", "t1", "sub/r.csv")
    assert caught.value.reason in ("unsafe_path", "missing_prediction")
    result, instances = _grade(tmp_path, "--timeout", "5")
    assert instances["t1"]["reason"] in ("unsafe_path", "missing_prediction") and instances["t2"]["score"] == 1.0
    assert "SECRET-OTHER-SUBMISSION" not in json.dumps(instances["t1"])


def test_links_that_stay_inside_the_instance_are_still_followed(tmp_path):
    write_instance(tmp_path, "t1", TABLE_SPEC, "file", "a/b/link.csv", {"g.csv": TABLE}, {"real.csv": TABLE})
    inner = tmp_path / "sub" / "t1" / "a" / "b"
    inner.mkdir(parents=True)
    (inner / "link.csv").symlink_to("../../real.csv")
    (inner / "abs.csv").symlink_to(tmp_path / "sub" / "t1" / "real.csv")
    for name in ("a/b/link.csv", "a/b/abs.csv"):
        path = answer_path(tmp_path / "sub", "t1", name)
        assert Path(os.fspath(path)).read_text() == TABLE and str(path).endswith(name)
    (inner / "up.csv").symlink_to("../../../t1/real.csv")  # out of t1/ and back in by name: refused
    with pytest.raises(InstanceError, match="resolves outside"):
        answer_path(tmp_path / "sub", "t1", "a/b/up.csv")


# ---- zip answers that cannot be read ---------------------------------------------------------------------


def _zip_with(flag: int = 0, method: int | None = None, corrupt: bool = False) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("r.csv", "city,n\n" + "".join(f"c{i},{i}\n" for i in range(2_000)))
    data = bytearray(buffer.getvalue())
    central = data.find(b"PK\x01\x02")
    data[6] |= flag
    data[central + 8] |= flag
    if method is not None:
        data[8:10] = struct.pack("<H", method)
        data[central + 10 : central + 12] = struct.pack("<H", method)
    if corrupt:
        data[60:120] = b"\x13" * 60
    return bytes(data)


@pytest.mark.parametrize(
    "payload, words",
    [
        (_zip_with(flag=1), "encrypted"),
        (_zip_with(method=99), "compression is not supported"),  # WinZip AES
        (_zip_with(method=97), "compression is not supported"),  # WavPack
        (_zip_with(corrupt=True), "corrupt compressed data"),
    ],
    ids=["encrypted", "aes_method", "wavpack_method", "corrupt_deflate"],
)
def test_an_unreadable_zip_answer_is_unreadable_with_a_reason(tmp_path, payload, words):
    write_instance(tmp_path, "z1", TABLE_SPEC, "file", "r.csv.zip", {"g.csv": TABLE}, {"r.csv.zip": payload})
    write_instance(tmp_path, "t1", TABLE_SPEC, "file", "r.csv", {"g.csv": TABLE}, {"r.csv": TABLE})
    _, instances = _grade(tmp_path)
    assert instances["z1"]["reason"] == "unreadable_prediction" and words in instances["z1"]["detail"]
    assert instances["t1"]["score"] == 1.0


# ---- TOCTOU: an answer swapped for a link after the check ------------------------------------------------


def test_an_answer_swapped_for_a_link_after_the_check_is_still_the_checked_file(tmp_path):
    write_instance(tmp_path, "t1", TABLE_SPEC, "file", "r.csv", {"g.csv": TABLE}, {"r.csv": TABLE})
    (tmp_path / "secret.csv").write_text(SECRET)
    path = answer_path(tmp_path / "sub", "t1", "r.csv")
    assert isinstance(path, PinnedPath)
    answer = tmp_path / "sub" / "t1" / "r.csv"
    answer.unlink()
    answer.symlink_to(tmp_path / "secret.csv")
    frame = TableReader("unreadable_prediction").csv(path, low_memory=True)
    assert list(frame["city"]) == ["Paris", "Rome"]


def test_a_duckdb_answer_swapped_for_a_link_is_read_from_the_checked_file(tmp_path):
    import duckdb

    from evaluators.execution.executor import duckdb_loader

    for name, value in (("p.duckdb", "mine"), ("secret.duckdb", "SECRET-OTHER-SUBMISSION")):
        con = duckdb.connect(str(tmp_path / name))
        con.execute(f"CREATE TABLE t AS SELECT '{value}' AS v")
        con.close()
    (tmp_path / "sub" / "d1").mkdir(parents=True)
    os.replace(tmp_path / "p.duckdb", tmp_path / "sub" / "d1" / "p.duckdb")
    path = answer_path(tmp_path / "sub", "d1", "p.duckdb")
    (tmp_path / "sub" / "d1" / "p.duckdb").unlink()
    (tmp_path / "sub" / "d1" / "p.duckdb").symlink_to(tmp_path / "secret.duckdb")
    tables = duckdb_loader()(path, ["t"])
    assert list(tables.frames["t"]["v"]) == ["mine"]


def test_a_racing_swap_never_leaks_the_linked_file(tmp_path):
    """A thread swaps the answer for a link to another submission's file as fast as it can, 20 runs."""
    write_instance(tmp_path, "t1", TABLE_SPEC, "file", "r.csv", {"g.csv": TABLE}, {"r.csv": TABLE})
    (tmp_path / "secret.csv").write_text(SECRET)
    answer = tmp_path / "sub" / "t1" / "r.csv"
    stop = threading.Event()

    def swap():
        spare, link = tmp_path / "spare.csv", tmp_path / "link.csv"
        spare.write_text(TABLE)
        while not stop.is_set():
            link.unlink(missing_ok=True)
            link.symlink_to(tmp_path / "secret.csv")
            os.replace(link, answer)  # the name is now a link to the secret
            spare.write_text(TABLE)
            os.replace(spare, answer)  # and a regular file again

    racer = threading.Thread(target=swap)
    racer.start()
    before = tree_hash(tmp_path / "gold")
    seen: list[str] = []
    try:
        for _ in range(20):
            try:
                path = answer_path(tmp_path / "sub", "t1", "r.csv")
                seen.append(Path(os.fspath(path)).read_text())
                seen.extend(TableReader("unreadable_prediction").csv(path, low_memory=True)["city"])
            except InstanceError as exc:
                seen.append(exc.reason)
            result, instances = _grade(tmp_path)
            seen.append(json.dumps(instances) + result.output)
    finally:
        stop.set()
        racer.join()
    assert not any("SECRET-OTHER-SUBMISSION" in text for text in seen)
    assert tree_hash(tmp_path / "gold") == before


# ---- similarity metrics: a bounded input -----------------------------------------------------------------


def test_a_huge_answer_against_a_short_gold_is_scored_on_a_bounded_prefix(monkeypatch):
    pytest.importorskip("rouge_score")
    pytest.importorskip("sacrebleu")
    pytest.importorskip("rapidfuzz")
    from evaluators import sqltext
    from evaluators.metrics import similarity

    gold = "SELECT " + ", ".join(f"c{i}" for i in range(70)) + " FROM t WHERE a = 1 ORDER BY c1"
    pred = "SELECT " + ", ".join(f"'{i}' || x{i}" for i in range(60_000)) + " FROM t"  # ~1.1 MB
    tokenized: list[int] = []
    real = sqltext.lenient_tokens
    monkeypatch.setattr(sqltext, "lenient_tokens", lambda text, *a: tokenized.append(len(text)) or real(text, *a))
    pred_tokens, gold_tokens = similarity.token_pair(pred, gold)
    cap = similarity.pred_token_cap(len(gold_tokens))
    assert len(pred_tokens) == cap and max(tokenized) <= cap * similarity.CHARS_PER_TOKEN < len(pred)
    scores = similarity.query_similarity(pred, gold)
    assert all(0 <= v < 0.6 for v in scores.values())
    assert max(tokenized) <= cap * similarity.CHARS_PER_TOKEN
    short = "SELECT c1 FROM t"
    assert similarity.token_pair(short, gold)[0] == similarity.sql_tokens(short), "a normal answer is whole"


# ---- LiveSQLBench / BIRD-CRITIC predictions (the same loader classes) ------------------------------------


def test_livesql_prediction_lines_nested_deep_are_those_lines_problems(tmp_path):
    from evaluators.livesql.native import read_lines

    path = tmp_path / "preds.jsonl"
    good = json.dumps({"instance_id": "a", "pred_sqls": ["SELECT 1"]})
    deep = '{"instance_id": "b", "pred_sqls": ' + "[" * 100_000 + "]" * 100_000 + "}"
    middling = '{"instance_id": "c", "x": ' + "[" * 300 + "]" * 300 + "}"
    path.write_text("\n".join([good, deep, middling, good.replace('"a"', '"d"')]) + "\n")
    problems: list = []
    lines = read_lines(path, problems, submitted=True)
    assert [line.instance_id for line in lines] == ["a", "d"]
    assert [p.location.line for p in problems] == [2, 3] and all("nested" in p.message for p in problems)


@pytest.mark.parametrize("attack", ["fifo", "dev_zero"])
def test_livesql_predictions_are_a_regular_file(tmp_path, attack):
    from evaluators.livesql.native import read_lines

    target = tmp_path / "preds.jsonl"
    os.mkfifo(target) if attack == "fifo" else target.symlink_to("/dev/zero")
    done: list = []
    reader = threading.Thread(target=lambda: done.append(_error_of(read_lines, target, [], True)))
    reader.start()
    reader.join(60)
    assert done and isinstance(done[0], SpecError), "refused, without blocking or reading forever"
