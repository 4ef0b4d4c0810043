"""Local corpus figures (not a test): built-in indexing time, query latency, 1,000-file folder indexing.

Run: .venv/bin/python bench/corpus.py
"""

from __future__ import annotations

import asyncio
import random
import statistics
import tempfile
import time
from pathlib import Path
from pydoc_data.topics import topics

from sleuth.tools.local.builtin import builtin_sources, sync_builtin
from sleuth.tools.local.corpus import LocalCorpus
from sleuth.tools.local.folders import index_folder
from sleuth.tools.local.providers import LocalSearch
from sleuth.tools.local.schema import connect
from sleuth.tools.local.store import CorpusStore

QUERIES = 200
FILES = 1000


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def bench_builtin(work: Path) -> None:
    fresh = []
    for i in range(5):
        conn = connect(work / f"builtin{i}.db")
        fresh.append(timed(lambda c=conn: sync_builtin(CorpusStore(c))))
        conn.close()
    conn = connect(work / "builtin0.db")
    again = timed(lambda: sync_builtin(CorpusStore(conn)))
    chunks = conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
    size = (work / "builtin0.db").stat().st_size
    conn.close()
    print(f"built-in python-reference: {len(builtin_sources())} topics, {chunks} chunks, db {size / 1e6:.1f} MB")
    print(f"  index from scratch: median {statistics.median(fresh) * 1000:.0f} ms (5 runs)")
    print(f"  re-check, unchanged: {again * 1000:.1f} ms")


def queries() -> list[str]:
    rng = random.Random(7)
    words = [w for text in topics.values() for w in text.split() if w.isalpha() and len(w) > 3]
    questions = [
        "How do Python descriptors and __getattr__ interact during attribute lookup?",
        'What does the "with" statement do with __enter__ and __exit__?',
        "generator yield from send throw close",
        'NEAR("async" AND await*) -- coroutine OR "event loop"',
    ]
    out = []
    for i in range(QUERIES):
        out.append(questions[i % len(questions)] if i % 5 == 0 else " ".join(rng.sample(words, rng.randint(1, 8))))
    return out


def bench_queries(work: Path) -> None:
    corpus = LocalCorpus(work / "builtin0.db", None)
    corpus.ensure_ready()
    qs = queries()
    sync_ms = sorted(timed(lambda q=q: corpus.search(q, 6)) * 1000 for q in qs)

    async def through_provider() -> list[float]:
        search = LocalSearch(corpus)
        times = []
        for q in qs:
            start = time.perf_counter()
            await search.search(q, limit=6)
            times.append((time.perf_counter() - start) * 1000)
        return sorted(times)

    async_ms = asyncio.run(through_provider())
    for label, ms in (("LocalCorpus.search (caller thread)", sync_ms), ("LocalSearch.search (to_thread)", async_ms)):
        p50 = ms[len(ms) // 2]
        p99 = ms[min(len(ms) - 1, int(len(ms) * 0.99))]
        print(f"  {label}: p50 {p50:.2f} ms, p99 {p99:.2f} ms, max {ms[-1]:.2f} ms over {len(ms)} queries")


def bench_folder(work: Path) -> None:
    folder = work / "folder"
    rng = random.Random(3)
    vocab = [f"term{i}" for i in range(5000)]
    for i in range(FILES):
        path = folder / f"d{i // 100}" / f"note{i:04d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        paras = [f"# Note {i}"] + [" ".join(rng.choices(vocab, k=80)) + "." for _ in range(4)]
        path.write_text("\n\n".join(paras), encoding="utf-8")
    conn = connect(work / "folder.db")
    store = CorpusStore(conn)
    reports = []
    first = timed(lambda: reports.append(index_folder(store, folder, name="bench", kind="indexed")))
    second = timed(lambda: reports.append(index_folder(store, folder, name="bench", kind="indexed")))
    chunks = conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
    conn.close()
    print(f"{FILES}-file folder (md, ~320 words each, {chunks} chunks):")
    print(f"  first index: {first:.2f} s ({reports[0].added} added)")
    print(f"  second run:  {second * 1000:.0f} ms ({reports[1].unchanged} unchanged, {reports[1].indexed} re-indexed)")


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        bench_builtin(work)
        print("query latency (built-in corpus, limit 6):")
        bench_queries(work)
        bench_folder(work)


if __name__ == "__main__":
    main()
