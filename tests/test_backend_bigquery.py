"""BigQuery backend against the local emulator (bqemulator), through the official client.

What the emulator cannot do (tests/emulators/README.md): it has no cost model (dry runs
report 0 bytes, maximum_bytes_billed is ignored), it runs each query inside the HTTP
request and serves nothing else meanwhile, and cancel is a no-op.  So:
- the cost cap is tested through a small recording proxy that reports a large dry-run
  estimate, which is the number our own cap check reads;
- the timeout test shows the worker is killed at timeout + grace, then restarts the
  emulator, the only thing that stops its runaway query.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlparse

import pandas as pd
import pytest
from hostile import HOSTILE

from evaluators.errors import Location
from evaluators.execution import worker
from evaluators.execution.backends.base import Request
from evaluators.execution.backends.settings import BigQuerySettings
from evaluators.execution.executor import ExecConfig, Executor, run_sql
from evaluators.specs import GoldInstance, Spec

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT_S = 2.0
LONG_QUERY = (
    "SELECT SUM(MOD(a * b, 7)) AS s FROM UNNEST(GENERATE_ARRAY(1, 30000)) AS a "
    "CROSS JOIN UNNEST(GENERATE_ARRAY(1, 30000)) AS b"
)


def gold(instance_id, db, temporal=False):
    spec = Spec("table_match", {"gold": "result.csv"}, temporal=temporal)
    return GoldInstance(instance_id, (spec,), {"type": "Bigquery", "db": db}, Location("spider2_eval.jsonl", 1))


@pytest.fixture
def no_google_env(monkeypatch):
    monkeypatch.delenv("GOOGLE_APPLICATION_CREDENTIALS", raising=False)


@pytest.fixture
def dataset(bigquery_emulator):
    """A fresh dataset with a small table; the emulator is shared by the whole session."""
    client = bigquery_emulator.client()
    name = f"grading_{uuid.uuid4().hex[:8]}"
    client.create_dataset(name)
    client.query(
        f"CREATE TABLE {name}.orders AS SELECT 1 AS id, 'ann' AS name, 9.5 AS amount UNION ALL SELECT 2, 'bob', 3.25"
    ).result()
    return name


def make_config(tmp_path, emulator, **overrides):
    values = dict(
        output_dir=tmp_path / "out",
        credentials_dir=tmp_path / "no-credentials",
        timeout_s=TIMEOUT_S,
    )
    engine = dict(endpoint=emulator.endpoint, project=emulator.project)
    engine.update({k: overrides.pop(k) for k in ("endpoint", "max_bytes_billed") if k in overrides})
    return ExecConfig(**{**values, **overrides}, bigquery=BigQuerySettings(**engine))


def test_predicted_sql_runs_on_the_emulator(tmp_path, bigquery_emulator, dataset, no_google_env):
    config = make_config(tmp_path, bigquery_emulator)
    instance = gold("bq1", f"{bigquery_emulator.project}.{dataset}")
    result = Executor(config).run_prediction(instance, "```sql\nSELECT id, name, amount FROM orders ORDER BY id\n```")
    assert result.ok and result.backend == "bigquery", result.detail
    frame = pd.read_csv(result.csv_path)
    assert frame.to_dict("list") == {"id": [1, 2], "name": ["ann", "bob"], "amount": [9.5, 3.25]}
    assert result.first_cell == 1
    assert result.bytes_processed == 0  # reported; the emulator counts no bytes


def test_a_bare_dataset_takes_the_configured_project(tmp_path, bigquery_emulator, dataset, no_google_env):
    result = Executor(make_config(tmp_path, bigquery_emulator)).run_prediction(
        gold("bq2", dataset), "SELECT count(*) AS n FROM orders"
    )
    assert result.ok and result.first_cell == 2


def test_engine_errors_are_one_clean_line(tmp_path, bigquery_emulator, dataset, no_google_env):
    result = Executor(make_config(tmp_path, bigquery_emulator)).run_prediction(gold("bq3", dataset), "SELEC 1")
    assert result.reason == "exec_error"
    assert "syntax error" in result.detail.lower() and "\n" not in result.detail and "http://" not in result.detail


def test_temporal_gold_is_cached_and_refreshed(tmp_path, bigquery_emulator, dataset, no_google_env):
    gold_dir = tmp_path / "gold"
    (gold_dir / "bqt").mkdir(parents=True)
    (gold_dir / "bqt" / "gold.sql").write_text("SELECT id, name FROM orders ORDER BY id")
    (gold_dir / "bqt" / "result.csv").write_text("id,name\n1,ann\n2,bob\n")
    instance = gold("bqt", dataset, temporal=True)
    config = make_config(tmp_path, bigquery_emulator)

    live = Executor(config).temporal_gold(instance, gold_dir, "result.csv")
    assert (live.ok, live.source, live.drifted) == (True, "live", False), live.detail
    assert live.csv_path.is_relative_to(config.output_dir.resolve() / "gold_cache" / "bigquery")

    bigquery_emulator.client().query(f"INSERT INTO {dataset}.orders VALUES (3, 'cy', 1.0)").result()
    cached = Executor(config).temporal_gold(instance, gold_dir, "result.csv")
    assert cached.source == "cached" and cached.cached_at and cached.drifted is False  # nothing ran

    refreshed = Executor(make_config(tmp_path, bigquery_emulator, refresh_gold=True)).temporal_gold(
        instance, gold_dir, "result.csv"
    )
    assert refreshed.source == "live" and refreshed.drifted is True
    assert pd.read_csv(refreshed.csv_path)["name"].tolist() == ["ann", "bob", "cy"]


def test_write_statements_are_refused(tmp_path, bigquery_emulator, dataset, no_google_env):
    config = make_config(tmp_path, bigquery_emulator)
    for sql in (
        "DROP TABLE orders",
        "SELECT 1; DROP TABLE orders",
        "DELETE FROM orders WHERE TRUE",
        *(h.format(t="orders") for h in HOSTILE),
    ):
        result = Executor(config).run_prediction(gold("bqw", dataset), sql)
        # What sqlglot cannot parse goes to the dry run, which must say SELECT: here it fails there.
        refused = "only one read-only query" in result.detail or "Syntax error" in result.detail
        assert result.reason == "exec_error" and refused, (sql, result.detail)
    assert bigquery_emulator.client().get_table(f"{dataset}.orders").num_rows == 2


def test_missing_credentials_fail_only_that_instance(tmp_path, no_google_env):
    config = ExecConfig(output_dir=tmp_path / "out", credentials_dir=tmp_path / "empty", timeout_s=TIMEOUT_S)
    local = GoldInstance("local", (), {"type": "DuckDB"}, Location("g", 2))
    results = Executor(config).run_predictions([(gold("cloud", "proj.ds"), "SELECT 1"), (local, "SELECT 1")], jobs=2)
    assert [r.reason for r in results] == ["credentials_missing", "ok"]
    assert "bigquery_credential.json" in results[0].detail and "GOOGLE_APPLICATION_CREDENTIALS" in results[0].detail


def test_a_broken_key_never_shows_its_content(tmp_path, no_google_env):
    secret = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7-not-a-real-key"
    creds = tmp_path / "credentials"
    creds.mkdir()
    (creds / "bigquery_credential.json").write_text(
        json.dumps(
            {
                "type": "service_account",
                "project_id": "p",
                "private_key_id": "k1",
                "client_email": "a@p.iam",
                "private_key": f"-----BEGIN PRIVATE KEY-----\n{secret}\n-----END PRIVATE KEY-----\n",
                "token_uri": "https://oauth2.googleapis.com/token",
            }
        )
    )
    result = run_sql(
        "bigquery", "p.d", "SELECT 1", ExecConfig(tmp_path / "out", credentials_dir=creds), tmp_path / "r.csv"
    )
    assert not result.ok and result.reason == "credentials_missing"
    assert secret[:20] not in result.detail


def test_missing_extra_names_the_pip_command(tmp_path):
    """A sitecustomize hides google.cloud.bigquery from the grader and its workers alike."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import sys\nsys.modules['google.cloud.bigquery'] = None\n")
    script = (
        "from pathlib import Path\nfrom evaluators.execution.executor import ExecConfig, run_sql\n"
        "from evaluators.execution.backends.settings import BigQuerySettings\n"
        f"r = run_sql('bigquery', 'p.d', 'SELECT 1', ExecConfig(Path({str(tmp_path / 'out')!r}), "
        "bigquery=BigQuerySettings(endpoint='http://127.0.0.1:9', project='p')), "
        f"Path({str(tmp_path / 'r.csv')!r}))\nprint(r.reason)\nprint(r.detail)\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    reason, detail = done.stdout.strip().splitlines()
    assert reason == "missing_extra"
    assert detail == "google-cloud-bigquery is not installed (hint: pip install '.[bigquery]')"


# ------------------------------------------------------------------ cost cap, through a recording proxy


class BigQueryProxy:
    """Forwards to the emulator, records each request body, and can report a large dry-run estimate."""

    def __init__(self, target: str, dry_run_bytes: int | None = None):
        self.target = urlparse(target)
        self.dry_run_bytes = dry_run_bytes
        self.bodies: list[dict] = []
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self):
        self.server.shutdown()
        self.server.server_close()

    def _handler(self):
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def _forward(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                sent = json.loads(body) if body.strip().startswith(b"{") else {}
                proxy.bodies.append(sent)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "accept-encoding")}
                upstream = http.client.HTTPConnection(proxy.target.hostname, proxy.target.port, timeout=120)
                upstream.request(self.command, self.path, body=body or None, headers=headers)
                answer = upstream.getresponse()
                payload = proxy._rewrite(sent, answer.read())
                self.send_response(answer.status)
                for key, value in answer.getheaders():
                    if key.lower() not in ("content-length", "transfer-encoding", "connection"):
                        self.send_header(key, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _forward

            def log_message(self, *args):
                pass

        return Handler

    def _rewrite(self, sent: dict, payload: bytes) -> bytes:
        if self.dry_run_bytes is None or not sent.get("configuration", {}).get("dryRun"):
            return payload
        job = json.loads(payload)
        stats = job.setdefault("statistics", {})
        stats["totalBytesProcessed"] = str(self.dry_run_bytes)
        stats.setdefault("query", {})["totalBytesProcessed"] = str(self.dry_run_bytes)
        return json.dumps(job).encode()

    def job_bodies(self) -> list[dict]:
        return [b["configuration"] for b in self.bodies if "configuration" in b]


@pytest.fixture
def proxy_factory(bigquery_emulator):
    made = []

    def make(dry_run_bytes=None):
        made.append(BigQueryProxy(bigquery_emulator.endpoint, dry_run_bytes))
        return made[-1]

    yield make
    for proxy in made:
        proxy.close()


def test_dry_run_comes_first_and_the_job_carries_the_cap(
    tmp_path, bigquery_emulator, dataset, proxy_factory, no_google_env
):
    proxy = proxy_factory()
    config = make_config(tmp_path, bigquery_emulator, endpoint=proxy.endpoint, max_bytes_billed=5000)
    result = Executor(config).run_prediction(gold("bqc", dataset), "SELECT count(*) FROM orders")
    assert result.ok, result.detail
    dry, real = proxy.job_bodies()
    assert dry.get("dryRun") is True and "maximumBytesBilled" not in dry["query"]
    assert not real.get("dryRun") and real["query"]["maximumBytesBilled"] == "5000"


def test_cost_cap_refuses_a_query_before_it_runs(tmp_path, bigquery_emulator, dataset, proxy_factory, no_google_env):
    proxy = proxy_factory(dry_run_bytes=50 * 1024**3)  # as a dry run over a 50 GiB table would report
    config = make_config(tmp_path, bigquery_emulator, endpoint=proxy.endpoint)  # default cap 10 GiB
    result = Executor(config).run_prediction(gold("bqx", dataset), "SELECT * FROM orders")
    assert result.reason == "cost_limit" and not result.ok
    assert "53,687,091,200" in result.detail and "--max-bytes-billed" in result.detail
    assert [b.get("dryRun") for b in proxy.job_bodies()] == [True]  # the query itself never ran

    raised = make_config(tmp_path, bigquery_emulator, endpoint=proxy.endpoint, max_bytes_billed=100 * 1024**3)
    assert Executor(raised).run_prediction(gold("bqx", dataset), "SELECT * FROM orders").ok


# ------------------------------------------------------------------ timeout and cancel


def test_cancel_by_job_id_goes_through_a_fresh_worker(tmp_path, bigquery_emulator, no_google_env):
    job = bigquery_emulator.client().query(
        "SELECT 1 AS x", job_id=f"spider_grade_test_{uuid.uuid4().hex}", job_retry=None
    )
    job.result()
    config = make_config(tmp_path, bigquery_emulator)
    request = Request("bigquery", "", "", None, config.settings("bigquery"))
    answer = worker.cancel(request, {"job_id": job.job_id, "project": bigquery_emulator.project, "location": None})
    assert answer == f"cancel sent for job {job.job_id} (state now DONE)"  # the emulator had finished it


def test_timeout_kills_the_worker_stuck_in_the_emulator(tmp_path, bigquery_emulator, dataset, no_google_env):
    config = make_config(tmp_path, bigquery_emulator)
    workers = worker.pool()
    workers.shutdown()
    assert Executor(config).run_prediction(gold("warm", dataset), "SELECT 1").ok  # start-up not timed
    (warm,) = workers.idle
    started = time.monotonic()
    result = Executor(config).run_prediction(gold("bqlong", dataset), LONG_QUERY)
    elapsed = time.monotonic() - started
    try:
        assert result.reason == "timeout" and "worker killed" in result.detail
        assert TIMEOUT_S <= elapsed < TIMEOUT_S + 60  # timeout + kill grace, then killed
        with pytest.raises(ProcessLookupError):
            os.kill(warm.pid, 0)
    finally:
        # The emulator cannot cancel, and ignores SIGTERM while a query runs: only a kill stops it.
        os.killpg(bigquery_emulator.pid, signal.SIGKILL)
        bigquery_emulator.restart()
    after = run_sql("bigquery", None, "SELECT 5 AS x", make_config(tmp_path, bigquery_emulator), tmp_path / "a.csv")
    assert after.first_cell == 5, after.detail
