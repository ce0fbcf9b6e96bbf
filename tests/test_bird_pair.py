"""BIRD's two ways to one comparison: a question graded in the SQL worker (`pair.grade_in_worker`, SQLite) and
graded in the grading process (`run._in_parent`, the servers' way, here on SQLite too) give the same results,
verdicts and report figures, on every (gold, prediction) pair of generated queries over a generated database."""

from __future__ import annotations

import itertools
import random
import sqlite3

import pytest

from evaluators.bird.run import BirdOptions, _in_parent, _Runner
from evaluators.execution.executor import ExecConfig

QUERIES = [
    "SELECT name FROM t WHERE g = 3",
    "SELECT name FROM t WHERE g = 3 ORDER BY v",
    "SELECT name, v FROM t WHERE v > 40 ORDER BY v DESC LIMIT 5",
    "SELECT v, name FROM t WHERE v > 40 ORDER BY v DESC LIMIT 5",
    "SELECT count(*) FROM t",
    "SELECT count(*) * 1.0 FROM t",
    "SELECT g, avg(v) FROM t GROUP BY g",
    "SELECT g, sum(v) / count(v) FROM t GROUP BY g",
    "SELECT DISTINCT g FROM t",
    "SELECT g FROM t",
    "SELECT CAST(g AS TEXT) FROM t WHERE id < 4",
    "SELECT g FROM t WHERE id < 4",
    "SELECT blob FROM t WHERE id < 3",
    "SELECT name FROM t WHERE id < 0",
    "SELECT nme FROM t",
    "SELECT 1;;",
    "",
]


@pytest.fixture(scope="module")
def database(tmp_path_factory):
    path = tmp_path_factory.mktemp("bird_pair") / "db.sqlite"
    rng = random.Random(3)
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, g INTEGER, name TEXT, v REAL, blob BLOB)")
    rows = [
        (
            i,
            rng.randrange(6),
            rng.choice(["a", "b", "ç", None]),
            rng.choice([round(rng.uniform(0, 99), 2), None]),
            b"\x00" * (i % 3),
        )
        for i in range(60)
    ]
    con.executemany("INSERT INTO t VALUES (?,?,?,?,?)", rows)
    con.commit()
    con.close()
    return str(path)


def _plain(triple) -> tuple:
    gold, pred, compared = triple
    results = tuple(None if r is None else (r.ok, r.reason, r.detail) for r in (gold, pred))
    if compared is None:
        return results, None
    verdicts, info = compared
    info = {k: v for k, v in info.items() if k != "pred_seconds"}  # a timing, never the same twice
    return results, (verdicts, info)


def test_worker_and_parent_comparisons_agree_on_every_pair(database, tmp_path):
    config = ExecConfig(output_dir=tmp_path / "work", timeout_s=10.0)
    runner = _Runner(BirdOptions(tmp_path, meta_time_out=10.0, work_dir=tmp_path / "work"), config)
    try:
        compared = 0
        for gold, pred in itertools.product([q for q in QUERIES if q.strip()], QUERIES):
            in_worker = _plain(runner.pair(pred, gold, database))
            in_parent = _plain(_in_parent(pred, gold, database, runner))
            assert in_worker == in_parent, (gold, pred)
            compared += in_worker[1] is not None
        assert compared > 100  # most pairs ran both queries and were compared, not only failures
    finally:
        runner.rows.close()


SLOW = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 300000000) SELECT count(*) FROM c"


@pytest.mark.parametrize("gold, pred", [(SLOW, QUERIES[0]), (QUERIES[0], SLOW)], ids=["gold", "prediction"])
def test_a_timeout_is_the_same_failure_both_ways(database, tmp_path, gold, pred):
    config = ExecConfig(output_dir=tmp_path / "work", timeout_s=0.3)
    runner = _Runner(BirdOptions(tmp_path, meta_time_out=0.3, work_dir=tmp_path / "work"), config)
    try:
        in_worker = _plain(runner.pair(pred, gold, database))
        assert in_worker == _plain(_in_parent(pred, gold, database, runner))
    finally:
        runner.rows.close()
    gold_result, pred_result = in_worker[0]
    failed = gold_result if gold is SLOW else pred_result
    assert failed[:2] == (False, "timeout") and in_worker[1] is None
    assert (pred_result is None) == (gold is SLOW)  # a gold that failed: the prediction never ran


def test_a_batch_gives_what_each_pair_gives_alone(database, tmp_path):
    """`_Runner.pairs` (several questions a worker request, `BirdBenchmark.prepare`) against `pair` one by
    one, on the same generated pairs (one asked twice), failures included; and `pair` then takes the batch's
    results, until the thread's next batch."""
    config = ExecConfig(output_dir=tmp_path / "work", timeout_s=10.0)
    runner = _Runner(BirdOptions(tmp_path, meta_time_out=10.0, work_dir=tmp_path / "work"), config)
    wanted = [(pred, gold, database) for gold, pred in itertools.product(QUERIES[::3], QUERIES) if gold.strip()]
    wanted.append(wanted[0])
    try:
        runner.pairs(wanted)()
        batch = [_plain(runner.ready.pairs[w]) for w in wanted]
        assert len(runner.ready.pairs) == len(wanted) - 1  # the pair asked twice ran once
        assert batch == [_plain(runner.pair(*w)) for w in wanted]  # taken from the batch kept for this thread
        runner.pairs([])()
        assert not runner.ready.pairs  # a new batch: the last one's results are gone
        assert batch == [_plain(runner.pair(*w)) for w in wanted]  # and now run alone, one request each
    finally:
        runner.rows.close()


@pytest.mark.parametrize("written", ["at once", "when its answer is asked for"])
def test_a_batch_written_behind_another_waits_on_its_worker_and_answers_alike(
    database, tmp_path, fresh_pool, monkeypatch, written
):
    """The runner writes a thread's next batch before it grades the last one (`parallel._ThreadRun._work`):
    it goes to the same worker, which answers both in turn, each as it would alone; the worker is lent until
    the last is answered.  A request longer than `QUEUED_BYTES` is written only once the one before it is
    answered (a long one could fill the pipe while the worker blocks writing a long answer)."""
    from evaluators.execution import worker

    if written != "at once":
        monkeypatch.setattr(worker, "QUEUED_BYTES", 0)
    config = ExecConfig(output_dir=tmp_path / "work", timeout_s=10.0)
    runner = _Runner(BirdOptions(tmp_path, meta_time_out=10.0, work_dir=tmp_path / "work"), config)
    wanted = [(pred, gold, database) for gold, pred in itertools.product(QUERIES[::3], QUERIES) if gold.strip()]
    first, second = wanted[::2], wanted[1::2]
    try:
        answered_first = runner.pairs(first)
        answered_second = runner.pairs(second)  # behind the first, unanswered
        (lent,) = fresh_pool.busy
        assert not fresh_pool.idle
        answered_first()
        got = {w: _plain(runner.ready.pairs[w]) for w in first}
        assert fresh_pool.busy == {lent}  # kept: the second waits on it
        answered_second()
        got.update({w: _plain(runner.ready.pairs[w]) for w in second})
        assert fresh_pool.idle == [lent] and not fresh_pool.busy
        assert got == {w: _plain(runner.pair(*w)) for w in wanted}
    finally:
        runner.rows.close()


def test_a_batch_behind_one_whose_worker_was_killed_is_not_run_and_its_questions_run_alone(
    database, tmp_path, fresh_pool
):
    """A worker killed at a request's timeout takes the request waiting behind it: that one is answered as not
    run (and its questions are then graded one by one, as after any failed batch)."""
    config = ExecConfig(output_dir=tmp_path / "work", timeout_s=10.0)
    runner = _Runner(BirdOptions(tmp_path, meta_time_out=10.0, work_dir=tmp_path / "work"), config)
    fast = [(QUERIES[0], QUERIES[0], database), (QUERIES[1], QUERIES[1], database)]
    try:
        answered_first = runner.pairs(fast)
        first = runner.ready.unanswered
        answered_second = runner.pairs(fast[::-1])
        first.worker.send_kill()  # as `_expired` does at a timeout, before its answer is read
        answered_first()
        assert not runner.ready.pairs  # the first failed whole
        answered_second()
        assert not runner.ready.pairs and runner.ready.unanswered is None
        assert [_plain(runner.pair(*w)) for w in fast]  # each alone, on a new worker
    finally:
        runner.rows.close()
