"""The command line grades with the system's allocator under pyarrow (entry.py: a fifth quicker on a
3.3-million-row pair than pyarrow's own mimalloc), unless the user chose one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Runs the command line as evaluate.py does; an exit handler (they run before the entry's os._exit) says which
# pool pyarrow made for that process.
SCRIPT = (
    "import atexit, sys; sys.argv = ['evaluate.py', '--version']; "
    "atexit.register(lambda: print('pool', __import__('pyarrow').default_memory_pool().backend_name)); "
    "from evaluators import entry; entry.run()"
)


def _pool(**env: str) -> str:
    environment = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"} | env
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], cwd=ROOT, env=environment, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split("pool ", 1)[1].strip()


def test_the_command_line_uses_the_system_allocator():
    assert _pool() == "system"


@pytest.mark.parametrize("chosen", ["jemalloc", "mimalloc"])
def test_a_users_own_choice_is_kept(chosen):
    import pyarrow as pa

    if chosen not in pa.supported_memory_backends():
        pytest.skip(f"this pyarrow was built without {chosen}")
    assert _pool(ARROW_DEFAULT_MEMORY_POOL=chosen) == chosen
