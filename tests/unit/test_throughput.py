"""The progress line of work over files: counts, megabytes, rates and the time left, on a clock the test moves."""

from __future__ import annotations

from sleuth.core.throughput import Throughput
from support.clocks import StepClock


def test_the_line_counts_files_and_megabytes_and_says_the_time_left_at_the_megabytes_rate() -> None:
    clock = StepClock()
    work = Throughput(files=10, size=40_000_000, clock=clock)
    assert work.line() == "0/10 files, 0.0/40.0 MB"
    clock.t += 4
    for _ in range(8):
        work.advance(1_000_000)  # eight small files: 8 MB in 4 s
    # The files' rate would say 1 s for the 2 files left; the 32 MB left take 16 s at 2 MB/s.
    assert work.line() == "8/10 files, 8.0/40.0 MB, 2.0 files/s, 2.0 MB/s, about 16s left"
    work.advance(32_000_000)
    work.advance(0)
    assert work.line() == "10/10 files, 40.0/40.0 MB, 2.5 files/s, 10.0 MB/s"


def test_without_the_sizes_the_time_left_is_the_files_rate() -> None:
    clock = StepClock()
    work = Throughput(files=4, size=None, clock=clock)
    clock.t += 10
    work.advance(3_000_000)
    assert work.line() == "1/4 files, 3.0 MB, 0.1 files/s, 0.3 MB/s, about 30s left"


def test_a_line_is_due_once_per_interval() -> None:
    clock = StepClock()
    work = Throughput(files=1, size=1, clock=clock)
    assert not work.due(5)
    clock.t += 4.9
    assert not work.due(5)
    clock.t += 0.1
    assert work.due(5)
    assert not work.due(5)  # the next interval starts when the last line was due
    clock.t += 5
    assert work.due(5)
