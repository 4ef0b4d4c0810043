"""One progress line for work over files: how many files and megabytes are done out of how many, the
rate so far, and the time left at that rate.

The time left is the megabytes left at the megabytes' rate: file sizes vary too much (a folder of
notes with one big PDF) for a count of files to say how long the rest takes. When the total size is
not known (an upload that did not say its sizes), it falls back on the files' rate.
"""

from __future__ import annotations

from sleuth.core.clock import Clock, SystemClock
from sleuth.core.durations import format_duration

MB = 1_000_000


class Throughput:
    def __init__(self, files: int, size: int | None, clock: Clock | None = None) -> None:
        self.files_total = files
        self.size_total = size  # bytes; None when not known
        self.files_done = 0
        self.size_done = 0
        self._clock = clock or SystemClock()
        self._started = self._clock.now()
        self._last_line = self._started

    def advance(self, size: int) -> None:
        """One more file done, of `size` bytes."""
        self.files_done += 1
        self.size_done += size

    def elapsed(self) -> float:
        return self._clock.now() - self._started

    def due(self, every_s: float) -> bool:
        """Whether `every_s` seconds have passed since the last line was due (or since the start);
        a True answer starts the next interval."""
        now = self._clock.now()
        if now - self._last_line < every_s:
            return False
        self._last_line = now
        return True

    def line(self) -> str:
        """`412/766 files, 16.2/30.1 MB, 58.1 files/s, 2.3 MB/s, about 6s left`."""
        elapsed = self.elapsed()
        size = f"{self.size_done / MB:.1f}"
        if self.size_total is not None:
            size += f"/{self.size_total / MB:.1f}"
        parts = [f"{self.files_done}/{self.files_total} files", f"{size} MB"]
        if elapsed > 0 and self.files_done:
            parts += [f"{self.files_done / elapsed:.1f} files/s", f"{self.size_done / MB / elapsed:.1f} MB/s"]
            left = self._seconds_left(elapsed)
            if left is not None:
                parts.append(f"about {format_duration(left)} left")
        return ", ".join(parts)

    def _seconds_left(self, elapsed: float) -> float | None:
        if self.files_done >= self.files_total:
            return None
        if self.size_total is not None and self.size_done:
            return max(0, self.size_total - self.size_done) * elapsed / self.size_done
        return (self.files_total - self.files_done) * elapsed / self.files_done
