"""Local search at scale (not a test): a generated corpus of a million chunks, Sleuth's search
against the same raw FTS5 query on the same index.

The corpus is made-up words with a Zipf distribution (the most frequent ones are English function
words, which queries drop as real ones do), 100 to 250 words a chunk, ten chunks a document, in one
collection; the questions are 3 to 8 words drawn from the same distribution past the function
words. Building the index takes minutes, so it is kept at --db and reused while its size matches.

Run: .venv/bin/python bench/corpus_scale.py [--chunks 1000000] [--db /tmp/sleuth-scale.db] [--queries 300]
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import sqlite3
import statistics
import time
from collections.abc import Iterator
from pathlib import Path

from sleuth.core.words import FUNCTION_WORDS
from sleuth.tools.local import retrieval
from sleuth.tools.local.corpus import LocalCorpus
from sleuth.tools.local.query import fts_query
from sleuth.tools.local.schema import connect

VOCABULARY = 60_000
CHUNKS_PER_DOCUMENT = 10
LIMIT = 6  # what an agent's search asks for
_SYLLABLES = [c + v for c in "bcdfghjklmnprstvwz" for v in "aeiou"] + ["ing", "er", "tion", "al", "ly"]


def vocabulary(rng: random.Random) -> list[str]:
    words = sorted(w for w in FUNCTION_WORDS if w.isalpha())
    made: set[str] = set(words)
    while len(words) < VOCABULARY:
        word = "".join(rng.choices(_SYLLABLES, k=rng.randint(2, 4)))
        if word not in made:
            made.add(word)
            words.append(word)
    return words


def zipf_cumulative(n: int, s: float = 1.07) -> list[float]:
    return list(itertools.accumulate(1 / (rank**s) for rank in range(1, n + 1)))


def chunks(words: list[str], cumulative: list[float], count: int, rng: random.Random) -> Iterator[tuple[int, str]]:
    for i in range(count):
        yield i, " ".join(rng.choices(words, cum_weights=cumulative, k=rng.randint(100, 250)))


def build(db: Path, count: int) -> None:
    rng = random.Random(11)
    words = vocabulary(rng)
    cumulative = zipf_cumulative(len(words))
    db.unlink(missing_ok=True)
    conn = connect(db)
    now = time.time()
    conn.execute("BEGIN")
    conn.execute(
        "INSERT INTO collections (name, kind, root, created_at, updated_at)"
        " VALUES ('scale', 'indexed', '/scale', ?, ?)",
        (now, now),
    )
    started = time.perf_counter()
    for i, body in chunks(words, cumulative, count, rng):
        doc, seq = divmod(i, CHUNKS_PER_DOCUMENT)
        if seq == 0:
            title = " ".join(rng.choices(words[300:], k=3))
            conn.execute(
                "INSERT INTO documents (id, collection_id, path, url, title, size, hash, text, indexed_at)"
                " VALUES (?, 1, ?, ?, ?, 0, '', '', ?)",
                (doc + 1, f"d{doc}.md", f"corpus://scale/d{doc}.md", title, now),
            )
        conn.execute(
            "INSERT INTO chunks (document_id, seq, title, heading, body) VALUES (?, ?, ?, ?, ?)",
            (doc + 1, seq, title, title, body),
        )
        if i and i % 100_000 == 0:
            conn.execute("COMMIT")
            conn.execute("BEGIN")
            rate = i / (time.perf_counter() - started)
            print(f"  {i:,} chunks, {rate:,.0f}/s", flush=True)
    conn.execute("COMMIT")
    conn.execute("INSERT INTO chunks_fts (chunks_fts) VALUES ('optimize')")
    conn.close()
    print(f"built {count:,} chunks in {time.perf_counter() - started:.0f} s, {db.stat().st_size / 1e9:.2f} GB")


def questions(n: int) -> list[str]:
    rng = random.Random(5)
    words = vocabulary(random.Random(11))
    content = words[len([w for w in FUNCTION_WORDS if w.isalpha()]) :]
    cumulative = zipf_cumulative(len(content))
    return [" ".join(rng.choices(content, cum_weights=cumulative, k=rng.randint(3, 8))) for _ in range(n)]


def percentiles(ms: list[float]) -> tuple[float, float, float]:
    ordered = sorted(ms)
    return ordered[len(ordered) // 2], ordered[int(len(ordered) * 0.95)], ordered[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=1_000_000)
    parser.add_argument("--db", type=Path, default=Path("/tmp/sleuth-scale.db"))
    parser.add_argument("--queries", type=int, default=300)
    args = parser.parse_args()
    existing = 0
    if args.db.exists():
        with sqlite3.connect(args.db) as probe:
            existing = probe.execute(
                "SELECT COUNT(*) FROM chunks c JOIN documents d ON d.id = c.document_id"
                " JOIN collections k ON k.id = d.collection_id WHERE k.name = 'scale'"
            ).fetchone()[0]
    if existing != args.chunks:
        build(args.db, args.chunks)
    corpus = LocalCorpus(args.db, None)
    corpus.ensure_ready()
    raw = sqlite3.connect(args.db)
    asked = questions(args.queries)
    sleuth_ms: list[float] = []
    raw_ms: list[float] = []
    matches: list[int] = []
    for question in asked:
        match = fts_query(question)
        assert match is not None
        start = time.perf_counter()
        found = corpus.search(question, LIMIT)
        sleuth_ms.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        raw.execute(
            f"SELECT rowid, bm25(chunks_fts, {retrieval.BM25_WEIGHTS}) AS s FROM chunks_fts"
            " WHERE chunks_fts MATCH ? ORDER BY s LIMIT ?",
            (match, LIMIT),
        ).fetchall()
        raw_ms.append((time.perf_counter() - start) * 1000)
        assert found, question
    for question in asked:
        count = raw.execute("SELECT COUNT(*) FROM chunks_fts WHERE chunks_fts MATCH ?", (fts_query(question),))
        matches.append(count.fetchone()[0])
    load = os.getloadavg()
    s50, s95, smax = percentiles(sleuth_ms)
    r50, r95, rmax = percentiles(raw_ms)
    print(f"{args.chunks:,} chunks, {args.queries} questions, limit {LIMIT}; load average {load[0]:.1f} {load[1]:.1f}")
    print(f"  chunks matched per question: median {statistics.median(matches):,.0f}, max {max(matches):,}")
    print(f"  Sleuth's search (LocalCorpus.search): p50 {s50:.1f} ms, p95 {s95:.1f} ms, max {smax:.1f} ms")
    print(f"  raw FTS5 (MATCH, ORDER BY bm25, LIMIT): p50 {r50:.1f} ms, p95 {r95:.1f} ms, max {rmax:.1f} ms")
    ratios = sorted(s / r for s, r in zip(sleuth_ms, raw_ms, strict=True))
    p95 = ratios[int(len(ratios) * 0.95)]
    print(f"  Sleuth ÷ raw, per question: median {statistics.median(ratios):.2f}, p95 {p95:.2f}")
    # The cost follows how many chunks hold a word of the question: bm25 scores each of them.
    for low, high in ((0.0, 0.02), (0.02, 0.1), (0.1, 0.3), (0.3, 1.0)):
        times = [ms for ms, n in zip(sleuth_ms, matches, strict=True) if low * args.chunks <= n < high * args.chunks]
        if times:
            p50, p95, _ = percentiles(times)
            share = f"{low:.0%}–{high:.0%} of the chunks"
            print(f"  questions matching {share}: {len(times)}, Sleuth p50 {p50:.1f} ms, p95 {p95:.1f} ms")


if __name__ == "__main__":
    main()
