"""Round 4, also tried (issue L): attacks round 4 did not reach, each on the real engine through the public entry.

RL rewards on kept read-only connections; Cypher paths under the timeout; `test-suite --plug-value` costs
before the cap; Soft F1 on huge results; the BIRD doors on MariaDB.  docs/security.md, "Round 4: also tried".
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from evaluators.rewards.verl import compute_score


def _names_database(path: Path, names: list[str]) -> None:
    path.unlink(missing_ok=True)
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE t(name TEXT)")
    con.executemany("INSERT INTO t VALUES (?)", [(n,) for n in names])
    con.commit()
    con.close()


def _fenced(sql: str) -> str:
    return f"<think>t has names</think>\n```sql\n{sql}\n```"


GOLD_AB = "SELECT name FROM t WHERE name LIKE 'ab%'"


def test_no_completion_changes_what_the_next_one_sees_on_a_kept_connection(tmp_path):
    """Each completion runs on the worker's kept SQLite connection: what reaches the engine and would set a
    pragma (as a table-valued function, past the text check) is refused there, and LIKE stays case-blind."""
    db = tmp_path / "names.sqlite"
    _names_database(db, ["Abc", "abd", "x"])
    info = {"db_path": str(db)}
    answer = _fenced("SELECT name FROM t WHERE name LIKE 'AB%'")  # right only while LIKE ignores case
    assert compute_score("bird", answer, GOLD_AB, info)["score"] == 1.0
    for attack in (
        "PRAGMA case_sensitive_like = 1",
        "SELECT * FROM pragma_case_sensitive_like(1)",
        "SELECT * FROM pragma_reverse_unordered_selects(1)",
        "CREATE TEMP VIEW v AS SELECT 1",
        "SAVEPOINT a",
    ):
        assert compute_score("bird", _fenced(attack), GOLD_AB, info)["executed"] is False, attack
        assert compute_score("bird", answer, GOLD_AB, info)["score"] == 1.0, attack


def _swap_keeping_size_and_mtime(db: Path, names: list[str], in_place: bool) -> None:
    before = os.stat(db)
    other = db.with_name("other.sqlite")
    _names_database(other, names)
    assert os.stat(other).st_size == before.st_size
    if in_place:  # the same inode, written over
        db.write_bytes(other.read_bytes())
        other.unlink()
    else:  # renamed over it, as `rsync -t` does
        os.utime(other, ns=(before.st_atime_ns, before.st_mtime_ns))
        other.replace(db)
    os.utime(db, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(db)
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)


def test_a_database_swapped_with_the_same_size_and_mtime_is_read_again(tmp_path):
    """The reward's gold cache and the worker's kept immutable connection knew a file by its size and mtime:
    a database written over in place, or renamed over, keeping both, was still graded against the old gold
    on the old pages.  Both now know it by inode and ctime too."""
    db = tmp_path / "names.sqlite"
    _names_database(db, ["Abc", "abd", "x"])
    info = {"db_path": str(db)}
    assert compute_score("bird", _fenced("SELECT 'Abc' UNION SELECT 'abd'"), GOLD_AB, info)["score"] == 1.0
    for names, in_place in ((["Abz", "abz", "x"], True), (["Abq", "abq", "x"], False)):
        _swap_keeping_size_and_mtime(db, names, in_place)
        new = _fenced(f"SELECT '{names[0]}' UNION SELECT '{names[1]}'")
        assert compute_score("bird", new, GOLD_AB, info)["score"] == 1.0, names
        assert compute_score("bird", _fenced("SELECT 'Abc' UNION SELECT 'abd'"), GOLD_AB, info)["score"] == 0.0


# ---------------------------------------------------------------- test-suite --plug-value


def _suite(tmp_path: Path, gold_sql: str, predictions: list[str], *flags: str) -> tuple[object, list[dict]]:
    import json

    from helpers_io import run_cli

    folder = tmp_path / "db" / "singer"
    folder.mkdir(parents=True)
    con = sqlite3.connect(folder / "singer.sqlite")
    con.execute("CREATE TABLE singer(id INT, name TEXT, age INT, country TEXT)")
    con.executemany("INSERT INTO singer VALUES (?, ?, ?, ?)", [(i, f"n{i}", 20 + i, "France") for i in range(9)])
    con.commit()
    con.close()
    (tmp_path / "gold.txt").write_text(f"{gold_sql}\tsinger\n" * len(predictions))
    (tmp_path / "pred.txt").write_text("\n".join(predictions) + "\n")
    out = tmp_path / "out" / "ts.json"
    result = run_cli(
        "test-suite", "--gold", tmp_path / "gold.txt", "--pred", tmp_path / "pred.txt", "--db", tmp_path / "db",
        "--plug-value", *flags, "--output", out, "--jobs", "1",
    )  # fmt: skip
    assert result.exit_code in (0, 1), result.output
    return result, json.loads(out.read_text())["instances"]


def test_plug_value_pays_nothing_unbounded_before_its_cap(tmp_path):
    """A prediction made of one long comment and 7 value slots (3 gold values: 2,187 variants) made one copy of
    the comment per variant (a 2 MB comment: 206 s, 2 GB); a prediction of 4,500 slots against 10 gold values
    made a count of 4,501 digits that JSON cannot write, and variants of 1,000 times its size; one of 5,000
    slots passed sqlparse's token limit, which stopped the whole run under --keep-distinct."""
    from evaluators.testsuite.plug import MAX_PLUG_BYTES, MAX_PLUG_CHARS, plugged_predictions

    gold = "SELECT name FROM singer WHERE age > 22 AND country = 'France' AND id = 3"
    slots = " AND ".join(f"id = {k}" for k in range(7))
    long_comment = f"SELECT name /* {'x' * (MAX_PLUG_CHARS + 1)} */ FROM singer WHERE {slots}"
    ten_values = "SELECT name FROM singer WHERE " + " OR ".join(f"id = {k}" for k in range(10))
    many_slots = "SELECT name FROM singer WHERE id IN ( " + " ".join(["1"] * 4_500) + " )"
    past_sqlparse = "SELECT name FROM singer WHERE id IN ( " + " , ".join(str(k) for k in range(5_000)) + " )"
    _, found = _suite(tmp_path / "a", gold, [long_comment], "--plug-value-cap", "5")
    assert found[0]["execution"]["plug_value"]["tried"] == 0
    assert "not plugged" in found[0]["detail"] and "characters" in found[0]["detail"]
    _, found = _suite(tmp_path / "b", ten_values, [many_slots], "--plug-value-cap", "3")
    assert (
        found[0]["execution"]["plug_value"]["variants"] == "10^4500"
        and "cap_hit" in found[0]["execution"]["plug_value"]
    )
    plugged = plugged_predictions(ten_values, many_slots, 1000)  # the variants' bytes are bounded too
    variants = list(plugged.variants)
    assert 0 < len(variants) < 1000 and sum(map(len, variants)) <= MAX_PLUG_BYTES
    result, found = _suite(
        tmp_path / "c", gold, [past_sqlparse, "SELECT name FROM singer WHERE id = 1"], "--keep-distinct"
    )
    assert "not plugged: sqlparse cannot read it" in found[0]["detail"], result.output
    assert found[1]["score"] == 1.0  # the next pair still plugged, and matched


# ---------------------------------------------------------------- Soft F1 on huge results


class _Cell(int):
    """An integer cell that counts its `==` comparisons and stops a search that makes too many."""

    compared = 0
    budget = 2_000_000

    def __eq__(self, other):
        _Cell.compared += 1
        if _Cell.compared > _Cell.budget:
            raise AssertionError(f"over {_Cell.budget:,} comparisons")
        return int(self) == other

    __hash__ = int.__hash__


def test_soft_f1_unordered_stays_linear_on_wide_and_unhashable_results():
    """BIRD's Soft F1 runs in the grading process, outside every timeout.  Ours paired 1,000 distinct predicted
    rows 300 wide against 1,000 gold rows by comparing every cell with every gold cell (124 s), and compared
    unhashable rows (PostgreSQL arrays) each with each (3,000 rows: 7 s, growing as the square)."""
    from evaluators.metrics.soft_f1 import soft_f1_unordered

    gold = [(_Cell(i), f"g{i}") for i in range(1000)]
    wide = [tuple(_Cell(k + j) for j in range(300)) for k in range(1000)]
    _Cell.compared = 0
    assert 0 < soft_f1_unordered(wide, gold) < 0.01
    arrays_gold = [([_Cell(i)], i) for i in range(3000)]
    arrays_pred = [([_Cell(i + 1)], i) for i in range(3000)] + [([_Cell(5)], 5)] * 2  # a duplicate dropped
    as_tuples = [[(tuple(a), b) for a, b in rows] for rows in (arrays_pred, arrays_gold)]
    expected = soft_f1_unordered(*as_tuples)  # the same rows, hashable: the same pairing
    _Cell.compared = 0
    assert soft_f1_unordered(arrays_pred, arrays_gold) == expected > 0.5
    same = [([_Cell(i)], {"k": [i]}) for i in range(3000)]
    assert soft_f1_unordered(list(reversed(same)), [([_Cell(i)], {"k": [i]}) for i in range(3000)]) == 1.0
    assert soft_f1_unordered([([1],)], [((1,),)]) == 0.0  # a list never equals a tuple, frozen or not


# ---------------------------------------------------------------- BIRD's doors on MariaDB


def test_birds_mysql_doors_on_mariadb_stop_at_the_timeout_and_set_nothing(mariadb_server, tmp_path):
    """What `evaluate.py bird --sql_dialect MySQL` lets through (SET @v, SELECT ... INTO @v), on the real server:
    a server setting inside a SET list, MariaDB's SET STATEMENT ... FOR and a write inside the SET are refused;
    a sleep inside them is stopped by the server; BENCHMARK stopped at max_statement_time came back as a result
    (0, or no rows for a SET) and was graded as one; LOAD_FILE reads nothing for the grader's account."""
    from evaluators.execution.backends.settings import MySQLSettings
    from evaluators.execution.executor import ExecConfig, run_sql

    con = mariadb_server.admin()
    try:
        con.cursor().execute("CREATE DATABASE IF NOT EXISTS doors")
        con.cursor().execute("GRANT SELECT ON doors.* TO 'grader'@'%'")
    finally:
        con.close()
    config = ExecConfig(
        output_dir=tmp_path / "out", mysql=MySQLSettings(mariadb_server.dsn, official_statements=True), timeout_s=2
    )

    def run(sql: str):
        return run_sql("mysql", "doors", sql, config, tmp_path / "r.csv", collect="inline")

    for sql in (
        "SET @a = 1, max_statement_time = 0",
        "SET @a = 1, @@session.max_statement_time = 0",
        "SET @a = 1, PASSWORD = PASSWORD('x')",
        "SET @@global.max_connections = 1",
        "SET STATEMENT max_statement_time = 0 FOR SELECT SLEEP(30)",
        "SET @a = (SELECT 1 INTO OUTFILE '/tmp/doors.txt')",
    ):
        refused = run(sql)
        assert refused.reason == "exec_error" and refused.detail.startswith("not run"), (sql, refused)
    for sql in (
        "SET @a = (SELECT SLEEP(30))",
        "SELECT SLEEP(30) INTO @v",
        "SELECT BENCHMARK(10000000000, MD5('a'))",
        "SET @x = BENCHMARK(10000000000, MD5('a'))",
        "SELECT BENCHMARK(10000000000, MD5('a')) INTO @v",
    ):
        assert run(sql).reason == "timeout", sql
    assert run("SET @a = (SELECT LOAD_FILE('/etc/hostname'))").ok
    assert run("SELECT LOAD_FILE('/etc/hostname') AS f").rows()[1] == [(None,)]
    assert run("SELECT @@max_statement_time AS t").rows()[1] == [(2.0,)]  # each query on a fresh session


# ---------------------------------------------------------------- Cypher paths under the timeout


def test_cypher_path_searches_stop_at_the_timeout_and_the_next_query_runs(tmp_path):
    """A complete graph of 40 nodes (1,560 edges): variable-length patterns and shortestPath over every pair
    are stopped by the server's own timeout; the path procedures (algo.SPpaths, algo.SSpaths) ignore it, so the
    worker is killed and the server with it, which is started again, graph rebuilt, for the next query."""
    from cypher_engine import engine_or_skip

    engine_or_skip()
    from evaluators.execution.executor import ExecConfig, run_sql

    dbs = tmp_path / "dbs"
    dbs.mkdir()
    (dbs / "k.cypher").write_text(
        "UNWIND range(1, 40) AS i CREATE (:N {id: i});\nMATCH (a:N), (b:N) WHERE a.id <> b.id CREATE (a)-[:E]->(b);\n"
    )
    config = ExecConfig(output_dir=tmp_path / "work", db_dir=dbs, memory_limit_mb=256, timeout_s=2)

    def run(query: str):
        return run_sql("cypher", "k", query, config, tmp_path / "r.csv", collect="inline")

    assert run("MATCH (n:N) RETURN count(n)").rows()[1] == [(40,)]
    # `WHERE (a)-[*]->(b)` is left out: an existence check stops at its first path, so it ends within the
    # timeout on a quiet machine (1.8 s of 2 s) and says nothing about stopping.
    for query in (
        "MATCH p=(a:N {id: 1})-[*]->(b:N {id: 2}) RETURN count(p)",
        "MATCH (a:N)-[*0..]-(b:N) RETURN count(b)",
        "MATCH (a:N), (b:N), (c:N) RETURN count(shortestPath((a)-[*]->(b)))",
        "MATCH (a:N {id: 1}) CALL algo.SSpaths({sourceNode: a, relTypes: ['E'], maxLen: 40, pathCount: 1000000000})"
        " YIELD path RETURN count(path)",
    ):
        stopped = run(query)
        assert stopped.reason == "timeout", (query, stopped)
        assert run("MATCH (n:N) RETURN count(n)").rows()[1] == [(40,)], query
