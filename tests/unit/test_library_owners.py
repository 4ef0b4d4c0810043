"""Who sees and changes which collection (tools/local/access.py), in the library itself: a user's
upload is private until shared; search, routing and reading see only what the viewer sees; a corpus
index from before collections had owners keeps its collections shared."""

from __future__ import annotations

import io
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from sleuth.config import Settings
from sleuth.tools.base import ToolError
from sleuth.tools.local import library
from sleuth.tools.local.access import BUILT_IN, Viewer
from sleuth.tools.local.corpus import LocalCorpus
from sleuth.tools.local.extract import extract
from sleuth.tools.local.schema import SCHEMA_VERSION, connect
from sleuth.tools.sources import UnknownSource, check_sources, default_names, list_sources

LIMITS = library.UploadLimits(max_file_bytes=1_000_000, max_files=5)
ALICE = Viewer("u_alice")
BOB = Viewer("u_bob")
ADMIN = Viewer("u_root", admin=True)
NOTE = b"# Zebu notes\n\nZebu graze on the upland pastures at dawn.\n"


def in_process(path: Path, name: str, text_file: Path) -> str:
    extracted = extract(Path(name), path.read_bytes())
    text_file.write_text(extracted.text, encoding="utf-8")
    return extracted.title


def upload(db: Path, collection: str, viewer: Viewer, name: str = "zebu.md", data: bytes = NOTE) -> str:
    files = [library.Upload(name, len(data), io.BytesIO(data))]
    return library.add_uploads(db, collection, files, LIMITS, in_process, viewer=viewer).added[0].id


def urls(corpus: LocalCorpus, query: str = "zebu pastures") -> list[str]:
    return [doc.url for doc in corpus.search(query, 10, question="Where do zebu graze?")]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "corpus.db"


def test_an_upload_is_its_owners_alone_in_every_read_and_write(db: Path) -> None:
    doc_id = upload(db, "zebu", ALICE)
    assert library.document_by_id(db, doc_id, viewer=ALICE) is not None
    assert library.document_by_id(db, doc_id, viewer=BOB) is None
    assert library.document_by_url(db, "corpus://zebu/zebu.md", viewer=BOB) is None
    assert "zebu" not in [c.name for c in library.list_collections(db, viewer=BOB)]
    for refused in (
        lambda: library.list_documents(db, "zebu", viewer=BOB),
        lambda: library.find_collection(db, "zebu", viewer=ADMIN),  # administrators too
        lambda: library.delete_document(db, "zebu", doc_id, viewer=BOB),
        lambda: library.delete_collection(db, "zebu", viewer=BOB),
        lambda: upload(db, "zebu", BOB, "more.md"),
    ):
        with pytest.raises(library.LibraryError) as error:
            refused()
        assert (error.value.status, str(error.value)) == (404, "no collection named 'zebu'")
    assert [d.path for d in library.list_documents(db, "zebu", viewer=ALICE)] == ["zebu.md"]
    assert library.document_by_id(db, doc_id) is not None  # the built-in user (none, token, CLI) sees all


def test_shared_it_is_read_only_to_everyone_else(db: Path) -> None:
    doc_id = upload(db, "zebu", ALICE)
    assert library.set_shared(db, "zebu", True).shared
    assert library.document_by_id(db, doc_id, viewer=BOB) is not None
    for refused in (
        lambda: library.delete_document(db, "zebu", doc_id, viewer=BOB),
        lambda: library.delete_collection(db, "zebu", viewer=ADMIN),
        lambda: upload(db, "zebu", BOB, "more.md"),
    ):
        with pytest.raises(library.LibraryError) as error:
            refused()
        assert error.value.status == 403
        assert str(error.value) == "collection 'zebu' is read-only to you: it is another user's, shared read-only"
    upload(db, "zebu", ALICE, "more.md")  # its owner still adds to it
    assert not library.set_shared(db, "zebu", False).shared
    assert library.document_by_id(db, doc_id, viewer=BOB) is None


def test_an_upload_without_an_owner_is_everyones_and_administrators_change_it(db: Path) -> None:
    doc_id = upload(db, "zebu", BUILT_IN)  # made in `none` mode
    assert library.document_by_id(db, doc_id, viewer=BOB) is not None
    with pytest.raises(library.LibraryError) as error:
        library.delete_document(db, "zebu", doc_id, viewer=BOB)
    assert error.value.status == 403 and "only administrators change it" in str(error.value)
    upload(db, "zebu", ADMIN, "more.md")
    with pytest.raises(library.LibraryError) as error:
        library.set_shared(db, "zebu", True)
    assert (error.value.status, str(error.value)) == (409, "collection 'zebu' has no owner: every user already sees it")


def test_search_routing_and_reading_see_only_the_viewers_collections(db: Path) -> None:
    upload(db, "zebu", ALICE)
    url = "corpus://zebu/zebu.md"
    assert urls(LocalCorpus(db, None, viewer=ALICE)) == [url]
    assert urls(LocalCorpus(db, None)) == [url]
    for bobs in (LocalCorpus(db, None, viewer=BOB), LocalCorpus(db, None, collections=("zebu",), viewer=BOB)):
        assert urls(bobs) == []
        with pytest.raises(ToolError, match="No local corpus collection named 'zebu'"):
            bobs.read(url)
    routing = LocalCorpus(db, None, viewer=BOB).route("Where do zebu graze?")
    assert routing is not None and "zebu" not in [fit.name for fit in routing.fits]
    assert LocalCorpus(db, None, viewer=ALICE).read(url).text.endswith("at dawn.")


def test_sources_name_only_the_viewers_collections(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, search="local")
    upload(tmp_path / "corpus.db", "zebu", ALICE)
    assert "zebu" in [s.name for s in list_sources(settings, viewer=ALICE)]
    assert "zebu" not in [s.name for s in list_sources(settings, viewer=BOB)]
    assert "zebu" in default_names(settings, viewer=ALICE) and "zebu" not in default_names(settings, viewer=BOB)
    assert check_sources(settings, ["zebu"], viewer=ALICE) == ["zebu"]
    with pytest.raises(UnknownSource, match=r"^unknown source 'zebu' \(known sources: python-reference\)$"):
        check_sources(settings, ["zebu"], viewer=BOB)


def test_an_index_from_before_owners_keeps_its_uploads_shared(db: Path) -> None:
    doc_id = upload(db, "zebu", BUILT_IN)
    with closing(sqlite3.connect(db)) as conn:  # back to what version 3 wrote
        conn.executescript(
            "ALTER TABLE collections DROP COLUMN owner_id; ALTER TABLE collections DROP COLUMN shared;"
            " PRAGMA user_version = 3;"
        )
    with closing(connect(db)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        row = conn.execute("SELECT owner_id, shared FROM collections WHERE name = 'zebu'").fetchone()
    assert (row["owner_id"], row["shared"]) == (None, 0)
    found = library.document_by_id(db, doc_id, viewer=BOB)
    assert found is not None and found.text.endswith("at dawn.")
    assert urls(LocalCorpus(db, None, viewer=BOB)) == ["corpus://zebu/zebu.md"]
