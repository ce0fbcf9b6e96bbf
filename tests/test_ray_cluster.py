"""`grade --ray` on a real multi-node Ray cluster started on this machine (a head and other node processes,
each its own raylet): relative folders, a node lost in the middle of a run, a node that cannot see the folders.

The cluster is started from another working directory than the grader's, as a real cluster's workers are.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from casefolders import write_instance
from dbservers import unavailable

ROOT = Path(__file__).resolve().parents[1]
SLOW_SQL = "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < {n}) SELECT count(*) FROM c"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    ray = pytest.importorskip("ray", reason="pip install '.[ray]'")
    from ray.cluster_utils import Cluster

    elsewhere = tmp_path_factory.mktemp("ray_cwd")
    here = os.getcwd()
    os.chdir(elsewhere)  # the nodes' processes start from another folder than the grader
    try:
        head = Cluster(
            initialize_head=True,
            head_node_args={
                "num_cpus": 1,
                "include_dashboard": False,
                "env_vars": {"PYTHONPATH": os.pathsep.join(sys.path)},
            },
        )
    finally:
        os.chdir(here)
    yield head
    if ray.is_initialized():
        ray.shutdown()
    head.shutdown()


@pytest.fixture(scope="module")
def slow_set(tmp_path_factory):
    """24 SQLite answers of a tenth of a second or two each, 18 right: enough to lose a node in the middle."""
    import sqlite3

    root = tmp_path_factory.mktemp("slow")
    db = root / "gold" / "databases" / "shop.sqlite"
    db.parent.mkdir(parents=True)
    sqlite3.connect(db).close()
    spec = {"func": "execution_match", "parameters": {"gold_sql": "gold.sql"}}
    for n in range(24):
        gold, pred = SLOW_SQL.format(n=300_000 + n), SLOW_SQL.format(n=300_000 + n + (n % 4 == 0))
        meta = {"type": "SQLite", "db": "shop"}
        write_instance(root, f"q{n:02d}", spec, "file", "a.sql", {"gold.sql": gold}, {"a.sql": pred}, meta)
    return root


def _grade(cwd: Path, sub: str, gold: str, out: Path, *extra) -> subprocess.CompletedProcess:
    command = [sys.executable, str(ROOT / "evaluate.py"), "--result-dir", sub, "--gold-dir", gold]
    command += ["--output", str(out), "--no-plot", "--ves-iterations", "0", *extra]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=300)


def _slow_set_verdicts() -> list:
    """What grading the slow set anywhere gives: every fourth answer counts one row too many."""
    verdicts = [(1.0, "match") if n % 4 else (0.0, "value_mismatch") for n in range(24)]
    return [(f"q{n:02d}", score, score, reason) for n, (score, reason) in enumerate(verdicts)]


def _rows(path: Path) -> list:
    return [
        (i["instance_id"], i["score"], i["strict_score"], i["reason"])
        for i in json.loads(path.read_text())["instances"]
    ]


def test_relative_folders_on_a_cluster_give_the_local_report(cluster, tmp_path):
    work = tmp_path / "here"
    shutil.copytree(ROOT / "example_submission_folder", work / "sub")
    shutil.copytree(ROOT / "gold", work / "gold")
    node = cluster.add_node(num_cpus=1)
    try:
        cluster.wait_for_nodes()
        local = _grade(work, "sub", "gold", tmp_path / "local.json")
        spread = _grade(work, "sub", "gold", tmp_path / "ray.json", "--ray", cluster.address)
    finally:
        cluster.remove_node(node)
    assert local.returncode == spread.returncode, spread.stderr
    assert _rows(tmp_path / "ray.json") == _rows(tmp_path / "local.json")
    assert json.loads((tmp_path / "ray.json").read_text())["summary"]["score"] == pytest.approx(9 / 11)


def test_a_node_lost_in_the_middle_of_a_run_changes_no_verdict(cluster, slow_set, tmp_path):
    node = cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    killer = _remove_once_grading(cluster, node)
    try:
        spread = _grade(slow_set, "sub", "gold", tmp_path / "ray.json", "--ray", cluster.address)
    finally:
        killer.join()
    assert killer.removed_while_grading, "the node went while its actor was running queries"
    assert spread.returncode == 0, spread.stderr[-2000:]
    assert _rows(tmp_path / "ray.json") == _slow_set_verdicts(), "its chunks were graded again elsewhere"


def test_chunks_that_cannot_be_graded_again_are_internal_errors_naming_the_node(cluster, slow_set, monkeypatch):
    """With no retry left, what the lost node held is `internal_error`, the rest graded; the CLI exits 1."""
    import ray

    from evaluators.grading import ray_run
    from evaluators.grading.instance import Options
    from evaluators.grading.run import grade

    monkeypatch.setattr(ray_run, "MAX_RETRIES", 0)
    node = cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    ray.init(address=cluster.address, log_to_driver=False)
    killer = _remove_once_grading(cluster, node)
    try:
        report = grade(slow_set / "sub", slow_set / "gold", options=Options(ves_iterations=0), ray_address="auto")
    finally:
        killer.join()
        ray.shutdown()
    assert killer.removed_while_grading
    lost = [i for i in report.instances if i.reason == "internal_error"]
    graded = [i for i in report.instances if i.reason != "internal_error"]
    assert lost and graded, [(i.instance_id, i.reason) for i in report.instances]
    assert all("Ray node" in i.detail and "was lost" in i.detail for i in lost), lost[0].detail
    assert all(i.score == (0.0 if int(i.instance_id[1:]) % 4 == 0 else 1.0) for i in graded)


def test_a_node_that_cannot_see_the_folders_stops_the_run_before_grading(cluster, tmp_path):
    """The gold folder hidden on one node (a mount namespace of its own, the folder covered by an empty tmpfs):
    a usage error naming the node and the folder, before any instance is graded."""
    ray_cli = Path(sys.executable).with_name("ray")
    probe = subprocess.run(["unshare", "--mount", "true"], capture_output=True)
    if probe.returncode != 0 or not ray_cli.exists():
        unavailable(f"a node with its own mounts needs unshare and root ({probe.stderr.decode()[:200]})")
    work = tmp_path / "here"
    shutil.copytree(ROOT / "example_submission_folder", work / "sub")
    shutil.copytree(ROOT / "gold", work / "gold")
    hide = (
        f"mount -t tmpfs none {work / 'gold'} && exec {ray_cli} start --address={cluster.address} --num-cpus=1 --block"
    )
    node = subprocess.Popen(
        ["unshare", "--mount", "--propagation", "private", "sh", "-c", hide],
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_for_nodes(cluster.address, 2)
        result = _grade(work, "sub", "gold", tmp_path / "r.json", "--ray", cluster.address)
    finally:
        os.killpg(node.pid, signal.SIGTERM)
        node.wait(timeout=60)
    assert result.returncode == 2, result.stderr[-2000:]
    assert f"does not see the gold folder {work / 'gold'}" in result.stderr and "--ray local" in result.stderr
    assert not (tmp_path / "r.json").exists()


class _remove_once_grading(threading.Thread):
    """Removes `node` from the cluster one second after a SQL worker appears under its raylet: its actor is
    then in the middle of grading (not starting up, not done)."""

    def __init__(self, cluster, node):
        super().__init__(daemon=True)
        self.cluster, self.node, self.removed_while_grading = cluster, node, False
        self.start()

    def run(self) -> None:
        from processes import descendants
        from ray._private import ray_constants

        raylet = self.node.all_processes[ray_constants.PROCESS_TYPE_RAYLET][0].process.pid
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if any("evaluators.execution.worker" in _command(p) for p in descendants(raylet)):
                time.sleep(1.0)
                self.removed_while_grading = True
                break
            time.sleep(0.1)
        self.cluster.remove_node(self.node)


def _command(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _wait_for_nodes(address: str, count: int) -> None:
    check = f"import ray, time; ray.init(address={address!r}, log_to_driver=False); t = time.time()\n"
    check += f"while sum(n['Alive'] for n in ray.nodes()) < {count} and time.time() - t < 90: time.sleep(0.5)\n"
    check += f"assert sum(n['Alive'] for n in ray.nodes()) >= {count}"
    subprocess.run([sys.executable, "-c", check], check=True, capture_output=True, timeout=120)
