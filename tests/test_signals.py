"""SIGINT, SIGTERM and SIGHUP at any moment of a run, and SIGKILL of the grader: the exit code the shell expects,
no process of the grader's tree left, no partial report, the inputs unchanged.

The signal goes to the grader alone (as `kill PID` sends it), at delays spread over the first seconds of a run:
during Python's start-up, the imports, loading, a worker's start-up and the query itself.  A signal that
lands before the grader's handlers are installed (the first few tens of milliseconds, Python still starting)
ends it by the signal's default action, which the shell reports the same way (128 + n); the test tells
the two apart by reading the process's caught-signal mask, and asks the same of both: nothing left behind.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from casefolders import write_instance
from endless import DUCKDB_ENDLESS
from helpers_io import tree_hash
from processes import descendants

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads the process table from /proc")


@pytest.fixture(scope="module")
def endless(tmp_path_factory):
    """Three DuckDB answers that never finish by themselves."""
    root = tmp_path_factory.mktemp("endless")
    spec = {"func": "table_match", "parameters": {"gold": "g.csv"}}
    for n in range(3):
        write_instance(
            root, f"e{n}", spec, "file", "a.sql", {"g.csv": "a\n1\n"}, {"a.sql": DUCKDB_ENDLESS}, {"type": "DuckDB"}
        )
    return root


def _start(root: Path, out: Path, jobs: int) -> subprocess.Popen:
    command = [sys.executable, str(ROOT / "evaluate.py"), "--result-dir", str(root / "sub")]
    command += ["--gold-dir", str(root / "gold"), "--output", str(out), "--timeout", "600", "--jobs", str(jobs)]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _handlers_installed(pid: int) -> bool:
    """SIGHUP caught: the grader's own handlers are in place (Python alone catches only SIGINT)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    caught = int(next(line.split()[1] for line in status.splitlines() if line.startswith("SigCgt:")), 16)
    return bool(caught & (1 << (signal.SIGHUP - 1)))


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _signal_run(root: Path, out: Path, signum: int, delay: float, jobs: int = 1) -> dict:
    proc = _start(root, out, jobs)
    seen: set[int] = set()
    stop = time.monotonic() + delay
    while time.monotonic() < stop:  # every process the grader starts, as it starts them
        seen.update(descendants(proc.pid))
        time.sleep(0.02)
    seen.update(descendants(proc.pid))
    installed = _handlers_installed(proc.pid)
    proc.send_signal(signum)
    sent = time.monotonic()
    try:
        _, stderr = proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, stderr = proc.communicate()
        return {"delay": delay, "hung": True, "stderr": stderr[-4000:]}
    took = time.monotonic() - sent
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline and any(_alive(p) for p in seen):
        time.sleep(0.1)
    return {
        "delay": delay,
        "hung": False,
        "code": proc.returncode,
        "installed": installed,
        "seconds": took,
        "left": [p for p in seen if _alive(p)],
        "report": out.exists() or out.with_suffix(".csv").exists(),
        "stderr": stderr[-4000:],
    }


def _expect_clean(run: dict, signum: int) -> None:
    assert not run["hung"], run
    assert not run["left"], run
    assert not run["report"], run
    if run["installed"]:
        shown = f"delay {run['delay']}, exit {run['code']}, stderr:\n{run['stderr']}"  # whole: pytest cuts a dict
        assert run["code"] == 128 + signum, shown
        assert run["stderr"].strip().startswith("interrupted:") and "Traceback" not in run["stderr"], shown
    else:
        assert run["code"] in (-signum, 128 + signum, 1), run  # Python still starting: the default action


def _spread(root: Path, tmp_path: Path, signum: int, delays: list[float], jobs: int) -> list[dict]:
    before = tree_hash(root)
    with ThreadPoolExecutor(2) as pool:  # two runs at a time: the delays land in busier moments too
        runs = list(pool.map(lambda d: _signal_run(root, tmp_path / f"r{d:.3f}.json", signum, d, jobs), delays))
    assert tree_hash(root) == before, "gold and submission unchanged"
    return runs


def test_ctrl_c_at_30_moments_of_the_first_3_seconds_always_ends_clean(endless, tmp_path):
    runs = _spread(endless, tmp_path, signal.SIGINT, [0.1 * n for n in range(30)], jobs=1)
    for run in runs:
        _expect_clean(run, signal.SIGINT)
    assert sum(run["installed"] for run in runs) >= 25, "most signals came while the grader ran"
    assert max(run["seconds"] for run in runs) < 10


def test_sigterm_to_a_parallel_run_stops_its_pool_processes_and_their_workers(endless, tmp_path):
    runs = _spread(endless, tmp_path, signal.SIGTERM, [0.5 * n for n in range(1, 7)], jobs=2)
    for run in runs:
        _expect_clean(run, signal.SIGTERM)


def test_sighup_ends_a_run_as_a_hang_up(endless, tmp_path):
    for run in _spread(endless, tmp_path, signal.SIGHUP, [0.4, 1.2, 2.4], jobs=1):
        _expect_clean(run, signal.SIGHUP)


def test_sigkill_of_the_grader_leaves_nothing_running(endless, tmp_path):
    """No handler runs on SIGKILL: the pool processes and SQL workers must see their parent go by themselves."""
    proc = _start(endless, tmp_path / "k.json", jobs=2)
    seen: set[int] = set()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(seen) < 4:  # two pool processes, each with its SQL worker
        seen.update(descendants(proc.pid))
        time.sleep(0.05)
    assert len(seen) >= 4, seen
    time.sleep(0.5)
    proc.kill()
    proc.communicate()
    gone_by = time.monotonic() + 3
    while time.monotonic() < gone_by and any(_alive(p) for p in seen):
        time.sleep(0.1)
    assert not [p for p in seen if _alive(p)]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL])
def test_the_graph_server_ends_with_the_grader_whatever_ended_it(tmp_path, signum):
    from cypher_engine import engine_or_skip

    engine_or_skip()
    db_dir = tmp_path / "gold" / "databases"
    db_dir.mkdir(parents=True)
    (db_dir / "g.cypher").write_text("CREATE (:N {v: 1})\n")
    spec = {"func": "execution_match", "parameters": {"gold_query": "gold.cypher"}}
    endless_cypher = "UNWIND range(1, 100000000000) AS x WITH x WHERE x < 0 RETURN count(x)"
    write_instance(
        tmp_path,
        "c1",
        spec,
        "file",
        "a.cypher",
        {"gold.cypher": "MATCH (n:N) RETURN n.v"},
        {"a.cypher": endless_cypher},
        {"type": "cypher", "db": "g"},
    )
    work = tmp_path / "work"
    command = [sys.executable, str(ROOT / "evaluate.py"), "--result-dir", str(tmp_path / "sub")]
    command += ["--gold-dir", str(tmp_path / "gold"), "--work-dir", str(work), "--timeout", "600", "--jobs", "1"]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen: set[int] = set()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not any("redis" in _command(p) for p in seen):
        seen.update(descendants(proc.pid))
        time.sleep(0.05)
    servers = [p for p in seen if "redis" in _command(p)]
    assert servers, "the graph server started"
    time.sleep(1.0)  # the endless query is running in it
    seen.update(descendants(proc.pid))
    proc.send_signal(signum)
    proc.communicate(timeout=30)
    gone_by = time.monotonic() + 3
    while time.monotonic() < gone_by and any(_alive(p) for p in seen):
        time.sleep(0.1)
    assert not [p for p in seen if _alive(p)], [(p, _command(p)) for p in seen if _alive(p)]
    if signum != signal.SIGKILL:
        assert not list((work / "cypher").glob("*.socket")), "its socket is cleaned too"


def _command(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def test_an_interrupt_swallowed_by_a_finaliser_prints_no_traceback():
    """Seen once in 30 Ctrl-C moments: the signal landed in an import's module-lock callback, and Python
    printed "Exception ignored in ..." with a traceback before the clean stop. Other ignored errors still print."""
    script = (
        "import gc\n"
        "from evaluators import signals\n"
        "signals.install()\n"
        "class Raises:\n"
        "    def __init__(self, error): self.error = error\n"
        "    def __del__(self): raise self.error\n"
        "Raises(signals.Interrupted(2)); gc.collect()\n"
        "Raises(ValueError('still shown')); gc.collect()\n"
    )
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert "Interrupted" not in result.stderr, result.stderr
    assert "ValueError: still shown" in result.stderr, result.stderr


@pytest.fixture(scope="module")
def big_tables(tmp_path_factory):
    """Two instances whose CSV pairs pass a 16 MB --memory-limit-mb: graded out of core, in DuckDB."""
    from bench import shapes

    root = tmp_path_factory.mktemp("big")
    gold, pred = shapes.pair("repeated", 1_000_000)
    spec = {"func": "table_match", "parameters": {"gold": "g.csv", "condition_cols": [], "ignore_order": True}}
    for n in range(2):
        write_instance(root, f"big{n}", spec, "file", "a.csv")
    import duckdb

    # DuckDB writes the same CSV (the frames read back equal) in a fifth of pandas' to_csv time.
    duckdb.from_df(gold).write_csv(str(root / "gold" / "big0" / "g.csv"))
    duckdb.from_df(pred).write_csv(str(root / "sub" / "big0" / "a.csv"))
    for side, name in (("gold", "g.csv"), ("sub", "a.csv")):
        (root / side / "big1" / name).hardlink_to(root / side / "big0" / name)
    return root


@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.parametrize("after_s", [0.2, 1.5])
def test_ctrl_c_during_an_out_of_core_comparison_stops_duckdb_and_leaves_no_tables(big_tables, tmp_path, jobs, after_s):
    """DuckDB turns Ctrl-C into its own "Query interrupted" or keeps reading a CSV file: neither may become an
    instance's verdict (a report with internal_error or unreadable_prediction, exit 1), nor wait for the
    deadline; its tables leave the work folder, killed pool processes' too."""
    before = tree_hash(big_tables)
    out = tmp_path / "r.json"
    command = [sys.executable, str(ROOT / "evaluate.py"), "--result-dir", str(big_tables / "sub")]
    command += ["--gold-dir", str(big_tables / "gold"), "--output", str(out), "--memory-limit-mb", "16"]
    proc = subprocess.Popen(command + ["--jobs", str(jobs)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not list(tmp_path.rglob("tables.duckdb")) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert list(tmp_path.rglob("tables.duckdb")), "the pair went out of core"
    time.sleep(after_s)  # the load (0.2 s) or the comparison (1.5 s)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130, stderr[-800:]
    assert stderr.strip().startswith("interrupted:") and "took over" not in stderr, stderr[-800:]
    assert not out.exists() and not out.with_suffix(".csv").exists()
    time.sleep(1)  # pool processes see their parent gone within their poll interval
    assert not list(tmp_path.rglob("tables.duckdb*")), "the out-of-core tables were removed"
    assert not descendants(proc.pid)
    assert tree_hash(big_tables) == before


@pytest.mark.parametrize("signalled", [True, False])
def test_a_thread_failing_as_the_run_stops_prints_nothing_but_one_failing_otherwise_is_shown(signalled):
    """The pool's worker handler can fail while the pool is terminated after a signal (seen once in CI: its
    traceback after the "interrupted:" line); without a signal a thread's failure is still printed."""
    code = f"""
import os, signal, sys, threading, time
sys.path.insert(0, {str(ROOT)!r})
from evaluators import signals
signals.install()
def fail():
    time.sleep(0.3)
    raise OSError("a process could not start")
threading.Thread(target=fail, name="pool-handler").start()
try:
    if {signalled}:
        os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(1)
except KeyboardInterrupt:
    time.sleep(0.6)
print("end")
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    assert done.stdout.strip() == "end"
    assert ("Exception in thread pool-handler" in done.stderr) is not signalled, done.stderr
