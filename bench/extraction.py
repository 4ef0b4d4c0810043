"""Extraction quality on a real HTML manual (not a test): chunks holding navigation text, skipped pages, a table.

Run on this checkout, or on another one to compare (e.g. the code before the extraction merge):
    .venv/bin/python bench/extraction.py /usr/share/doc/postgresql-doc-15/html
    PYTHONPATH=/other/checkout/backend .venv/bin/python bench/extraction.py /usr/share/doc/postgresql-doc-15/html
"""

from __future__ import annotations

import argparse
import re
import time
from pathlib import Path

from sleuth.tools.local import extract as extract_module
from sleuth.tools.local.chunking import chunk_text

# Text that only page chrome produces: DocBook's Prev/Up/Home/Next bars, Sphinx's navigation
# bars, sidebars and pilcrows.
NAVIGATION = [
    re.compile(r"\bPrev\b.{0,80}\bUp\b", re.S),
    re.compile(r"\bUp\b.{0,120}\bHome\b.{0,40}\bNext\b", re.S),
    re.compile(r"\bindex\s*\|?\s*modules\s*\|"),
    re.compile(r"\b(Previous|Next) topic\b"),
    re.compile(r"\bShow Source\b|\bQuick search\b|\bReport a Bug\b"),
    re.compile("\u00b6"),
]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("folder", type=Path)
    parser.add_argument("--sample", default="Read uncommitted", help="print the chunk holding this text")
    args = parser.parse_args()
    files = sorted(p for p in args.folder.rglob("*") if p.suffix.lower() in (".html", ".htm"))
    skip = getattr(extract_module, "Skip", None)
    chunks = navigation = skipped = failed = 0
    sample = ""
    started = time.perf_counter()
    for path in files:
        try:
            out = extract_module.extract(path, path.read_bytes())
        except Exception as exc:  # noqa: BLE001 — a figure, not a program: count and go on
            if skip is not None and isinstance(exc, skip):
                skipped += 1
            else:
                failed += 1
            continue
        for chunk in chunk_text(out.text, out.title):
            chunks += 1
            if any(p.search(chunk.body) for p in NAVIGATION):
                navigation += 1
            if not sample and args.sample in chunk.body:
                sample = chunk.body
    elapsed = time.perf_counter() - started
    print(f"{len(files)} HTML files in {elapsed:.1f} s: {skipped} skipped as contents/index pages, {failed} failed")
    print(f"{chunks} chunks; {navigation} hold navigation text ({100 * navigation / max(chunks, 1):.1f}%)")
    if sample:
        start = sample.find(args.sample)
        print(f"\nsample around {args.sample!r}:\n{sample[max(0, start - 300) : start + 400]}")


if __name__ == "__main__":
    main()
