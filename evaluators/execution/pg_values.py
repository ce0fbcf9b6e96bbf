"""PostgreSQL values as psycopg2 gives them, read through psycopg 3: the one conversion every official
PostgreSQL path uses (BIRD's and LiveSQLBench's scorers run psycopg2; the project runs psycopg 3 and never
needs psycopg2).

psycopg2 turns a value into a Python object only for the types it has a typecaster for
(`psycopg2.extensions.string_types`, PSYCOPG2_TYPES below); every other type comes back as the server's
text.  So, on a connection, `load_as_psycopg2`:
- loads as text every built-in type psycopg 3 would make an object of and psycopg2 would not: uuid, inet
  and cidr (inet[] and cidr[] are lists of texts), ROW values (`'(1,a)'`), multiranges, and the arrays
  psycopg2 has no caster for (uuid[], money[], record[] ... are one text `'{...}'`);
- loads `infinity` dates and timestamps as `date.max` / `datetime.max` (`-infinity` as min), where
  psycopg 3 raises "date too large", and fails on one inside an array, as psycopg2 does;
- gives a timestamptz a fixed-offset `datetime.timezone` (psycopg 3: the session's `ZoneInfo`).
Two differences remain (docs/livesql.md): range types are psycopg 3's `Range` (psycopg2 makes its own
NumericRange / DateRange classes), and bytea is `bytes` (psycopg2: a `memoryview`, equal and hashed alike,
which could not be sent from a worker process).  Text format only, the cursor's default.
"""

from __future__ import annotations

import datetime as dt

# psycopg2 2.9's typecasters (`sorted(psycopg2.extensions.string_types)` after `import psycopg2`; the tests
# compare): numbers, texts, bool, bytea, oid, json/jsonb, dates, times, intervals, their arrays, inet[],
# cidr[], macaddr[], and the six built-in ranges with their arrays.
PSYCOPG2_TYPES = frozenset(
    {16, 17, 18, 19, 20, 21, 23, 25, 26, 114, 199, 651, 700, 701, 704, 705, 1000, 1001, 1002, 1003, 1005}
    | {1006, 1007, 1009, 1013, 1014, 1015, 1016, 1021, 1022, 1028, 1040, 1041, 1042, 1043, 1082, 1083, 1114}
    | {1115, 1182, 1183, 1184, 1185, 1186, 1187, 1231, 1266, 1270, 1700, 3802, 3807, 3904, 3905, 3906, 3907}
    | {3908, 3909, 3910, 3911, 3912, 3913, 3926, 3927}
)


def load_as_psycopg2(con) -> None:
    """Register on the psycopg 3 connection `con` the loaders that give psycopg2's values."""
    import psycopg
    from psycopg.types.range import RangeInfo
    from psycopg.types.string import TextLoader

    for info in psycopg.postgres.types:
        if isinstance(info, RangeInfo):
            continue
        for oid in (info.oid, info.array_oid):
            if oid and oid not in PSYCOPG2_TYPES:
                con.adapters.register_loader(oid, TextLoader)
    load_infinity(con)
    _no_infinity_in_arrays(con)
    _load_fixed_offsets(con)


def load_infinity(con) -> None:
    """`infinity` / `-infinity` dates and timestamps as psycopg2 loads them (max / min; timestamptz in UTC)
    instead of psycopg 3's "date too large" error: every PostgreSQL connection of the project has these."""
    from psycopg.types.datetime import DateLoader, TimestampLoader, TimestamptzLoader

    utc = dt.UTC
    con.adapters.register_loader("date", _infinite(DateLoader, dt.date.max, dt.date.min))
    con.adapters.register_loader("timestamp", _infinite(TimestampLoader, dt.datetime.max, dt.datetime.min))
    con.adapters.register_loader(
        "timestamptz",
        _infinite(TimestamptzLoader, dt.datetime.max.replace(tzinfo=utc), dt.datetime.min.replace(tzinfo=utc)),
    )


def _no_infinity_in_arrays(con) -> None:
    """psycopg2 cannot parse `infinity` inside a date or timestamp array (DataError "unable to parse
    date"), so such a result is an execution error there: the same here."""
    import psycopg

    for name in ("date", "timestamp", "timestamptz"):
        oid = con.adapters.types[name].array_oid

        def refuse(data: bytes, name=name) -> None:
            if b"infinity" in data:
                raise psycopg.DataError(f"unable to parse {name} (psycopg2 reads no infinity in an array)")

        con.adapters.register_loader(oid, _wrapping(con.adapters.get_loader(oid, 0), before=refuse))


def _wrapping(base, before=None, after=None):
    """A Python loader around `base` (psycopg's C loaders do not call a subclass's `load`): `before` sees
    the raw text, `after` maps the value."""
    from psycopg.adapt import Loader

    class Wrapping(Loader):
        def __init__(self, oid, context=None):
            super().__init__(oid, context)
            self.inner = base(oid, context)

        def load(self, data):
            if before is not None:
                before(bytes(data))
            value = self.inner.load(data)
            return after(value) if after is not None and value is not None else value

    return Wrapping


def _infinite(base, high, low):
    class Loader(base):
        def load(self, data):
            text = bytes(data)
            if text == b"infinity":
                return high
            if text == b"-infinity":
                return low
            return super().load(data)

    return Loader


def _load_fixed_offsets(con) -> None:
    oid = con.adapters.types["timestamptz"].oid
    fixed = _wrapping(con.adapters.get_loader(oid, 0), after=lambda v: v.replace(tzinfo=dt.timezone(v.utcoffset())))
    con.adapters.register_loader(oid, fixed)
