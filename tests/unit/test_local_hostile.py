"""`sleuth index` on hostile folders: every odd entry gets its own line, nothing outside is read, nothing else lost."""

from __future__ import annotations

import os
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from sleuth.cli.index import index
from sleuth.config import Settings
from sleuth.stream.documents import document_id
from sleuth.tools.local.chunking import MAX_WORDS, chunk_text
from sleuth.tools.local.providers import build_local_tools
from sleuth.tools.local.schema import SCHEMA_VERSION, connect


def run(*args: str) -> Result:
    return CliRunner().invoke(index, list(args))


def indexed_paths(collection: str) -> set[str]:
    with closing(sqlite3.connect(Path(os.environ["SLEUTH_DATA_DIR"]) / "corpus.db")) as conn:
        rows = conn.execute(
            "SELECT path FROM documents d JOIN collections c ON c.id = d.collection_id WHERE c.name = ?",
            (collection,),
        ).fetchall()
    return {row[0] for row in rows}


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("SLEUTH_API_KEY=sk-topsecret-zebra\n", encoding="utf-8")
    folder = tmp_path / "kb"
    (folder / "sub").mkdir(parents=True)
    (folder / "good.md").write_text("# Good\n\nThe aardvark is a nocturnal mammal.\n", encoding="utf-8")
    (folder / "sub" / "inner.txt").write_text("Inner notes about the okapi.\n", encoding="utf-8")
    os.symlink(outside / "secret.txt", folder / "leak.txt")
    os.symlink(outside, folder / "outdir")
    os.symlink("/etc/passwd", folder / "passwd.txt")
    os.symlink(folder / "sub" / "inner.txt", folder / "alias.txt")  # inside: followed
    os.symlink(folder, folder / "sub" / "loop")  # back to the top
    os.symlink(folder / "self.md", folder / "self.md")  # points at itself
    os.symlink(folder / "missing.md", folder / "dangling.md")
    os.mkfifo(folder / "pipe.txt")
    (folder / os.fsdecode(b"caf\xe9-notes.txt")).write_bytes(b"Latin-1 named file about the quokka.\n")
    return folder


def test_every_hostile_entry_gets_its_line_and_the_rest_is_indexed(hostile: Path) -> None:
    result = run(str(hostile), "--name", "kb")
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    lines = result.stderr.splitlines()
    expected = {
        "skipped: leak.txt: symlink leads outside the indexed folder; refused",
        "skipped: outdir: symlink leads outside the indexed folder; refused",
        "skipped: passwd.txt: symlink leads outside the indexed folder; refused",
        "skipped: sub/loop: symlink loop (folder already indexed above); not followed",
        "skipped: self.md: symlink loop; not followed",
        "skipped: dangling.md: dangling symlink; not followed",
        "skipped: pipe.txt: FIFO, not a regular file; skipped",
        "warning: caf\\xe9-notes.txt: name is not valid UTF-8; indexed under this escaped name",
    }
    assert expected <= set(lines), lines
    assert len([line for line in lines if line.startswith("skipped:")]) == 7
    assert indexed_paths("kb") == {"good.md", "sub/inner.txt", "alias.txt", "caf\\xe9-notes.txt"}
    assert "7 skipped" in result.stdout


async def test_nothing_from_outside_is_searchable(hostile: Path) -> None:
    assert run(str(hostile), "--name", "kb").exit_code == 0
    search, reader = build_local_tools(Settings())
    assert await search.search("topsecret zebra", limit=5) == []
    assert await search.search("root bash nologin", limit=5) == [] or all(
        not d.url.startswith("corpus://kb/") for d in await search.search("root bash nologin", limit=5)
    )
    (quokka,) = await search.search("quokka", limit=5)
    assert quokka.url == "corpus://kb/caf%5Cxe9-notes.txt"
    assert "quokka" in (await reader.read(quokka.url)).text


def test_reindex_after_a_bad_name_keeps_working(hostile: Path) -> None:
    assert run(str(hostile), "--name", "kb").exit_code == 0
    again = run(str(hostile), "--name", "kb")
    assert again.exit_code == 0 and "4 unchanged" in again.stdout
    assert run("--list").exit_code == 0


def test_files_over_the_size_cap_are_skipped_with_a_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "big"
    folder.mkdir()
    (folder / "small.txt").write_text("small file about lemurs\n", encoding="utf-8")
    (folder / "huge.txt").write_text("x " * 600_000, encoding="utf-8")
    monkeypatch.setenv("SLEUTH_INDEX_MAX_FILE_MB", "1")
    result = run(str(folder))
    assert result.exit_code == 0, result.output
    assert "skipped: huge.txt: too big (1.2 MB > the 1.0 MB cap, SLEUTH_INDEX_MAX_FILE_MB)" in result.stderr
    assert indexed_paths("big") == {"small.txt"}


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads folders whatever their mode")
def test_unreadable_folder_gets_a_line(tmp_path: Path) -> None:
    folder = tmp_path / "locked"
    (folder / "closed").mkdir(parents=True)
    (folder / "open.md").write_text("open text\n", encoding="utf-8")
    (folder / "closed").chmod(0)
    try:
        result = run(str(folder))
    finally:
        (folder / "closed").chmod(0o755)
    assert "skipped: closed: unreadable folder" in result.stderr
    assert indexed_paths("locked") == {"open.md"}


def test_a_big_unpunctuated_file_indexes_in_linear_time(tmp_path: Path) -> None:
    # 4 MB without a sentence end or a newline: the old chunker sliced word lists quadratically.
    text = " ".join(f"w{i % 977}" for i in range(800_000))
    chunks = chunk_text(text, "T")
    assert all(len(c.body.split()) <= MAX_WORDS for c in chunks)
    assert sum(len(c.body.split()) for c in chunks) == 800_000
    folder = tmp_path / "flat"
    folder.mkdir()
    (folder / "flat.txt").write_text(text, encoding="utf-8")
    (folder / "other.md").write_text("# Other\n\nA normal note.\n", encoding="utf-8")
    result = run(str(folder))
    assert result.exit_code == 0 and "2 added" in result.stdout, result.output


def test_remove_reclaims_disk_space(tmp_path: Path) -> None:
    folder = tmp_path / "bulk"
    folder.mkdir()
    for i in range(40):
        (folder / f"n{i}.txt").write_text(f"note {i} " + "filler words here. " * 3000, encoding="utf-8")
    assert run(str(folder)).exit_code == 0
    db = Path(os.environ["SLEUTH_DATA_DIR"]) / "corpus.db"
    before = db.stat().st_size
    removed = run("--remove", "bulk")
    assert removed.exit_code == 0 and "MB of disk space reclaimed" in removed.stdout
    assert db.stat().st_size < before / 2


def test_a_run_that_finds_nothing_changed_takes_no_write_lock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "env"
    folder.mkdir()
    (folder / "a.md").write_text("# A\n\nA note about tapirs.\n", encoding="utf-8")
    monkeypatch.setenv("SLEUTH_CORPUS", str(folder))
    monkeypatch.setenv("SLEUTH_CORPUS_CHECK_S", "0")
    search, _ = build_local_tools(Settings())
    search.corpus.ensure_ready()  # type: ignore[attr-defined]
    db = Path(os.environ["SLEUTH_DATA_DIR"]) / "corpus.db"
    with closing(sqlite3.connect(db, isolation_level=None)) as holder:
        holder.execute("BEGIN IMMEDIATE")  # another writer holds the lock for the whole check
        search, _ = build_local_tools(Settings())
        # Asking for the lock would block for the busy timeout and then fail with "database is locked".
        scope = search.corpus.ensure_ready()  # type: ignore[attr-defined]
        holder.execute("ROLLBACK")
    assert scope.names == ("env",)


def test_an_index_from_schema_1_gains_document_ids(tmp_path: Path) -> None:
    folder = tmp_path / "old"
    folder.mkdir()
    (folder / "a.md").write_text("# A\n\nAn old note about ibexes.\n", encoding="utf-8")
    assert run(str(folder)).exit_code == 0
    db = Path(os.environ["SLEUTH_DATA_DIR"]) / "corpus.db"
    with closing(sqlite3.connect(db)) as conn:  # back to what version 1 wrote
        conn.execute("DROP INDEX documents_by_key")
        conn.execute("ALTER TABLE documents DROP COLUMN doc_key")
        conn.execute("PRAGMA user_version = 1")
        conn.commit()
    with closing(connect(db)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        (key,) = conn.execute("SELECT doc_key FROM documents WHERE path = 'a.md'").fetchone()
    assert key == document_id("corpus://old/a.md")


def test_a_folder_of_only_refused_entries_says_so(tmp_path: Path) -> None:
    folder = tmp_path / "links"
    folder.mkdir()
    os.symlink("/etc/passwd", folder / "passwd.txt")
    result = run(str(folder))
    assert result.exit_code == 1
    assert "skipped: passwd.txt: symlink leads outside the indexed folder; refused" in result.stderr
    assert "nothing indexed from" in result.output and "every entry was skipped" in result.output
