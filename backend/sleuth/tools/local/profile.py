"""A collection's profile: what it is about, built from its own index with no model.

Built when a collection is indexed, re-indexed or uploaded into (and for collections indexed
before profiles existed, by the schema's version-3 migration). Two parts:

* `collection_terms`: for every stemmed term, in how many of the collection's chunks it occurs.
  Routing (routing.py) compares these counts between collections for a question's terms.
* `collection_profiles`: a title, the kind, document and chunk counts, its most characteristic
  terms (those much more frequent in its chunks than in the other collections') and a few sample
  headings, for people (`sleuth sources`, the run header) and for a reason that names terms.
"""

from __future__ import annotations

import json
import math
import re
import sqlite3
import sys
import time
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

from sleuth.core.words import FUNCTION_WORDS, stem

# The unicode61 tokenizer's split (letters and digits; `_` separates), as the search query uses.
_TOKEN = re.compile(r"[^\W_]+")
_MAX_TERM_CHARS = 40
CHARACTERISTIC_TERMS = 24
SAMPLE_HEADINGS = 5


@dataclass(frozen=True)
class Profile:
    name: str
    title: str
    kind: str
    documents: int
    chunks: int
    terms: list[str]
    headings: list[str]


# Documents repeat their vocabulary: stemming each distinct word once keeps a big collection's
# profile quick to build.
_stem = lru_cache(maxsize=1 << 17)(stem)


def term_forms(text: str) -> dict[str, str]:
    """The distinct stemmed content terms of `text` ("descriptors" and "descriptor" meet), each
    with the first word of the text that has it: function words, numbers and one-letter tokens dropped."""
    forms: dict[str, str] = {}
    for word in dict.fromkeys(w.lower() for w in _TOKEN.findall(text)):
        if 1 < len(word) <= _MAX_TERM_CHARS and not word.isdigit() and word not in FUNCTION_WORDS:
            forms.setdefault(_stem(word), word)
    return forms


def _title(name: str, kind: str, root: str | None) -> str:
    if kind == "builtin":
        return f"The Python language reference (Python {sys.version_info.major}.{sys.version_info.minor})"
    if kind == "uploaded":
        return f"{name}: uploaded files"
    return f"{name}: {root}" if root else name


def build_profile(conn: sqlite3.Connection, collection_id: int) -> None:
    """(Re)build one collection's term counts and profile, then every profile's characteristic
    terms (they are relative to the other collections). Call inside a write transaction."""
    build_profiles(conn, [collection_id])


def build_profiles(conn: sqlite3.Connection, collection_ids: list[int]) -> None:
    """`build_profile` for several collections, with the characteristic terms, which read every
    collection's counts, worked out once after all of them. Call inside a write transaction."""
    for collection_id in collection_ids:
        _count(conn, collection_id)
    _characteristic_terms(conn)


def _count(conn: sqlite3.Connection, collection_id: int) -> None:
    """One collection's term counts and its profile row, characteristic terms aside."""
    row = conn.execute("SELECT name, kind, root FROM collections WHERE id = ?", (collection_id,)).fetchone()
    if row is None:
        return
    counts: Counter[str] = Counter()
    words: dict[str, str] = {}
    chunks = 0
    for chunk in conn.execute(
        "SELECT ch.title, ch.heading, ch.body FROM chunks ch JOIN documents d ON d.id = ch.document_id"
        " WHERE d.collection_id = ?",
        (collection_id,),
    ):
        chunks += 1
        forms = term_forms(f"{chunk[0]}\n{chunk[1]}\n{chunk[2]}")
        counts.update(forms.keys())
        for term, word in forms.items():
            words.setdefault(term, word)
    documents = conn.execute("SELECT COUNT(*) FROM documents WHERE collection_id = ?", (collection_id,)).fetchone()[0]
    # The biggest documents' titles say what a collection mostly holds.
    headings = [
        r[0]
        for r in conn.execute(
            "SELECT title FROM documents WHERE collection_id = ? ORDER BY size DESC, path LIMIT ?",
            (collection_id, SAMPLE_HEADINGS),
        )
    ]
    conn.execute("DELETE FROM collection_terms WHERE collection_id = ?", (collection_id,))
    conn.executemany(
        "INSERT INTO collection_terms (term, collection_id, chunks, word) VALUES (?, ?, ?, ?)",
        ((term, collection_id, n, words[term]) for term, n in counts.items()),
    )
    conn.execute(
        "INSERT INTO collection_profiles (collection_id, title, kind, documents, chunks, terms, headings, built_at)"
        " VALUES (?, ?, ?, ?, ?, '[]', ?, ?) ON CONFLICT (collection_id) DO UPDATE SET title = excluded.title,"
        " kind = excluded.kind, documents = excluded.documents, chunks = excluded.chunks,"
        " headings = excluded.headings, built_at = excluded.built_at",
        (
            collection_id,
            _title(row["name"], row["kind"], row["root"]),
            row["kind"],
            documents,
            chunks,
            json.dumps(headings),
            time.time(),
        ),
    )


def _characteristic_terms(conn: sqlite3.Connection) -> None:
    """Each profile's terms: by how much more often they occur in its chunks than in every other
    collection's together (a log ratio, weighted by the term's own frequency), or, with no other
    collection, by tf-idf within it."""
    sizes = {r[0]: max(1, int(r[1])) for r in conn.execute("SELECT collection_id, chunks FROM collection_profiles")}
    everything = sum(sizes.values())
    totals = {r[0]: int(r[1]) for r in conn.execute("SELECT term, SUM(chunks) FROM collection_terms GROUP BY term")}
    for collection_id, size in sizes.items():
        others = everything - size
        scored: list[tuple[float, str, str]] = []
        for term, n, word in conn.execute(
            "SELECT term, chunks, word FROM collection_terms WHERE collection_id = ?", (collection_id,)
        ):
            if n < 2:
                continue
            share = n / size
            if others:
                elsewhere = (totals[term] - n + 0.5) / others
                score = share * math.log(share / elsewhere)
            else:
                score = share * math.log(size / n)
            scored.append((-score, term, word))
        terms = [word for _, _, word in sorted(scored)[:CHARACTERISTIC_TERMS]]
        conn.execute(
            "UPDATE collection_profiles SET terms = ? WHERE collection_id = ?", (json.dumps(terms), collection_id)
        )


def build_missing(conn: sqlite3.Connection) -> None:
    """Profiles for the collections that have none (call inside a write transaction)."""
    missing = conn.execute("SELECT id FROM collections WHERE id NOT IN (SELECT collection_id FROM collection_profiles)")
    build_profiles(conn, [int(row[0]) for row in missing.fetchall()])


def has_profile(conn: sqlite3.Connection, collection_id: int) -> bool:
    found = conn.execute("SELECT 1 FROM collection_profiles WHERE collection_id = ?", (collection_id,)).fetchone()
    return found is not None


def profiles(conn: sqlite3.Connection) -> list[Profile]:
    """Every stored profile, the built-in first, then by name."""
    rows = conn.execute(
        "SELECT c.name, p.title, p.kind, p.documents, p.chunks, p.terms, p.headings FROM collection_profiles p"
        " JOIN collections c ON c.id = p.collection_id ORDER BY c.kind = 'builtin' DESC, c.name"
    ).fetchall()
    return [
        Profile(r[0], r[1], r[2], int(r[3]), int(r[4]), list(json.loads(r[5])), list(json.loads(r[6]))) for r in rows
    ]
