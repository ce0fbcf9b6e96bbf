"""Shared test setup: `tests/` on the path for helper modules, emulator fixtures when present, and the
xdist groups that keep tests which must not overlap on one worker (the suite runs on 2 workers: setup.cfg)."""

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
# PYTHONDONTWRITEBYTECODE (set on the machines that run this suite) made each xdist worker rewrite and compile every
# test module again at collection, 6 CPU seconds a worker: pytest keeps its rewritten modules when this is off.
sys.dont_write_bytecode = False

import hypothesis_profiles  # noqa: E402  (tests/ is on the path from the line above)

hypothesis_profiles.register()  # hypothesis: `fixed` (derandomised) unless HYPOTHESIS_PROFILE says otherwise
ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"

pytest_plugins = ["dbservers"]
if (Path(__file__).parent / "emulators" / "fixtures.py").exists():
    pytest_plugins.append("emulators.fixtures")


def requires_shared(path: Path):
    """A mark for tests that read ../shared: skipped with a visible reason on a user's machine, failed in CI."""
    import os

    import pytest

    if path.exists():
        return pytest.mark.usefixtures()
    if os.environ.get("CI"):
        return pytest.mark.usefixtures("shared_missing_in_ci")
    return pytest.mark.skip(reason=f"{path} is not beside the project (../shared); CI fails instead of skipping")


def _shared_missing_in_ci():
    import pytest

    pytest.fail("../shared is missing, and CI must test against it")


try:
    import pytest as _pytest

    shared_missing_in_ci = _pytest.fixture(_shared_missing_in_ci)
except ImportError:  # pragma: no cover
    pass


# xdist (`--dist loadgroup`): tests that measure time or signals run one after another on one worker, so two of
# them never share the machine's cores; Ray tests likewise, since `--ray auto` finds any cluster on the machine.
# Everything else goes to whichever worker is free. Each worker is its own session with its own servers.
# Files with a costly module fixture (an emulator, generated servers' databases) that timing tests use too run
# wholly in the timing group: split between two workers, each worker built the fixture (15 s of the suite).
TIMING_FILES = {"test_signals.py", "test_backend_bigquery.py", "test_backend_snowflake.py", "test_livesql_postgres.py"}
TIMING_NAMES = re.compile(
    r"timeout|time_out|ctrl_c|sig(term|int|hup|kill)|runaway|interrupt|stopped|stops_|killed|_cap\b"
)
RAY_FILES = {"test_ray_cluster.py", "test_rewards_ray.py"}
RAY_NAMES = re.compile(r"(^|_)ray(_|$)")


# Files whose module fixtures cost seconds (the 2,535 reference cases graded, a JVM, a browser, an emulator,
# generated server databases): their tests stay on one worker, so each fixture is built once, not per worker.
FIXTURE_FILES = {
    "test_reference_cases.py",
    "test_rewards_scienceworld.py",
    "test_report_pages.py",
    "test_interact_parity.py",
    "test_livesql_postgres_privileges.py",
    "test_pg_values.py",
}

# Single tests of ten seconds or more (real clients, whole corpora): handed out first, so that neither worker is
# left running one of them alone at the end. xdist hands out the groups above first (the largest first), then
# the other tests in collection order, which put verl's 54 s test last of all.
EARLY_FILES = [  # the longest first
    "test_verl_managers.py",
    "test_trl_grpo.py",
    "test_import_spider2_lite.py",
    "test_quickcsv.py",
    "test_perf_correctness.py",
    "test_rl_bench_smoke.py",
    "test_bench_smoke.py",
]


def xdist_group_of(file_name: str, test_name: str) -> str | None:
    if file_name in RAY_FILES or RAY_NAMES.search(test_name):
        return "ray"
    if file_name in TIMING_FILES or TIMING_NAMES.search(test_name):
        return "timing"
    if file_name in FIXTURE_FILES:
        return file_name
    return None


def pytest_configure(config):
    config.addinivalue_line("markers", "xdist_group(name): tests of one group run on one xdist worker, in turn")
    if not hasattr(config, "workerinput"):
        _compile_the_package()


def _compile_the_package() -> None:
    """An editable install leaves evaluators/ uncompiled, and with PYTHONDONTWRITEBYTECODE set (as on the machines
    that run this suite) every process the tests start (CLI runs, SQL workers, pool processes) compiled the whole
    package again, a third of a CPU second or more each. Compiled once here, they read the bytecode."""
    sys.path.insert(0, str(ROOT))
    from bench.installed import byte_compiled

    byte_compiled()


try:
    import pytest as _pytest

    @_pytest.hookimpl(tryfirst=True)  # before xdist reads the marks (it appends the group to the node id)
    def pytest_collection_modifyitems(config, items):
        for item in items:
            if item.get_closest_marker("xdist_group"):
                continue
            group = xdist_group_of(item.path.name, getattr(item, "originalname", item.name))
            if group:
                item.add_marker(_pytest.mark.xdist_group(group))
        items.sort(key=_handed_out_at)  # stable: the same order on every worker

    @_pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(node, ids):
        """The groups above only work if xdist's suffix reaches the node ids: pytest 9.2 keeps ids where
        pytest-xdist 3.8 cannot change them, and every group was silently ignored (timing tests overlapped,
        each costly fixture was built once per worker). Stop the run rather than let that happen unseen."""
        if node.config.getvalue("dist") != "loadgroup":
            return
        lost = [node_id for node_id in ids if "@" not in node_id and _group_of_node_id(node_id)]
        if lost:
            _pytest.exit(f"xdist groups are ignored by this pytest and pytest-xdist ({lost[0]}): see setup.cfg", 3)

except ImportError:  # pragma: no cover
    pass


def _handed_out_at(item) -> int:
    name = item.path.name
    return EARLY_FILES.index(name) if name in EARLY_FILES else len(EARLY_FILES)


def _group_of_node_id(node_id: str) -> str | None:
    path, _, name = node_id.partition("::")
    return xdist_group_of(path.rsplit("/", 1)[-1], name.split("[", 1)[0])


import pytest  # noqa: E402  (after the bytecode and path settings above)


@pytest.fixture
def fresh_pool():
    """The SQL worker pool with no worker and no zygote: a zygote an earlier test started had other modules warm."""
    from evaluators.execution import worker, zygote

    worker.kill_all()
    zygote.shutdown()
    yield worker.pool()
    worker.kill_all()


@pytest.fixture
def ten_rows_db(tmp_path) -> str:
    """A SQLite file with one table `t(x)` of the integers 0 to 9."""
    import sqlite3

    path = tmp_path / "ten_rows.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE t (x INTEGER)")
    con.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(10)])
    con.commit()
    con.close()
    return str(path)
