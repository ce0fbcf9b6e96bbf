"""Smoke tests: the official BigQuery and Snowflake clients against the local emulators.

The first run on a machine installs the emulators in the temp folder (a few minutes);
later runs reuse them and each server starts in a second or two.
"""

from __future__ import annotations

import io
import os
import socket
import sys
import uuid

import pytest
from emulators.servers import EmulatorStartError, SnowflakeEmulator

# Same name as in tests/conftest.py, so the fixtures are registered (and the
# servers started) once per session even when both ask for them.
pytest_plugins = ["emulators.fixtures"]

# The BigQuery client nags about optional packages we deliberately do not use.
quiet_bigquery = pytest.mark.filterwarnings(
    "ignore:BigQuery Storage module not found",
    "ignore:Loading pandas DataFrame into BigQuery",
    "ignore:Retrieving DataFrames via google-cloud-bigquery is deprecated",
)


def _unique(prefix: str) -> str:
    """Tests share one server per session, so each uses its own namespace."""
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


# -- BigQuery ---------------------------------------------------------------


@quiet_bigquery
def test_bigquery_create_insert_and_query_back(bigquery_emulator):
    client = bigquery_emulator.client()
    dataset = _unique("smoke")
    client.create_dataset(dataset)
    table = f"`{bigquery_emulator.project}.{dataset}.people`"

    client.query(f"CREATE TABLE {table} AS SELECT 1 AS id, 'ada' AS name UNION ALL SELECT 2, 'bob'").result()
    client.query(f"INSERT INTO {table} (id, name) VALUES (3, 'cy')").result()
    frame = client.query(f"SELECT id, name FROM {table} ORDER BY id").to_dataframe()

    assert frame["id"].tolist() == [1, 2, 3]
    assert frame["name"].tolist() == ["ada", "bob", "cy"]
    assert [t.table_id for t in client.list_tables(dataset)] == ["people"]


@quiet_bigquery
def test_bigquery_load_csv_and_streaming_insert(bigquery_emulator):
    from google.cloud import bigquery

    client = bigquery_emulator.client()
    dataset = client.create_dataset(_unique("load"))
    schema = [bigquery.SchemaField("x", "INT64"), bigquery.SchemaField("y", "STRING")]

    load = client.load_table_from_file(
        io.BytesIO(b"x,y\n1,a\n2,b\n"),
        dataset.table("from_csv"),
        job_config=bigquery.LoadJobConfig(schema=schema, source_format="CSV", skip_leading_rows=1),
    )
    load.result()
    streamed = client.create_table(bigquery.Table(dataset.table("streamed"), schema=schema))
    assert client.insert_rows(streamed, [(3, "c")]) == []

    frame = client.query(
        f"SELECT x, y FROM `{dataset.dataset_id}.from_csv` "
        f"UNION ALL SELECT x, y FROM `{dataset.dataset_id}.streamed` ORDER BY x"
    ).to_dataframe()
    assert list(frame.itertuples(index=False, name=None)) == [(1, "a"), (2, "b"), (3, "c")]


@quiet_bigquery
def test_bigquery_missing_table_raises_not_found(bigquery_emulator):
    from google.api_core.exceptions import NotFound

    client = bigquery_emulator.client()
    dataset = client.create_dataset(_unique("empty")).dataset_id
    with pytest.raises(NotFound, match=f"Table {bigquery_emulator.project}.{dataset}.nope "):
        client.query(f"SELECT * FROM `{bigquery_emulator.project}.{dataset}.nope`").result()
    with pytest.raises(NotFound, match="Dataset .*:nowhere was not found"):
        client.query(f"SELECT * FROM `{bigquery_emulator.project}.nowhere.nope`").result()


@quiet_bigquery
def test_bigquery_datasets_of_other_projects_are_queryable(bigquery_emulator):
    # Spider 2.0 gold SQL reads e.g. `bigquery-public-data.<dataset>.<table>`.
    client = bigquery_emulator.client()
    dataset = f"bigquery-public-data.{_unique('public')}"
    client.create_dataset(dataset)
    client.query(f"CREATE TABLE `{dataset}.trips` AS SELECT 7 AS id").result()

    rows = client.query(f"SELECT id FROM `{dataset}.trips`").result()

    assert [row.id for row in rows] == [7]


# -- Snowflake --------------------------------------------------------------


def test_snowflake_create_insert_and_select_back(snowflake_emulator):
    database = _unique("SMOKE").upper()
    with snowflake_emulator.connect() as conn:
        cur = conn.cursor()
        cur.execute(f"CREATE DATABASE {database}")
        cur.execute(f"CREATE SCHEMA {database}.SALES")
        cur.execute(f"CREATE TABLE {database}.SALES.ORDERS (id INT, item VARCHAR, qty INT)")
        cur.execute(f"INSERT INTO {database}.SALES.ORDERS VALUES (1, 'apple', 3), (2, 'pear', 5)")
        cur.execute(
            f"INSERT INTO {database}.SALES.ORDERS (id, item, qty) VALUES (%s, %s, %s)",
            (3, "fig", 7),
        )
        cur.execute(f"SELECT id, item, qty FROM {database}.SALES.ORDERS ORDER BY id")
        rows = cur.fetchall()
        assert [d.name for d in cur.description] == ["ID", "ITEM", "QTY"]

    assert rows == [(1, "apple", 3), (2, "pear", 5), (3, "fig", 7)]


def test_snowflake_connections_share_one_database(snowflake_emulator):
    database = _unique("SHARED").upper()
    with snowflake_emulator.connect(database=database, schema="PUBLIC") as writer:
        writer.cursor().execute("CREATE TABLE T AS SELECT 42 AS ANSWER")
    with snowflake_emulator.connect(database=database, schema="PUBLIC") as reader:
        assert reader.cursor().execute("SELECT ANSWER FROM T").fetchall() == [(42,)]


# -- lifecycle --------------------------------------------------------------


def _port_is_free(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) != 0


def test_restart_gives_a_fresh_working_server_and_stop_kills_it_and_frees_the_port():
    """One server started for both checks (each start of the emulator costs seconds)."""
    server = SnowflakeEmulator().start()
    try:
        first_pid = server.pid
        server.restart()
        assert server.pid != first_pid
        with server.connect() as conn:
            assert conn.cursor().execute("SELECT 1 + 1").fetchall() == [(2,)]
        pid, port = server.pid, server.port
        assert not _port_is_free(port)
    finally:
        server.stop()

    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert _port_is_free(port)
    server.stop()  # idempotent


class _CrashingEmulator(SnowflakeEmulator):
    """Stands in for a server that dies at startup (e.g. a broken install)."""

    start_attempts = 1

    def _ensure_installed(self) -> None:
        pass

    def _command(self) -> list[str]:
        return [sys.executable, "-c", "import sys; print('boom: no spatial'); sys.exit(3)"]


class _SilentEmulator(_CrashingEmulator):
    """Stands in for a server that never answers."""

    def _command(self) -> list[str]:
        return [sys.executable, "-c", "import time; print('stuck', flush=True); time.sleep(60)"]


def test_start_failure_reports_exit_code_and_log_tail():
    with pytest.raises(EmulatorStartError, match=r"exited with code 3(.|\n)*boom: no spatial"):
        _CrashingEmulator().start()


def test_start_timeout_reports_log_tail_and_kills_the_process():
    server = _SilentEmulator(startup_timeout=1.5)
    with pytest.raises(EmulatorStartError, match=r"did not answer within 1.5s(.|\n)*stuck"):
        server.start()
    assert not server.running
