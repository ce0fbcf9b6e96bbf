"""The worker's request reader (`worker._lines`): every line as written, whatever pieces the pipe carries them
in, and `on_idle` called once when no line came for a while (a PostgreSQL worker then gives back its kept
sessions, base.IDLE_RELEASES)."""

from __future__ import annotations

import os
import threading
import time

from hypothesis import given
from hypothesis import strategies as st
from hypothesis_profiles import sized

from evaluators.execution.worker import _lines

LINES = st.lists(st.text(alphabet=st.characters(blacklist_characters="\n"), max_size=3000), min_size=1, max_size=8)


@sized(40)
@given(lines=LINES, cuts=st.lists(st.integers(min_value=1, max_value=5000), max_size=20))
def test_every_line_comes_out_whole_whatever_the_pieces(lines, cuts):
    data = "".join(line + "\n" for line in lines).encode("utf-8")
    read, write = os.pipe()

    def writer():
        at = 0
        for size in [*cuts, len(data)]:
            os.write(write, data[at : at + size])
            at += size
        os.close(write)

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        assert list(_lines(read, 5.0, lambda: None)) == lines
    finally:
        thread.join()
        os.close(read)


def test_a_wait_longer_than_the_idle_mark_calls_on_idle_once_then_reads_on():
    read, write = os.pipe()
    idle: list[float] = []
    os.write(write, b"first\n")
    lines = _lines(read, 0.05, lambda: idle.append(time.monotonic()))
    assert next(lines) == "first" and not idle
    threading.Timer(0.3, lambda: (os.write(write, b"second\n"), os.close(write))).start()
    assert next(lines) == "second"
    assert len(idle) == 1  # once for the whole wait, not once every 0.05 s
    assert list(lines) == []
    os.close(read)
