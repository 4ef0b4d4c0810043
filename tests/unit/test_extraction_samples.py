"""Extraction on real manual pages (DocBook and Sphinx) saved from Debian's documentation packages."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sleuth.tools.extraction.html import html_document
from sleuth.tools.local.chunking import chunk_text
from sleuth.tools.local.extract import Skip, extract

SAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "html"
NAVIGATION = re.compile(
    r"\bPrev\b|\bNext\b.{0,5}$|\bUp\b\s*Chapter|Home\s+Next|\u00b6|Previous topic|Show Source", re.M
)


def page(name: str):  # type: ignore[no-untyped-def]
    return html_document((SAMPLES / name).read_bytes())


def test_docbook_page_keeps_content_and_drops_the_prev_up_next_bars() -> None:
    doc = page("pg-transaction-iso.html")
    assert doc.kind == "page" and doc.title == "13.2. Transaction Isolation"
    assert doc.text.startswith("## 13.2. Transaction Isolation\n\nThe SQL standard defines four levels")
    assert not NAVIGATION.search(doc.text)
    assert "13.2.1. Read Committed Isolation Level" in doc.text  # as a heading, not as a contents entry
    assert doc.text.count("13.2.1. Read Committed Isolation Level") == 1


def test_docbook_table_rows_stay_together() -> None:
    text = page("pg-transaction-iso.html").text
    assert (
        "| Isolation Level | Dirty Read | Nonrepeatable Read | Phantom Read | Serialization Anomaly |\n"
        "| --- | --- | --- | --- | --- |\n"
        "| Read uncommitted | Allowed, but not in PG | Possible | Possible | Possible |\n"
    ) in text


def test_docbook_code_blocks_keep_their_lines() -> None:
    text = page("pg-tutorial-select.html").text
    assert "SELECT * FROM weather;" in text
    assert re.search(r"^\s+city\s+\| temp_lo \| temp_hi \| prcp \|\s+date$", text, re.M)


def test_sphinx_page_keeps_code_and_drops_navigation_and_pilcrows() -> None:
    doc = page("py-controlflow.html")
    assert doc.kind == "page" and doc.title == "4. More Control Flow Tools"
    assert ">>> if x < 0:\n...     x = 0\n...     print('Negative changed to zero')" in doc.text
    assert not NAVIGATION.search(doc.text)
    assert "Table of Contents" not in doc.text and "This Page" not in doc.text


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("pg-ddl-toc.html", "toc"),
        ("py-reference-toc.html", "toc"),
        ("py-genindex-Z.html", "index"),
        # entries that name their targets in plain text ("json_array → json1.html#jobj"), not as links
        ("sqlite-backlink-crossref.html", "index"),
    ],
)
def test_contents_and_index_pages_are_recognised_and_not_indexed(name: str, kind: str) -> None:
    assert page(name).kind == kind
    with pytest.raises(Skip, match="not indexed"):
        extract(SAMPLES / name, (SAMPLES / name).read_bytes())


def test_no_chunk_of_the_samples_holds_navigation_text() -> None:
    for name in ("pg-transaction-iso.html", "pg-tutorial-select.html", "py-controlflow.html"):
        out = extract(SAMPLES / name, (SAMPLES / name).read_bytes())
        for chunk in chunk_text(out.text, out.title):
            assert not NAVIGATION.search(chunk.body), (name, chunk.body[:200])


def test_a_page_nested_a_thousand_deep_is_walked_without_recursion() -> None:
    # 1200 <li>s without end tags: Python's parser nests each in the one before.
    doc = page("sqlite-backlink-crossref.html")
    items = [block for block in doc.text.split("\n\n") if block.startswith("- ")]
    assert len(items) == 1200
    assert items[0] == "- --safe command-line option \u2192 changes.html#version_3_37_0"
    assert items[-1] == "- json_array \u2192 json1.html#jobj"


@pytest.mark.parametrize(
    ("name", "title", "prose"),
    [
        ("sqlite-c3ref-bind-parameter-index.html", "Index Of A Parameter With A Given Name", "Return the index of an"),
        ("sqlite-c3ref-context.html", "SQL Function Context Object", "The context in which an SQL function executes"),
        ("sqlite-c3ref-sqlite3.html", "Database Connection Handle", "Each open SQLite database is represented"),
    ],
)
def test_api_pages_with_prose_are_indexed_whatever_their_links_or_title(name: str, title: str, prose: str) -> None:
    # An "Index Of ..." title, or a list of 76 methods, does not make an API page an index or contents page.
    doc = page(name)
    assert (doc.kind, doc.title) == ("page", title)
    out = extract(SAMPLES / name, (SAMPLES / name).read_bytes())
    assert out.title == title and prose in out.text


def test_table_rows_without_end_tags_are_one_row_each() -> None:
    text = page("sqlite-c3ref-column-blob.html").text
    assert (
        "| sqlite3_column_blob | \u2192 | BLOB result |\n"
        "| sqlite3_column_double | \u2192 | REAL result |\n"
        "| sqlite3_column_int | \u2192 | 32-bit INTEGER result |\n"
    ) in text
    assert text.count("sqlite3_column_double \u2192 REAL result") == 0  # no row repeats the rows after it
