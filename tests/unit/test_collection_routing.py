"""Collection profiles built at index time, and searches routed to the collections that fit the question.

The fixture index holds the built-in reference and two small HTML folders (tests/fixtures/routing):
SQLite documentation pages and Python library pages. Both mention a cache and its size, so a plain
search for "cache size" finds pages in each; routed by the question, it finds only the right one.
"""

from __future__ import annotations

import io
import shutil
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest

from sleuth.tools.local import library
from sleuth.tools.local.builtin import sync_builtin
from sleuth.tools.local.corpus import LocalCorpus
from sleuth.tools.local.extract import extract
from sleuth.tools.local.folders import index_folder
from sleuth.tools.local.profile import profiles
from sleuth.tools.local.routing import route
from sleuth.tools.local.schema import SCHEMA_VERSION, connect
from sleuth.tools.local.store import CorpusStore

FIXTURES = Path(__file__).parents[1] / "fixtures" / "routing"
SQLITE_QUESTION = "How do I set the SQLite page cache size with a PRAGMA?"
PYTHON_QUESTION = "How does functools.lru_cache decide which entries to evict when its cache size is reached?"
ALL = ["python-reference", "pylib", "sqlitedocs"]


def build(db: Path, root: Path) -> None:
    for name in ("sqlitedocs", "pylib"):
        shutil.copytree(FIXTURES / name, root / name)
    with closing(connect(db)) as conn:
        store = CorpusStore(conn)
        sync_builtin(store)
        for name in ("sqlitedocs", "pylib"):
            index_folder(store, root / name, name=name, kind="indexed")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("routing")
    build(root / "corpus.db", root)
    return root


@pytest.fixture
def db(built: Path, tmp_path: Path) -> Iterator[Path]:
    """A private copy of the fixture index, for tests that change it (its folders stay where they were)."""
    shutil.copytree(built, tmp_path / "index")
    yield tmp_path / "index" / "corpus.db"


def hosts(corpus: LocalCorpus, query: str, question: str | None) -> set[str]:
    return {doc.url.split("/")[2] for doc in corpus.search(query, 10, question=question)}


def test_every_collection_gets_a_profile_when_it_is_indexed(db: Path) -> None:
    with closing(connect(db)) as conn:
        found = {p.name: p for p in profiles(conn)}
    assert list(found) == ALL  # the built-in first
    sqlite_docs, pylib, builtin = found["sqlitedocs"], found["pylib"], found["python-reference"]
    assert (sqlite_docs.kind, sqlite_docs.documents) == ("indexed", 4)
    assert sqlite_docs.title.startswith("sqlitedocs: ") and sqlite_docs.chunks >= 4
    assert "sqlite" in sqlite_docs.terms and "sqlite" not in pylib.terms
    assert {"PRAGMA Statements", "VACUUM"} <= set(sqlite_docs.headings)
    assert builtin.kind == "builtin" and builtin.title.startswith("The Python language reference")
    assert builtin.documents > 50 and builtin.terms and builtin.headings


def test_a_profile_is_refreshed_when_its_folder_is_indexed_again(tmp_path: Path) -> None:
    db = tmp_path / "corpus.db"
    build(db, tmp_path)
    folder = tmp_path / "sqlitedocs"
    (folder / "fts5.html").write_text(
        "<html><head><title>FTS5</title></head><body><h1>FTS5</h1><p>FTS5 is an SQLite virtual table module"
        " that provides full-text search functionality to database applications.</p></body></html>",
        encoding="utf-8",
    )
    with closing(connect(db)) as conn:
        index_folder(CorpusStore(conn), folder, name="sqlitedocs", kind="indexed")
        profile = {p.name: p for p in profiles(conn)}["sqlitedocs"]
        fts5 = conn.execute(
            "SELECT t.chunks FROM collection_terms t JOIN collections c ON c.id = t.collection_id"
            " WHERE c.name = 'sqlitedocs' AND t.term = 'fts5'"
        ).fetchone()
    assert profile.documents == 5 and fts5 is not None and fts5[0] == 1


def test_an_upload_gets_its_profile_and_a_deleted_document_leaves_it(db: Path) -> None:
    def in_process(path: Path, name: str, text_file: Path) -> str:
        extracted = extract(Path(name), path.read_bytes())
        text_file.write_text(extracted.text, encoding="utf-8")
        return extracted.title

    notes = b"# Sleuth notes\n\nSleuth runs research agents in parallel lanes and verifies every citation.\n"
    other = b"# Runbook\n\nDeploy with the blue-green switch; roll back when the smoke tests fail.\n"
    added = library.add_uploads(
        db,
        "uploads",
        [library.Upload("sleuth.md", None, io.BytesIO(notes)), library.Upload("runbook.md", None, io.BytesIO(other))],
        library.UploadLimits(max_file_bytes=1_000_000, max_files=5),
        in_process,
    ).added
    with closing(connect(db)) as conn:
        profile = {p.name: p for p in profiles(conn)}["uploads"]
    assert (profile.kind, profile.documents, profile.title) == ("uploaded", 2, "uploads: uploaded files")
    library.delete_document(db, "uploads", next(e.id for e in added if e.path == "runbook.md"))
    with closing(connect(db)) as conn:
        assert {p.name: p for p in profiles(conn)}["uploads"].documents == 1


def test_an_index_from_before_profiles_gets_them_by_its_migration(db: Path) -> None:
    with closing(sqlite3.connect(db)) as conn:  # back to version 2: no profile tables
        conn.executescript("DROP TABLE collection_terms; DROP TABLE collection_profiles; PRAGMA user_version = 2;")
    with closing(connect(db)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert [p.name for p in profiles(conn)] == ALL


def test_an_index_stemmed_by_older_rules_is_profiled_again_by_its_migration(db: Path) -> None:
    with closing(sqlite3.connect(db)) as conn:  # back to version 5: term counts under other stems
        conn.executescript("UPDATE collection_terms SET term = 'old:' || term; PRAGMA user_version = 5;")
    with closing(connect(db)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        terms = {row[0] for row in conn.execute("SELECT term FROM collection_terms")}
        assert terms and not any(term.startswith("old:") for term in terms)
        assert route(conn, SQLITE_QUESTION, ALL).searched == ("sqlitedocs",)


def test_routing_picks_the_collection_that_fits_the_question(db: Path) -> None:
    with closing(connect(db)) as conn:
        sqlite_route = route(conn, SQLITE_QUESTION, ALL)
        python_route = route(conn, PYTHON_QUESTION, ALL)
    assert sqlite_route.searched == ("sqlitedocs",)
    assert python_route.searched == ("pylib",)
    fits = {f.name: f for f in sqlite_route.fits}
    assert "sqlite" in fits["sqlitedocs"].reason and fits["pylib"].reason == "does not fit the question"


def test_a_question_that_tells_no_collection_apart_searches_every_one(db: Path) -> None:
    with closing(connect(db)) as conn:
        routing = route(conn, "What does it say about size?", ALL)
    assert routing.searched == tuple(ALL) and not routing.dropped


def test_a_search_bound_to_a_question_leaves_the_unrelated_collection_out(db: Path) -> None:
    corpus = LocalCorpus(db, None)
    assert {"sqlitedocs", "pylib"} <= hosts(corpus, "cache size", None)  # unrouted: both answer
    assert hosts(corpus, "cache size", SQLITE_QUESTION) == {"sqlitedocs"}
    assert hosts(corpus, "cache size", PYTHON_QUESTION) == {"pylib"}


def test_chosen_collections_win_over_routing(db: Path) -> None:
    chosen = LocalCorpus(db, None, collections=("pylib",))
    assert chosen.route(SQLITE_QUESTION) is None
    assert hosts(chosen, "cache size", SQLITE_QUESTION) == {"pylib"}


def test_a_search_the_fitting_collections_cannot_answer_goes_to_the_others(db: Path) -> None:
    corpus = LocalCorpus(db, None)
    # Routed to the SQLite pages by the question, but only the Python pages know "unpickling".
    assert hosts(corpus, "unpickling", SQLITE_QUESTION) == {"pylib"}


def test_an_uploaded_document_is_searched_only_for_questions_about_it(db: Path) -> None:
    def in_process(path: Path, name: str, text_file: Path) -> str:
        extracted = extract(Path(name), path.read_bytes())
        text_file.write_text(extracted.text, encoding="utf-8")
        return extracted.title

    paper = (
        b"# Sleuth: deep research with parallel agents\n\nSleuth plans research, runs research agents in"
        b" parallel lanes and verifies each citation of its report. The database stores sessions, and"
        b" the cache keeps model replies; its size is bounded.\n"
    )
    library.add_uploads(
        db,
        "papers",
        [library.Upload("sleuth.md", None, io.BytesIO(paper))],
        library.UploadLimits(max_file_bytes=1_000_000, max_files=5),
        in_process,
    )
    corpus = LocalCorpus(db, None)
    assert "papers" not in hosts(corpus, "cache size", SQLITE_QUESTION)
    assert "papers" in hosts(corpus, "research agents", "How do Sleuth's parallel research agents verify citations?")
