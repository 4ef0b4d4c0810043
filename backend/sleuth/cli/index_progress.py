"""The progress line of `sleuth index` on stderr: files and megabytes done, the rate, the time left.

On a terminal the line is rewritten in place a few times a second; elsewhere (a pipe, a log file)
a new line is written every `LOG_EVERY_S`, so a log shows the work moving without filling up. The
first line is written when indexing starts, and the last one once every file is done.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from sleuth.core.clock import Clock
from sleuth.core.throughput import Throughput
from sleuth.tools.local.indexer import Source

TERMINAL_EVERY_S = 0.2
LOG_EVERY_S = 10.0
# Below both, indexing is over before a line could say anything.
MIN_FILES = 50
MIN_BYTES = 50_000_000


def worth_showing(sources: Sequence[Source]) -> bool:
    return len(sources) >= MIN_FILES or sum(source.size for source in sources) >= MIN_BYTES


class IndexProgress:
    def __init__(self, label: str, sources: Sequence[Source], err: TextIO, clock: Clock | None = None) -> None:
        self._label = label
        self._err = err
        self._terminal = err.isatty()
        self._every_s = TERMINAL_EVERY_S if self._terminal else LOG_EVERY_S
        self.throughput = Throughput(len(sources), sum(source.size for source in sources), clock)
        self._show()

    def __call__(self, source: Source) -> None:
        """One source done with (indexed, unchanged, skipped or failed)."""
        self.throughput.advance(source.size)
        if self.throughput.due(self._every_s):
            self._show()

    def close(self) -> None:
        self._show()
        if self._terminal:
            self._err.write("\n")
            self._err.flush()

    def _show(self) -> None:
        text = f"Indexing {self._label}: {self.throughput.line()}"
        self._err.write(f"\r\x1b[2K{text}" if self._terminal else f"{text}\n")
        self._err.flush()
