"""Peak memory and speed of indexing (not a test).

    .venv/bin/python bench/index_memory.py --mb 200
    .venv/bin/python bench/index_memory.py --folder /usr/share/doc/sqlite3
    .venv/bin/python bench/index_memory.py --mixed-mb 1000 [--keep DIR]

`--mb`: writes one file of that size with no sentence end and no newline (the worst case for
chunking), indexes it in this process with the per-file cap raised to fit, and prints wall time and
peak RSS of this process.

`--folder`: runs `sleuth index FOLDER` (a fresh data directory) as a subprocess and prints the files
and megabytes it was given, its wall and CPU time, files per CPU second (the rate per core: indexing
runs on one), and its peak RSS. Its progress lines go to this script's stderr.

`--mixed-mb`: first generates a folder of about that many MB of mixed documents under /tmp (HTML
pages made from the SQLite documentation when it is installed, else generated; Markdown and text
notes; PDFs of many pages), then indexes it as `--folder` does. `--keep DIR` generates into DIR and
keeps it (and reuses it when it exists).
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sleuth.core import heavy
from sleuth.tools.local.folders import index_folder
from sleuth.tools.local.schema import connect
from sleuth.tools.local.store import CorpusStore

sys.path.insert(0, str(Path(__file__).resolve().parent))

from loadavg import load_average  # noqa: E402

SQLITE_DOCS = Path("/usr/share/doc/sqlite3")
MB = 1_000_000
WORDS = (
    "index page table query column row value cursor journal lock transaction schema trigger view "
    "vacuum btree pager memory disk cache read write commit rollback savepoint statement"
).split()


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux reports KiB


def one_big_file(mb: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "big"
        folder.mkdir()
        words = " ".join(f"w{i % 997}x" for i in range(100_000)) + " "
        with open(folder / "flat.txt", "w", encoding="utf-8") as out:
            while out.tell() < mb * MB:
                out.write(words)
        size = (folder / "flat.txt").stat().st_size
        before = rss_mb()
        conn = connect(Path(tmp) / "corpus.db")
        started = time.perf_counter()
        report = index_folder(CorpusStore(conn), folder, name=None, kind="indexed", max_bytes=size + 1)
        elapsed = time.perf_counter() - started
        chunks = conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
        conn.close()
    print(f"{size / MB:.0f} MB file, {report.added} document, {chunks} chunks, indexed in {elapsed:.1f} s")
    print(f"peak RSS {rss_mb():.0f} MB (before indexing {before:.0f} MB)")


def prose(rng: random.Random, words: int) -> str:
    sentences = []
    while words > 0:
        n = rng.randint(8, 20)
        sentences.append(" ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + ".")
        words -= n
    return " ".join(sentences)


def write_pdf(path: Path, rng: random.Random, pages: int) -> None:
    pdf = heavy.FPDF()
    pdf.set_compression(False)  # its size on disk then follows its text, as a scanned-free report's does
    pdf.set_font("Helvetica", size=10)
    for page in range(pages):
        pdf.add_page()
        pdf.multi_cell(0, 5, f"Section {page}. " + prose(rng, 450))
    pdf.output(str(path))


def generate_mixed(folder: Path, total_mb: int) -> None:
    """About `total_mb` MB: 45 % HTML pages, 45 % Markdown and text notes, 10 % PDFs."""
    rng = random.Random(27)
    html = sorted(SQLITE_DOCS.rglob("*.html")) if SQLITE_DOCS.is_dir() else []
    budget = {"html": total_mb * MB * 45 // 100, "notes": total_mb * MB * 45 // 100, "pdf": total_mb * MB // 10}
    written = 0
    copy = 0
    while written < budget["html"]:  # each copy of a page tagged, so that no two files are alike
        for page in html or [None]:
            data = page.read_bytes() if page else f"<html><body><p>{prose(rng, 3000)}</p></body></html>".encode()
            data = data.replace(b"<body", b"<!-- copy %d --><body" % copy, 1)
            target = folder / "html" / f"copy{copy:03d}" / (page.relative_to(SQLITE_DOCS) if page else Path("p.html"))
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            written += len(data)
            if written >= budget["html"]:
                break
        copy += 1
    notes = 0
    while written < budget["html"] + budget["notes"]:
        suffix = ".md" if notes % 2 else ".txt"
        body = f"# Note {notes}\n\n" + "\n\n".join(
            prose(rng, rng.randint(200, 3000)) for _ in range(rng.randint(5, 40))
        )
        target = folder / "notes" / f"d{notes // 500:03d}" / f"note{notes:05d}{suffix}"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(body, encoding="utf-8")
        written += len(body)
        notes += 1
    # PDFs are slow to typeset: one is made, then copied under other names with its text varied.
    pdfs = 0
    (folder / "pdf").mkdir(parents=True, exist_ok=True)
    template = folder / "pdf" / "report0000.pdf"
    write_pdf(template, rng, pages=200)
    data = template.read_bytes()
    written += len(data)
    while written < total_mb * MB:
        pdfs += 1
        varied = data.replace(b"Section 1.", b"Section %d." % (pdfs % 10), 1)
        (folder / "pdf" / f"report{pdfs:04d}.pdf").write_bytes(varied)
        written += len(varied)


def folder_size(folder: Path) -> tuple[int, int]:
    files = [p for p in folder.rglob("*") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files)


def index_with_cli(folder: Path) -> None:
    files, size = folder_size(folder)
    print(f"load average at start: {load_average()}")
    print(f"indexing {folder}: {files} files, {size / MB:.1f} MB")
    with tempfile.TemporaryDirectory() as data_dir:
        env = {k: v for k, v in os.environ.items() if not k.startswith("SLEUTH_")}
        env["SLEUTH_DATA_DIR"] = data_dir
        command = [sys.executable, "-m", "sleuth", "index", str(folder)]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = subprocess.run(command, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    for line in done.stderr.splitlines():
        if line.startswith("Indexing "):
            print(f"  {line}", file=sys.stderr)
    if done.returncode != 0:
        raise SystemExit(f"sleuth index exited {done.returncode}: {done.stderr[-2000:]}")
    print(f"  {done.stdout.strip()}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    print(
        f"wall {wall:.1f} s, CPU {cpu:.1f} s: {files / cpu:.1f} files per CPU second, {size / MB / cpu:.2f} MB per "
        f"CPU second; peak RSS of `sleuth index` {after.ru_maxrss / 1024:.0f} MiB"
    )
    print(f"load average at end: {load_average()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--mb", type=int, default=200, help="one big flat file of this size")
    which.add_argument("--folder", type=Path, help="index this folder with `sleuth index`")
    which.add_argument("--mixed-mb", type=int, help="generate a mixed folder of about this size, then index it")
    parser.add_argument("--keep", type=Path, help="with --mixed-mb: generate into (or reuse) this folder")
    args = parser.parse_args()
    if args.folder is not None:
        index_with_cli(args.folder)
    elif args.mixed_mb is not None:
        folder = args.keep or Path(tempfile.mkdtemp(prefix="sleuth-mixed-"))
        try:
            if not (folder.exists() and any(folder.iterdir())):
                folder.mkdir(parents=True, exist_ok=True)
                started = time.perf_counter()
                generate_mixed(folder, args.mixed_mb)
                print(f"generated {folder} in {time.perf_counter() - started:.0f} s")
            index_with_cli(folder)
        finally:
            if args.keep is None:
                shutil.rmtree(folder, ignore_errors=True)
    else:
        one_big_file(args.mb)


if __name__ == "__main__":
    main()
