"""What a run pays to get the local corpus ready, alone and with 10 runs starting together (not a test).

Run: .venv/bin/python bench/corpus_ready.py [--files 10000]
A SLEUTH_CORPUS folder of N small files is indexed once; then runs start (one LocalCorpus each, as
each run builds its own toolbox). Printed: per-run time to ready with the default re-check interval,
and with SLEUTH_CORPUS_CHECK_S=0 (every run stat-walks the folder, lock-free when nothing changed).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from sleuth.tools.local.corpus import FolderChecks, LocalCorpus


def ready_times(db: Path, folder: Path, runs: int, check_s: float, checks: FolderChecks) -> list[float]:
    def one(_: int) -> float:
        started = time.perf_counter()
        LocalCorpus(db, str(folder), check_every_s=check_s, checks=checks).ensure_ready()
        return time.perf_counter() - started

    with ThreadPoolExecutor(max_workers=runs) as pool:
        return list(pool.map(one, range(runs)))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "notes"
        for i in range(args.files):
            path = folder / f"d{i // 500}" / f"n{i}.md"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"# Note {i}\n\nToken tok{i} appears once.\n", encoding="utf-8")
        db = Path(tmp) / "corpus.db"
        started = time.perf_counter()
        LocalCorpus(db, str(folder), check_every_s=0, checks=FolderChecks()).ensure_ready()
        print(f"{args.files} files indexed once in {time.perf_counter() - started:.1f} s")
        for check_s in (30.0, 0.0):
            checks = FolderChecks()
            checks.done((str(db), str(folder.resolve())))  # as after an earlier run in this process
            for runs in (1, 10):
                times = ready_times(db, folder, runs, check_s, checks)
                print(
                    f"check every {check_s:>4.0f} s, {runs:>2} runs at once: "
                    f"p50 {statistics.median(times) * 1000:.1f} ms, max {max(times) * 1000:.1f} ms"
                )


if __name__ == "__main__":
    main()
