"""`sleuth index`: incremental folder indexing, error reporting, --list / --remove, CLI errors."""

from __future__ import annotations

import hashlib
import os
import re
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

import sleuth.tools.local.indexer as indexer
from sleuth.cli.index import index
from sleuth.config import Settings
from sleuth.tools.local.extract import EXTRACTION_VERSION
from sleuth.tools.local.providers import build_local_tools
from support.pdf import minimal_pdf


def run(*args: str) -> Result:
    return CliRunner().invoke(index, list(args))


def counts(result: Result) -> dict[str, int]:
    """The summary line's counts, e.g. {'added': 3, 'updated': 0, ...}."""
    found = dict(
        (word, int(n)) for n, word in re.findall(r"(\d+) (added|updated|unchanged|removed|failed)", result.stdout)
    )
    assert set(found) == {"added", "updated", "unchanged", "removed", "failed"}, result.output
    return found


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def sql(statement: str) -> list[tuple]:
    """Rows of one statement against the index, on a connection closed straight after."""
    with closing(sqlite3.connect(Path(os.environ["SLEUTH_DATA_DIR"]) / "corpus.db")) as conn:
        return conn.execute(statement).fetchall()


def sql_write(statement: str) -> None:
    with closing(sqlite3.connect(Path(os.environ["SLEUTH_DATA_DIR"]) / "corpus.db")) as conn:
        conn.execute(statement)
        conn.commit()


async def search_urls(query: str) -> list[str]:
    """Hits from the `docs` collection (the built-in reference is searched too, and may also match)."""
    search, _ = build_local_tools(Settings())
    return [doc.url for doc in await search.search(query, limit=10) if doc.url.startswith("corpus://docs/")]


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    write(folder / "intro.md", "# Introduction\n\nThe flux capacitor needs plutonium.\n\n## Setup\n\nPlug it in.\n")
    write(folder / "notes.txt", "Meeting notes\n\nWe discussed the hoverboard budget.\n")
    write(
        folder / "web/page.html",
        "<html><head><title>Time Travel FAQ</title><script>var secret='jigawatt';</script></head>"
        "<body><nav>Home | About</nav><h1>FAQ</h1><p>Speed must reach <b>88</b> mph.</p>"
        "<h2>Power</h2><p>1.21 gigawatts are required.</p></body></html>",
    )
    write(folder / "paper.pdf", minimal_pdf("Temporal displacement observed at midnight"))
    write(folder / "ignored.bin", b"\x00\x01")
    write(folder / ".hidden.md", "secret hidden file\n")
    write(folder / ".git/config.md", "vcs internals\n")
    return folder


def test_index_adds_every_supported_file(docs: Path) -> None:
    result = run(str(docs))
    assert result.exit_code == 0, result.output
    assert counts(result) == {"added": 4, "updated": 0, "unchanged": 0, "removed": 0, "failed": 0}
    paths = {
        row[0]
        for row in sql(
            "SELECT path FROM documents d JOIN collections c ON c.id = d.collection_id WHERE c.name = 'docs'"
        )
    }
    assert paths == {"intro.md", "notes.txt", "web/page.html", "paper.pdf"}


async def test_indexed_formats_are_searchable_with_titles(docs: Path) -> None:
    assert run(str(docs)).exit_code == 0
    search, reader = build_local_tools(Settings())
    (pdf,) = await search.search("temporal displacement midnight", limit=1)
    assert pdf.url == "corpus://docs/paper.pdf"
    (html,) = await search.search("gigawatts", limit=1)
    assert html.url == "corpus://docs/web/page.html" and html.title == "Time Travel FAQ"
    assert html.snippet.startswith("Power: ")  # the chunk's heading, then the passage
    page = await reader.read(html.url)
    assert "88 mph" in page.text and "jigawatt" not in page.text and "Home | About" not in page.text
    (md,) = await search.search("plutonium", limit=1)
    assert md.title == "Introduction"
    hidden = await search.search("secret hidden vcs internals", limit=10)
    assert not [d.url for d in hidden if d.url.startswith("corpus://docs/")]


async def test_modify_and_delete_are_picked_up(docs: Path) -> None:
    assert run(str(docs)).exit_code == 0
    write(docs / "notes.txt", "Meeting notes\n\nWe now discuss the DeLorean paint.\n")
    (docs / "intro.md").unlink()
    write(docs / "new.md", "# New\n\nA brand new mr fusion page.\n")
    result = run(str(docs))
    assert result.exit_code == 0, result.output
    assert counts(result) == {"added": 1, "updated": 1, "unchanged": 2, "removed": 1, "failed": 0}
    assert await search_urls("hoverboard") == []
    assert await search_urls("delorean") == ["corpus://docs/notes.txt"]
    assert await search_urls("plutonium") == []
    assert await search_urls("fusion") == ["corpus://docs/new.md"]
    # Deleted documents take their chunks (and FTS rows) with them.
    assert sql("SELECT COUNT(*) FROM chunks WHERE document_id NOT IN (SELECT id FROM documents)") == [(0,)]
    sql("INSERT INTO chunks_fts(chunks_fts) VALUES ('integrity-check')")  # raises if FTS and chunks disagree


def test_touched_but_identical_file_is_not_reindexed(docs: Path) -> None:
    assert run(str(docs)).exit_code == 0
    note = docs / "notes.txt"
    stat = note.stat()
    os.utime(note, (stat.st_atime, stat.st_mtime + 100))
    result = run(str(docs))
    assert counts(result)["unchanged"] == 4 and counts(result)["updated"] == 0
    ((stored,),) = sql("SELECT mtime FROM documents WHERE path = 'notes.txt'")
    assert stored == note.stat().st_mtime  # remembered, so the next run skips the read


def test_only_the_edited_file_is_reindexed(docs: Path) -> None:
    assert run(str(docs)).exit_code == 0
    note = docs / "notes.txt"
    stat = note.stat()
    note.write_text(note.read_text().replace("hoverboard", "hoverbored"), encoding="utf-8")
    os.utime(note, (stat.st_atime, stat.st_mtime + 1))
    assert counts(run(str(docs)))["updated"] == 1


async def test_bad_files_are_reported_and_the_rest_indexed(docs: Path) -> None:
    write(docs / "broken.pdf", b"%PDF-1.4\n this is not really a pdf")
    write(docs / "latin1.txt", "caf\xe9 cr\xe8me br\xfbl\xe9e recipe\n".encode("latin-1"))
    write(docs / "empty.md", "   \n\n")
    result = run(str(docs))
    assert result.exit_code == 0
    c = counts(result)
    assert c["added"] == 5 and c["failed"] == 2
    assert "error: broken.pdf: could not read the PDF" in result.stderr
    assert "error: empty.md: no text could be extracted" in result.stderr
    assert "warning: latin1.txt: not valid UTF-8" in result.stderr
    assert "Traceback" not in result.output
    assert await search_urls("recipe") == ["corpus://docs/latin1.txt"]


def test_a_file_whose_parser_raises_does_not_stop_the_run(docs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = indexer.extract

    def flaky(path: Path, data: bytes):
        if path.name == "notes.txt":
            raise RuntimeError("parser exploded")
        return real(path, data)

    monkeypatch.setattr(indexer, "extract", flaky)
    result = run(str(docs))
    assert result.exit_code == 0
    assert "error: notes.txt: RuntimeError: parser exploded" in result.stderr
    assert counts(result)["added"] == 3


def test_a_file_that_becomes_unreadable_is_dropped_and_retried(docs: Path) -> None:
    assert run(str(docs)).exit_code == 0
    write(docs / "paper.pdf", b"%PDF-1.4 truncated garbage")
    result = run(str(docs))
    assert counts(result)["failed"] == 1
    assert sql("SELECT COUNT(*) FROM documents WHERE path = 'paper.pdf'") == [(0,)]
    write(docs / "paper.pdf", minimal_pdf("Recovered text"))
    assert counts(run(str(docs)))["added"] == 1


def test_thousand_files_index_then_skip(tmp_path: Path) -> None:
    folder = tmp_path / "big"
    for i in range(1000):
        write(
            folder / f"d{i // 100}" / f"note{i:04d}.md", f"# Note {i}\n\nToken tok{i} appears once. Shared body text.\n"
        )
    first = run(str(folder))
    assert first.exit_code == 0, first.output
    assert counts(first) == {"added": 1000, "updated": 0, "unchanged": 0, "removed": 0, "failed": 0}
    progress = [line for line in first.stderr.splitlines() if line.startswith("Indexing big: ")]
    assert progress[0] == "Indexing big: 0/1000 files, 0.0/0.1 MB"  # at once, before the first file
    assert progress[-1].startswith("Indexing big: 1000/1000 files, 0.1/0.1 MB, ")  # and once they are all done
    assert " files/s, " in progress[-1] and progress[-1].endswith(" MB/s")
    assert "1000 documents" in first.stdout
    second = run(str(folder))
    assert counts(second) == {"added": 0, "updated": 0, "unchanged": 1000, "removed": 0, "failed": 0}


def test_small_folders_get_no_progress_bar(docs: Path) -> None:
    assert "Indexing" not in run(str(docs)).stderr


def test_list_and_remove(docs: Path) -> None:
    assert run(str(docs), "--name", "kb").exit_code == 0
    listed = run("--list")
    assert listed.exit_code == 0
    rows = {line.split()[0]: line.split() for line in listed.stdout.splitlines()[1:]}
    assert rows["kb"][1:3] == ["indexed", "4"]
    assert int(rows["kb"][3]) >= 5  # intro.md alone has two sections
    assert rows["python-reference"][1:3] == ["builtin", "79"]
    removed = run("--remove", "kb")
    assert removed.exit_code == 0 and "Removed collection 'kb' (4 documents)" in removed.stdout
    assert "kb" not in {line.split()[0] for line in run("--list").stdout.splitlines()}
    assert sql("SELECT COUNT(*) FROM chunks_fts WHERE chunks_fts MATCH 'plutonium'") == [(0,)]


def test_reindex_under_a_new_name_is_refused(docs: Path) -> None:
    assert run(str(docs)).exit_code == 0
    result = run(str(docs), "--name", "other")
    assert result.exit_code == 1 and "already indexed as 'docs'" in result.output


def test_name_taken_by_another_folder_is_refused(docs: Path, tmp_path: Path) -> None:
    write(tmp_path / "second" / "x.md", "x\n")
    assert run(str(docs), "--name", "kb").exit_code == 0
    result = run(str(tmp_path / "second"), "--name", "kb")
    assert result.exit_code == 1 and "collection 'kb' already exists" in result.output


def test_default_names_that_clash_get_a_suffix(tmp_path: Path) -> None:
    write(tmp_path / "a" / "docs" / "x.md", "one\n")
    write(tmp_path / "b" / "docs" / "y.md", "two\n")
    assert run(str(tmp_path / "a" / "docs")).exit_code == 0
    result = run(str(tmp_path / "b" / "docs"))
    assert result.exit_code == 0 and re.search(r"as 'docs-[0-9a-f]{6}'", result.stdout)


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["/no/such/folder"], 1, "folder '/no/such/folder' does not exist"),
        ([], 2, "give exactly one of DIRECTORY, --list or --remove NAME"),
        (["--list", "--remove", "x"], 2, "give exactly one of"),
        (["--list", "--name", "x"], 2, "--name goes with DIRECTORY"),
        (["--remove", "nope"], 1, "no collection named 'nope'"),
        (["--remove", "python-reference"], 1, "built-in reference and cannot be removed"),
    ],
)
def test_cli_errors_are_one_clear_line(args: list[str], code: int, message: str) -> None:
    result = run(*args)
    assert result.exit_code == code
    assert message in result.output
    assert "Traceback" not in result.output
    assert isinstance(result.exception, SystemExit)  # a clean exit, not a crash


def test_a_file_instead_of_a_folder(tmp_path: Path) -> None:
    file = write(tmp_path / "a.md", "x\n")
    result = run(str(file))
    assert result.exit_code == 1 and "is not a folder" in result.output


def test_invalid_name(docs: Path) -> None:
    result = run(str(docs), "--name", "Bad Name/../x")
    assert result.exit_code == 1 and "invalid collection name" in result.output


def test_empty_folder_indexes_nothing_and_fails(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    write(tmp_path / "empty" / "image.png", b"\x89PNG")
    result = run(str(tmp_path / "empty"))
    assert result.exit_code == 1
    assert "nothing indexed" in result.output and "no md, txt, html or pdf files found" in result.output
    assert "empty" not in run("--list").stdout  # no empty collection left behind


def test_all_files_failing_is_an_error(tmp_path: Path) -> None:
    write(tmp_path / "bad" / "a.pdf", b"garbage")
    result = run(str(tmp_path / "bad"))
    assert result.exit_code == 1 and "every supported file failed" in result.output


# Entries that name their targets in plain text: an index page under today's rules.
CROSS_REFERENCE = (
    "<html><body><ul>" + "".join(f"<li>term{n} - page{n}.html</li>" for n in range(60)) + "</ul></body></html>"
)


def test_files_extracted_by_older_rules_are_extracted_again(docs: Path) -> None:
    assert run(str(docs)).exit_code == 0
    sql_write("UPDATE documents SET extraction = 0 WHERE path = 'notes.txt'")  # as an older Sleuth left it
    result = run(str(docs))
    assert counts(result) == {"added": 0, "updated": 1, "unchanged": 3, "removed": 0, "failed": 0}
    assert sql("SELECT DISTINCT extraction FROM documents WHERE path = 'notes.txt'") == [(EXTRACTION_VERSION,)]
    assert counts(run(str(docs)))["unchanged"] == 4  # and once only


def test_a_page_that_todays_rules_skip_leaves_the_index_on_the_next_run(docs: Path) -> None:
    page = write(docs / "web/crossref.html", CROSS_REFERENCE)
    assert run(str(docs)).exit_code == 0
    assert sql("SELECT COUNT(*) FROM documents WHERE path = 'web/crossref.html'") == [(0,)]
    # An older Sleuth indexed it as a page; the file has not changed since.
    digest = hashlib.sha256(page.read_bytes()).hexdigest()
    for extraction, left in ((EXTRACTION_VERSION, 1), (0, 0)):
        sql_write(
            "INSERT INTO documents (collection_id, path, url, title, mtime, size, hash, extraction, text, indexed_at)"
            f" SELECT id, 'web/crossref.html', 'corpus://docs/web/crossref.html', 'Crossreference',"
            f" {page.stat().st_mtime}, {page.stat().st_size}, '{digest}', {extraction}, 'term0', 0"
            " FROM collections WHERE name = 'docs'"
        )
        result = run(str(docs))
        assert result.exit_code == 0, result.output
        # made by today's rules, the unchanged file is left alone; made by older ones, it is read again
        assert sql("SELECT COUNT(*) FROM documents WHERE path = 'web/crossref.html'") == [(left,)]
        sql_write("DELETE FROM documents WHERE path = 'web/crossref.html'")


async def test_a_page_shipped_under_two_names_is_one_search_result(tmp_path: Path) -> None:
    page = "# Database File Format\n\nEach b-tree page holds cells of the flux format.\n"
    write(tmp_path / "docs/fileformat.md", page)
    write(tmp_path / "docs/fileformat2.md", page)
    write(tmp_path / "docs/notes.md", "# Notes\n\nThe flux format changed once.\n")
    assert run(str(tmp_path / "docs")).exit_code == 0
    urls = await search_urls("flux format b-tree page")
    assert urls == ["corpus://docs/fileformat.md", "corpus://docs/notes.md"]
