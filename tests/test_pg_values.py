"""execution/pg_values.py: PostgreSQL values read through psycopg 3 as psycopg2 (the official BIRD and
LiveSQLBench scorers' driver) gives them, type by type, against real psycopg2 on the test server."""

from __future__ import annotations

import datetime as dt

import pytest
from dbservers import postgres_server  # noqa: F401  (the session's server)

from evaluators.execution.pg_values import PSYCOPG2_TYPES, load_as_psycopg2

psycopg2 = pytest.importorskip(
    "psycopg2", reason="psycopg2-binary (the dev extra) is what the values are checked against"
)

UUID = "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid"
# One expression per kind of value: each must come back as psycopg2 gives it (same type, same repr), or
# fail in both drivers.
EXPRESSIONS = [
    UUID,
    f"ARRAY[{UUID}]",
    "'10.0.0.1/8'::inet",
    "'10.0.0.0/8'::cidr",
    "ARRAY['10.0.0.1'::inet]",
    "ARRAY['10.0.0.0/8'::cidr]",
    "'08:00:2b:01:02:03'::macaddr",
    "ROW(1, 'a b')",
    "ARRAY[ROW(1, 'a')]",
    "t FROM pgv_t AS t",
    "'infinity'::date",
    "'-infinity'::date",
    "'infinity'::timestamp",
    "'-infinity'::timestamp",
    "'infinity'::timestamptz",
    "'-infinity'::timestamptz",
    "ARRAY['infinity'::date]",
    "ARRAY['-infinity'::timestamp]",
    "ARRAY['infinity'::timestamptz, now()]",
    "ARRAY[date '2024-01-02']",
    "'5874897-12-31'::date",
    "'2024-01-01 12:00:00.5'::timestamp",
    "'2024-01-01 12:00+02'::timestamptz",
    "ARRAY['2024-01-01 12:00+02'::timestamptz]",
    "'12:00+02'::timetz",
    "ARRAY[1.5::numeric, 2]",
    "1.234::numeric",
    "'NaN'::numeric",
    "ARRAY[1, 2]",
    "ARRAY[ARRAY[1, 2], ARRAY[3, 4]]",
    "ARRAY['x', 'a\"b,c']",
    "ARRAY[1.5::float8]",
    "1.1::real",
    "ARRAY[true, NULL]",
    '\'{"a": 1.5, "b": [1, 2.25]}\'::json',
    "'{\"a\": 1.5}'::jsonb",
    "ARRAY['{\"a\": 1}'::jsonb]",
    "'1 mon 2 days 03:04:05'::interval",
    "'-1 year'::interval",
    "ARRAY['1 day'::interval]",
    "12.34::money",
    "ARRAY[12.34::money]",
    "'ok'::pgv_mood",
    "ARRAY['ok'::pgv_mood]",
    "'{[1,5)}'::int4multirange",
    "'(1,2)'::point",
    "'101'::varbit",
    "'<a/>'::xml",
    "'pg_class'::regclass",
    "'abc'::char(5)",
    "'a b'::tsvector",
    "9223372036854775807::bigint",
]


@pytest.fixture(scope="module")
def drivers(postgres_server):  # noqa: F811
    import psycopg

    with postgres_server.admin() as con:
        con.execute("DROP TYPE IF EXISTS pgv_mood; CREATE TYPE pgv_mood AS ENUM ('sad', 'ok')")
        con.execute("DROP TABLE IF EXISTS pgv_t; CREATE TABLE pgv_t (a int, b text); INSERT INTO pgv_t VALUES (1, 'a')")
    options = {"host": "127.0.0.1", "port": postgres_server.port, "user": "postgres", "dbname": "postgres"}
    old, new = psycopg2.connect(**options), psycopg.connect(**options, autocommit=True)
    load_as_psycopg2(new)
    yield old, new
    old.close()
    new.close()


def _value(con, expression: str):
    try:
        cursor = con.cursor()
        cursor.execute("SELECT " + expression)
        value = cursor.fetchall()[0][0]
    except Exception:  # noqa: BLE001  (both drivers must fail; their words differ)
        if hasattr(con, "rollback"):
            con.rollback()
        return "error"
    return type(value).__name__, repr(value)


@pytest.mark.parametrize("expression", EXPRESSIONS)
def test_each_value_is_the_one_psycopg2_gives(drivers, expression):
    old, new = drivers
    assert _value(new, expression) == _value(old, expression)


def test_the_types_psycopg2_casts_are_psycopg2s_own():
    import psycopg2.extensions

    assert set(psycopg2.extensions.string_types) == PSYCOPG2_TYPES


def test_infinity_is_read_on_every_connection_and_ranges_stay_psycopg3s(drivers):
    _, new = drivers
    assert new.execute("SELECT 'infinity'::timestamptz").fetchone()[0] == dt.datetime.max.replace(tzinfo=dt.UTC)
    assert type(new.execute("SELECT '[1,5)'::int4range").fetchone()[0]).__name__ == "Range"  # documented
