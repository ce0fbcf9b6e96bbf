"""The fast small-CSV reader gives exactly `pd.read_csv`'s frame, or bails out with None."""

import hashlib
import io
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import SHARED, requires_shared
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pandas._libs.parsers import STR_NA_VALUES

from evaluators.tables.quickcsv import MAX_BYTES, read_small
from evaluators.tables.read import TableReader

CORPUS_DIRS = [
    SHARED / "corpora" / "spider2-lite" / "gold" / "exec_result",
    *sorted((SHARED / "cases" / "dev" / "gold").glob("*/")),
    *sorted((SHARED / "cases" / "dev" / "submission").glob("*/")),
]


def pandas_frame(data: bytes):
    """`pd.read_csv` with all defaults, or None when it raises."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return pd.read_csv(io.BytesIO(data))
    except Exception:
        return None


def identical(fast: pd.DataFrame, expected: pd.DataFrame) -> bool:
    """A quick check stricter than `assert_same` (labels, dtypes and every cell's type and value, NaN only to
    NaN, the sign of zeros): True only where `assert_same` passes. Comparing 3,000 corpus files with pandas'
    asserters alone took most of this module's time."""
    if not (
        type(fast.index) is type(expected.index) is pd.RangeIndex
        and fast.index.equals(expected.index)
        and type(fast.columns) is type(expected.columns)
        and fast.columns.dtype == expected.columns.dtype
        and list(map(type, fast.columns)) == list(map(type, expected.columns))
        and list(fast.columns) == list(expected.columns)
        and fast.flags == expected.flags
    ):
        return False
    for position in range(expected.shape[1]):
        left, right = fast.iloc[:, position], expected.iloc[:, position]
        if left.dtype != right.dtype or not _same_cells(left.to_numpy(), right.to_numpy()):
            return False
    return True


def _same_cells(left: np.ndarray, right: np.ndarray) -> bool:
    if left.dtype != right.dtype or left.dtype.kind not in "biufO":
        return False
    if left.dtype.kind == "f":
        return np.array_equal(left, right, equal_nan=True) and np.array_equal(np.signbit(left), np.signbit(right))
    if left.dtype.kind != "O":
        return np.array_equal(left, right)
    plain = (str, int, float, bool)
    return all(
        type(a) is type(b) and isinstance(a, plain) and (a == b or (a != a and b != b))
        for a, b in zip(left, right, strict=True)
    )


# The quick check against the asserters it stands in for: it may refuse what they accept (they then decide),
# never the other way round.
ALTERED = {
    "an int column as floats": lambda f: f.assign(n=f["n"].astype(float)),
    "a zero's sign": lambda f: f.assign(x=[0.0, -0.0, np.nan]),
    "a NaN as None": lambda f: f.assign(t=["a", None, "c"]),  # pandas' text dtype keeps NaN: both accept
    "a text cell": lambda f: f.assign(t=["a", "B", np.nan]),
    "a number as text": lambda f: f.assign(t=["a", 1, np.nan]),
    "a column's name": lambda f: f.rename(columns={"t": "u"}),
    "the index": lambda f: f.set_axis([1, 2, 3]),
    "the columns' order": lambda f: f[["x", "n", "t"]],
}


def _asserters_pass(left: pd.DataFrame, right: pd.DataFrame) -> bool:
    try:
        pd.testing.assert_frame_equal(left, right, check_exact=True, check_column_type=True, check_flags=True)
    except AssertionError:
        return False
    return all(
        np.array_equal(np.signbit(left[c].to_numpy()), np.signbit(right[c].to_numpy()))
        for c in right.columns
        if right[c].dtype.kind == "f" and c in left.columns
    )


@pytest.mark.parametrize("change", ALTERED)
def test_the_quick_check_never_accepts_what_the_asserters_refuse(change):
    frame = pd.read_csv(io.StringIO("n,x,t\n1,0.0,a\n2,0.0,\n3,,c\n"))
    assert identical(frame, frame.copy()) and _asserters_pass(frame, frame.copy())
    altered = ALTERED[change](frame.copy())
    assert identical(altered, frame) == _asserters_pass(altered, frame)
    assert identical(frame, altered) == _asserters_pass(frame, altered)


def assert_same(fast: pd.DataFrame, expected: pd.DataFrame) -> None:
    if identical(fast, expected):
        return
    pd.testing.assert_frame_equal(
        fast, expected, check_exact=True, check_index_type=True, check_column_type=True, check_flags=True
    )
    assert type(fast.index) is type(expected.index) and type(fast.columns) is type(expected.columns)
    for name in expected.columns:  # assert_frame_equal takes -0.0 for 0.0
        left, right = fast[name].to_numpy(), expected[name].to_numpy()
        if left.dtype.kind == "f":
            assert np.array_equal(np.signbit(left), np.signbit(right)), name


def check(data: bytes) -> pd.DataFrame | None:
    """read_small's frame after checking it against pandas; None when it bailed."""
    fast = read_small(data)
    expected = pandas_frame(data)
    if expected is None:
        assert fast is None, f"pandas raises on {data!r} but read_small read it"
    elif fast is not None:
        assert_same(fast, expected)
    return fast


# --- the corpora ------------------------------------------------------------------------------


def _small_files() -> list[bytes]:
    """Distinct contents of the corpus CSV files under the size limit (the cases repeat many)."""
    seen = {}
    for folder in CORPUS_DIRS:
        for path in folder.glob("*.csv"):
            if path.stat().st_size <= MAX_BYTES:
                data = path.read_bytes()
                seen.setdefault(hashlib.sha1(data).digest(), data)
    return list(seen.values())


@requires_shared(CORPUS_DIRS[0])
def test_corpus_files_read_exactly_as_pandas_reads_them_and_most_take_the_fast_path():
    files = _small_files()
    fast = sum(check(data) is not None for data in files)
    share = fast / len(files)
    print(f"fast path read {fast} of {len(files)} distinct small corpus files ({share:.1%})")
    assert len(files) > 1000
    assert share >= 0.95  # measured 99.3%: the rest hold ints beyond int64, booleans or ragged rows


# --- random texts -----------------------------------------------------------------------------

# Tokens pandas reads plainly (the fast path should take them) and tokens it reads in its own way.
INTS = [
    "0",
    "7",
    "-3",
    "+5",
    "007",
    "-0",
    "+0",
    "-00",
    "123456789",
    "9007199254740993",
    "9223372036854775807",
    "-9223372036854775808",
]
BIG_INTS = [
    "9223372036854775808",
    "-9223372036854775809",
    "18446744073709551615",
    "18446744073709551616",
    "12345678901234567890",
    "0000000000000000000001",
]
FLOATS = [
    "21656.258430507405",
    "1.5",
    "-2.25",
    ".5",
    "5.",
    "-.5",
    "+.5e1",
    "-0.0",
    "0.0",
    "1e5",
    "1E-5",
    "2.5e+300",
    "1e400",
    "-1e400",
    "1e-400",
    "4.9e-324",
    "0.1",
    "1.7976931348623157e308",
    "3.14159265358979323846264338",
    "1.e3",
    "12345678901234567890.5",
    "0.30000000000000004",
]
ODD_FLOATS = ["1e", "1e+", ".", "inf", "-Infinity", "+inf", "INF", "Infinity", "1.#INF", "0x1A", "1d5"]
NAS = sorted(STR_NA_VALUES)
ODD_NAS = ["NAN", "Nan", "na", "+nan", " NA", "NA ", "nan ", '""']
BOOLS = ["True", "TRUE", "true", "False", "FALSE", "false", "tRUE", "yes", "no", "1", "0"]
TEXTS = [
    "abc",
    "hello world",
    " lead",
    "trail ",
    "١٢٣",
    "1_000",
    "٣.٥",
    "５",
    "1,000",
    'a"b',
    '"',
    "line\nbreak",
    "cr\r\nlf",
    "lone\rcr",
    "x\u2028y",
    "é",
    "日本",
    "-",
    "a,b",
    "1 2",
    "a.1",
    "Unnamed: 0",
    "tRUE",
    "yes",
]
ODD_TEXTS = [" 5", "5 ", "\t7", "1.5 ", " NaN", "\u00a05", "5\u3000", " ", "\t", "\x00", "\x1f"]
ALL = INTS + BIG_INTS + FLOATS + ODD_FLOATS + NAS + ODD_NAS + BOOLS + TEXTS + ODD_TEXTS
POOLS = [
    INTS,
    INTS,
    INTS + NAS,
    FLOATS,
    FLOATS,
    INTS + FLOATS + NAS,
    NAS,
    TEXTS,
    TEXTS + NAS,
    TEXTS + INTS + FLOATS,
    BOOLS + NAS,
    ALL,
]
NAMES = ["a", "b", "a", "", " ", "NA", "1", " x", "a.1", "Unnamed: 1", "é", "x y"]


def _encode(token: str, quoted: bool) -> str:
    """A field as written: quoted by the rules, or raw (which may break the file's shape)."""
    return '"' + token.replace('"', '""') + '"' if quoted else token


# Strategies made once: hypothesis validates every new strategy object, and one per cell cost more than the
# generation itself. The same objects draw the same values: the examples are the ones drawn before.
CELL = st.text(alphabet='ab1 .-e"\n,', max_size=4)
TOKENS = {id(pool): st.sampled_from(pool) for pool in [*POOLS, ALL]}
WEIRD_TOKENS = {key: st.one_of(tokens, CELL) for key, tokens in TOKENS.items()}
WIDTH, ONE_IN_5, ONE_IN_7, ONE_IN_41, ROWS, COIN = (
    st.integers(1, 4), st.integers(0, 4), st.integers(0, 6), st.integers(0, 40), st.integers(0, 6), st.booleans()
)  # fmt: skip
POOL, NAME, BLANKISH = st.sampled_from(POOLS), st.sampled_from(NAMES), st.sampled_from(["", "", " ", "\t", ","])
ENDS = {True: st.sampled_from(["\n", "\r\n", "\r"]), False: st.sampled_from(["\n", "\r\n"])}
TAIL = {end: st.sampled_from([end, "", end + end]) for end in ["\n", "\r\n", "\r"]}
PREFIX = st.sampled_from(["", "", "", "\n", "\ufeff"])


@st.composite
def csv_texts(draw) -> bytes:
    width = draw(WIDTH)
    pools = [draw(POOL) for _ in range(width)]
    weird = draw(ONE_IN_5) == 0  # now and then: stray quotes, ragged rows, odd line ends

    def field(pool):
        if draw(ONE_IN_41) == 0:
            pool = ALL  # a stray token of another kind
        token = draw((WEIRD_TOKENS if weird else TOKENS)[id(pool)])
        safe = not any(char in token for char in ',"\r\n')
        return _encode(token, draw(COIN) if safe or weird else True)

    names = [draw(NAME) for _ in range(width)]
    if not weird:  # mostly names pandas keeps, so that the rest of the file gets compared
        names = [name if name and name not in names[:k] else f"c{k}" for k, name in enumerate(names)]
    header = [_encode(name, draw(COIN)) for name in names]
    lines = [",".join(header)]
    for _ in range(draw(ROWS)):
        row = [field(pool) for pool in pools]
        if weird and draw(ONE_IN_5) == 0:
            row = row[:-1] if draw(COIN) else row + [field(ALL)]
        lines.append(",".join(row))
        if draw(ONE_IN_7) == 0:
            lines.append(draw(BLANKISH))
    end = draw(ENDS[weird])
    text = end.join(lines) + draw(TAIL[end])
    prefix = draw(PREFIX) if weird else ""
    return (prefix + text).encode()


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(csv_texts())
def test_random_texts_read_as_pandas_reads_them_or_bail(data):
    check(data)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=60) | st.text(alphabet='a1.,"\n\r -e\t', max_size=40).map(str.encode))
def test_arbitrary_bytes_read_as_pandas_reads_them_or_bail(data):
    check(data)


# --- decisions --------------------------------------------------------------------------------


def _fast(text: str) -> pd.DataFrame:
    frame = check(text.encode())
    assert frame is not None, f"bailed on {text!r}"
    return frame


def test_ints_with_na_become_floats_cast_from_the_ints():
    frame = _fast("x,y\n1,-0\nNA,\n3,4\n")
    assert frame.dtypes.tolist() == [np.float64, np.float64]
    assert not np.signbit(frame["y"].to_numpy()[0])  # pandas casts int 0, not float('-0')


def test_a_column_with_one_word_is_text_and_keeps_numbers_as_written():
    frame = _fast("x\n007\n2.50\nabc\nnan\n")
    assert isinstance(frame["x"].dtype, pd.StringDtype)
    assert frame["x"].tolist()[:3] == ["007", "2.50", "abc"] and pd.isna(frame["x"].iloc[3])


def test_long_mantissas_round_as_pandas_rounds():
    frame = _fast("x\n21656.258430507405\n0.1\n3.14159265358979323846264338\n")
    assert frame["x"].tolist() == [21656.258430507405, 0.1, 3.141592653589793]


def test_quoted_fields_blank_lines_and_crlf():
    frame = _fast('name,n\r\n"a,b",1\r\n\r\n"say ""hi""\r\nthere",2\r\n"","3"\r\n')
    assert frame["name"].tolist()[:2] == ["a,b", 'say "hi"\r\nthere'] and frame["n"].dtype == np.int64


def test_a_header_alone_gives_empty_object_columns():
    frame = _fast("a,b\n")
    assert frame.shape == (0, 2) and (frame.dtypes == np.dtype(object)).all()


@pytest.mark.parametrize(
    "text",
    [
        "x\n9223372036854775808\n",  # uint64 in pandas
        "x\n-9223372036854775809\n",  # Python ints in an object column
        "x\nTrue\nFalse\n",  # booleans
        "x\ntrue\nabc\n",  # booleans are bailed on wherever they are
        "x\n 5\nabc\n",  # pandas strips ' 5' when typing
        "x\ninf\n",  # an infinity
        "x\nNAN\n",  # a NaN spelling pandas keeps as text
        "x,y\n1,2,3\n",  # ragged: the first field becomes the index
        "x,x\n1,2\n",  # renamed duplicate
        ",y\n1,2\n",  # renamed empty name
        "x\n1\n  \n2\n",  # a whitespace-only line pandas skips
        'x\n"a"b\n',  # a stray quote
        "x\r1\r",  # lone CR line ends
        "\ufeffx\n1\n",  # BOM
        "x\n1\x002\n",  # NUL
        "",  # empty: pandas raises
        "\n\n",  # no columns: pandas raises
    ],
)
def test_bails_on_what_it_does_not_reproduce(text):
    assert read_small(text.encode()) is None
    check(text.encode())


def test_bails_on_undecodable_and_large_files():
    assert read_small(b"x\n\xff\n") is None
    assert read_small(b"x\n" + b"1\n" * MAX_BYTES) is None


# --- the reader -------------------------------------------------------------------------------


def test_the_table_reader_takes_the_fast_path_for_both_ways_of_reading(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("a,b\nx,1.5\ny,\n")
    reader = TableReader("unreadable_prediction")
    frame = reader.csv(path, low_memory=True)
    assert reader.csv(path, low_memory=False) is frame
    assert_same(frame, pd.read_csv(path))


def test_only_public_pandas_api_is_used():
    """A pandas release cannot break reading: no private constructors or modules."""
    from evaluators.tables import quickcsv

    source = Path(quickcsv.__file__).read_text()
    assert not [
        word
        for word in ("_from_mgr", "_simple_new", "create_block_manager", "pandas._libs", "pandas.core")
        if word in source
    ]
    data = b"name,n,share,city\nann,3,0.5,paris\nbob,4,-0.0,\n"
    assert_same(read_small(data), pandas_frame(data))
