"""Peak memory and time to index one big file (not a test).

Run: .venv/bin/python bench/index_memory.py --mb 200
Writes a file of that size with no sentence end and no newline (the worst case for chunking),
indexes it with the per-file cap raised to fit, and prints wall time and peak RSS of this process.
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from pathlib import Path

from sleuth.tools.local.folders import index_folder
from sleuth.tools.local.schema import connect
from sleuth.tools.local.store import CorpusStore


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux reports KiB


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "big"
        folder.mkdir()
        words = " ".join(f"w{i % 997}x" for i in range(100_000)) + " "
        with open(folder / "flat.txt", "w", encoding="utf-8") as out:
            while out.tell() < args.mb * 1_000_000:
                out.write(words)
        size = (folder / "flat.txt").stat().st_size
        before = rss_mb()
        conn = connect(Path(tmp) / "corpus.db")
        started = time.perf_counter()
        report = index_folder(CorpusStore(conn), folder, name=None, kind="indexed", max_bytes=size + 1)
        elapsed = time.perf_counter() - started
        chunks = conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
        conn.close()
    print(f"{size / 1e6:.0f} MB file, {report.added} document, {chunks} chunks, indexed in {elapsed:.1f} s")
    print(f"peak RSS {rss_mb():.0f} MB (before indexing {before:.0f} MB)")


if __name__ == "__main__":
    main()
