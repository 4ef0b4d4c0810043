"""The local corpus as agents see it: `local` search over the built-in reference and folders, and corpus:// reading."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from contextlib import closing
from pathlib import Path
from pydoc_data.topics import topics

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from sleuth.cli.index import index
from sleuth.config import Settings
from sleuth.stream.documents import document_id
from sleuth.tools.base import PageReader, SearchProvider, ToolError
from sleuth.tools.local import retrieval
from sleuth.tools.local.access import BUILT_IN
from sleuth.tools.local.corpus import FolderChecks, LocalCorpus, db_path_for
from sleuth.tools.local.providers import build_local_tools
from sleuth.tools.local.query import fts_query
from sleuth.tools.local.retrieval import HIGHLIGHT_CLOSE, HIGHLIGHT_OPEN
from sleuth.tools.local.schema import connect
from sleuth.tools.toolbox import Toolbox

NASTY_QUERIES = [
    "",
    "   ",
    '"',
    '"unbalanced quote',
    "'single",
    "foo AND",
    "OR",
    "NOT descriptor",
    "AND OR NOT NEAR",
    "NEAR(descriptor get, 2)",
    "descriptor*",
    "*",
    "^start",
    "title:descriptor",
    "col : value",
    "-minus +plus",
    "(((",
    ")",
    "{a b}",
    "a \x00 b",
    "__get__()",
    "what is the",  # only stopwords
    "x" * 500,
    "🙂 émoji naïve",
    "SELECT * FROM chunks; --",
    "\\ / | ~ ` @ # $ % & = [ ] < >",
]


@pytest.fixture
def tools() -> tuple[SearchProvider, PageReader]:
    return build_local_tools(Settings())


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


async def test_factory_returns_the_protocols(tools: tuple[SearchProvider, PageReader]) -> None:
    search, reader = tools
    assert isinstance(search, SearchProvider) and search.name == "local"
    assert isinstance(reader, PageReader)


async def test_builtin_search_finds_descriptors_in_the_data_model(tools: tuple[SearchProvider, PageReader]) -> None:
    search, _ = tools
    docs = await search.search("descriptor __get__", limit=5)
    urls = [doc.url for doc in docs]
    # `attribute-access` holds "Implementing Descriptors" / "Invoking Descriptors".
    assert "corpus://python-reference/attribute-access" in urls[:3]
    top = docs[urls.index("corpus://python-reference/attribute-access")]
    assert top.title == "Customizing attribute access"
    assert top.source == "local"
    assert top.id == document_id(top.url)


async def test_one_document_per_url_and_limit_respected(tools: tuple[SearchProvider, PageReader]) -> None:
    search, _ = tools
    docs = await search.search("attribute access lookup class instance method", limit=4)
    assert len(docs) == 4
    assert len({doc.url for doc in docs}) == 4


async def test_snippets_highlight_matched_terms_in_plain_text(tools: tuple[SearchProvider, PageReader]) -> None:
    search, _ = tools
    docs = await search.search("context manager", limit=3)
    assert docs
    for doc in docs:
        # a matched phrase ("context manager") is one highlighted span
        assert f"{HIGHLIGHT_OPEN}context".lower() in doc.snippet.lower() and HIGHLIGHT_CLOSE in doc.snippet
        assert "<b>" not in doc.snippet and "\n" not in doc.snippet


async def test_multi_word_questions_match_with_some_terms(tools: tuple[SearchProvider, PageReader]) -> None:
    search, _ = tools
    # No passage contains every word; OR-ed terms still find the relevant topic.
    docs = await search.search(
        "How do Python descriptors and __getattr__ interact during attribute lookup zebra?", limit=6
    )
    assert any(doc.url.endswith("/attribute-access") for doc in docs)


@pytest.mark.parametrize("query", NASTY_QUERIES)
async def test_fts5_syntax_in_queries_never_raises(tools: tuple[SearchProvider, PageReader], query: str) -> None:
    search, _ = tools
    docs = await search.search(query, limit=5)
    assert isinstance(docs, list) and len(docs) <= 5


async def test_query_with_operators_still_searches_its_words(tools: tuple[SearchProvider, PageReader]) -> None:
    search, _ = tools
    docs = await search.search('NEAR("yield" AND generator*)', limit=5)
    assert any("yield" in doc.url for doc in docs)


async def test_empty_query_returns_nothing(tools: tuple[SearchProvider, PageReader]) -> None:
    search, _ = tools
    assert await search.search("?!  ...", limit=5) == []


@pytest.fixture(scope="module")
def shared_corpus(tmp_path_factory: pytest.TempPathFactory) -> LocalCorpus:
    corpus = LocalCorpus(tmp_path_factory.mktemp("hypo") / "corpus.db", None)
    corpus.ensure_ready()
    return corpus


@hsettings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=200))
def test_arbitrary_text_never_raises(shared_corpus: LocalCorpus, query: str) -> None:
    assert len(shared_corpus.search(query, 3)) <= 3


def test_snippets_ask_the_full_text_index_for_each_winner_by_id(shared_corpus: LocalCorpus) -> None:
    # Left to the planner, or given the ids as a list, the snippet query reads every match.
    statements: list[str] = []
    with closing(connect(shared_corpus.db_path)) as conn:
        conn.set_trace_callback(statements.append)
        assert retrieval.search(conn, fts_query("descriptor __get__ attribute"), retrieval.Scope(None, BUILT_IN), 6)
        conn.set_trace_callback(None)
        snippets = next(sql for sql in statements if "snippet(" in sql)
        plan = [row["detail"] for row in conn.execute("EXPLAIN QUERY PLAN " + snippets).fetchall()]
    outer = plan[plan.index("SCAN winners") + 1 :]
    assert outer[0].startswith("SCAN chunks_fts VIRTUAL TABLE INDEX 0:="), plan  # rowid = one winner


def _every_match_ranked(conn: sqlite3.Connection, match: str, scope: retrieval.Scope, limit: int) -> list[str]:
    """The documents a search must return, by ranking every match (what the search avoids doing)."""
    rows = conn.execute(
        f"""SELECT s.chunk_id, s.score, d.url, c.name, c.kind FROM (
            SELECT rowid AS chunk_id, bm25(chunks_fts, {retrieval.BM25_WEIGHTS}) AS score
            FROM chunks_fts WHERE chunks_fts MATCH ?) s
        JOIN chunks ch ON ch.id = s.chunk_id JOIN documents d ON d.id = ch.document_id
        JOIN collections c ON c.id = d.collection_id ORDER BY s.score, s.chunk_id""",
        (match,),
    ).fetchall()
    wanted = [r["url"] for r in rows if (r["kind"] != "env" if scope.names is None else r["name"] in scope.names)]
    return list(dict.fromkeys(wanted))[:limit]


def test_a_search_reads_the_best_chunks_and_finds_what_ranking_every_match_finds(tmp_path: Path) -> None:
    # A second collection whose every chunk mentions the words: the built-in reference's best
    # chunks fall in few documents, and a search of it alone must read past the other's.
    folder = tmp_path / "notes"
    folder.mkdir()
    for i in range(120):
        (folder / f"n{i}.md").write_text(f"# Attribute lookup {i}\n\n" + "descriptor attribute lookup class " * 40)
    assert (
        CliRunner().invoke(index, [str(folder), "--name", "notes"], env={"SLEUTH_DATA_DIR": str(tmp_path)}).exit_code
        == 0
    )
    corpus = LocalCorpus(tmp_path / "corpus.db", None)
    corpus.ensure_ready()
    questions = ["descriptor __get__ attribute lookup", "exception finally return", "class attribute", "yield"]
    scopes = [
        retrieval.Scope(None, BUILT_IN),
        retrieval.Scope(("python-reference",), BUILT_IN),
        retrieval.Scope(("notes",), BUILT_IN),
    ]
    statements: list[str] = []
    with closing(connect(corpus.db_path)) as conn:
        conn.set_trace_callback(statements.append)
        for question, scope, limit in [(q, s, n) for q in questions for s in scopes for n in (1, 6, 30)]:
            match = fts_query(question)
            assert match is not None
            found = [hit.url for hit in retrieval.search(conn, match, scope, limit)]
            assert found == _every_match_ranked(conn, match, scope, limit), (question, scope, limit)
    # Most searches stop at the first depth; the notes' 120 documents crowd out the reference's.
    ranked_everything = [sql for sql in statements if "ROW_NUMBER()" in sql]
    assert 0 < len(ranked_everything) < len(questions) * len(scopes) * 3 / 2


async def test_reader_returns_the_full_topic_text(tools: tuple[SearchProvider, PageReader]) -> None:
    _, reader = tools
    url = "corpus://python-reference/attribute-access"
    assert reader.handles(url)
    page = await reader.read(url)
    assert page.text == topics["attribute-access"].strip()
    assert len(page.text) > 5000  # the whole topic, not a chunk
    assert page.document.url == url and page.document.id == document_id(url)
    assert page.document.title == "Customizing attribute access"


async def test_reader_opens_urls_returned_by_search(tools: tuple[SearchProvider, PageReader]) -> None:
    search, reader = tools
    for doc in await search.search("exception handling try finally", limit=3):
        page = await reader.read(doc.url)
        assert page.document.url == doc.url and page.text


def test_reader_handles_only_corpus_urls(tools: tuple[SearchProvider, PageReader]) -> None:
    _, reader = tools
    assert reader.handles("corpus://docs/a.md")
    assert reader.handles("CORPUS://docs/a.md")
    assert not reader.handles("https://docs.python.org/3/reference/datamodel.html")
    assert not reader.handles("file:///etc/passwd")


@pytest.mark.parametrize(
    ("url", "message"),
    [
        (
            "corpus://python-reference/no-such-topic",
            "No document 'no-such-topic' in local corpus collection 'python-reference'",
        ),
        ("corpus://nowhere/a.md", "No local corpus collection named 'nowhere'"),
        ("corpus://python-reference", "Not a local corpus document URL"),
        ("https://example.com/a", "Not a local corpus document URL"),
    ],
)
async def test_unknown_urls_raise_tool_error(tools: tuple[SearchProvider, PageReader], url: str, message: str) -> None:
    _, reader = tools
    with pytest.raises(ToolError, match=message):
        await reader.read(url)


async def test_search_runs_off_the_event_loop_thread(
    tools: tuple[SearchProvider, PageReader], monkeypatch: pytest.MonkeyPatch
) -> None:
    search, _ = tools
    seen: list[int] = []
    original = LocalCorpus.search

    def spy(self: LocalCorpus, query: str, limit: int, *, question: str | None = None) -> list:
        seen.append(threading.get_ident())
        return original(self, query, limit, question=question)

    monkeypatch.setattr(LocalCorpus, "search", spy)
    await search.search("lambda", limit=2)
    assert seen and seen[0] != threading.get_ident()


async def test_concurrent_first_use_is_safe(tmp_path: Path) -> None:
    search, reader = build_local_tools(Settings())
    results = await asyncio.gather(*(search.search(q, limit=3) for q in ["lambda", "yield", "class", "import"]))
    assert all(results)
    corpus = search.corpus
    with closing(sqlite3.connect(corpus.db_path)) as conn:
        assert conn.execute("SELECT COUNT(*) FROM collections").fetchone()[0] == 1
        assert conn.execute("SELECT COUNT(*) FROM documents").fetchone()[0] > 70


async def test_toolbox_merges_local_results(tools: tuple[SearchProvider, PageReader]) -> None:
    search, reader = tools
    box = Toolbox(providers=[search], readers=[reader])
    outcome = await box.search("while loop else clause", limit=4)
    assert outcome.errors == [] and outcome.documents
    page = await box.read(outcome.documents[0].url)
    assert page.text


# SLEUTH_CORPUS


async def test_sleuth_corpus_folder_is_searched_instead_of_builtin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "My Notes"
    write(folder / "guide.md", "# Descriptor guide\n\nA descriptor implements __get__ for zanzibar lookups.\n")
    write(folder / "deep/dir/other notes.txt", "Unrelated text about gardening.\n")
    monkeypatch.setenv("SLEUTH_CORPUS", str(folder))
    search, reader = build_local_tools(Settings())
    docs = await search.search("descriptor __get__", limit=10)
    assert [doc.url for doc in docs] == ["corpus://my-notes/guide.md"]  # no python-reference hits
    assert docs[0].title == "Descriptor guide"
    garden = await search.search("gardening", limit=3)
    assert garden[0].url == "corpus://my-notes/deep/dir/other%20notes.txt"
    page = await reader.read(garden[0].url)
    assert page.text == "Unrelated text about gardening."
    for doc in docs + garden:
        assert str(tmp_path) not in doc.model_dump_json()  # no absolute paths leak
    # The built-in reference stays openable even when it is not searched.
    assert (await reader.read("corpus://python-reference/lambda")).text


async def test_sleuth_corpus_folder_is_reindexed_incrementally_on_next_first_use(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "kb"
    note = write(folder / "a.md", "alpha bravo\n")
    monkeypatch.setenv("SLEUTH_CORPUS", str(folder))
    monkeypatch.setenv("SLEUTH_CORPUS_CHECK_S", "0")  # check on every run
    search, _ = build_local_tools(Settings())
    assert await search.search("alpha", limit=3)
    note.write_text("charlie delta echo\n", encoding="utf-8")
    search, _ = build_local_tools(Settings())
    assert await search.search("alpha", limit=3) == []
    assert [d.url for d in await search.search("charlie", limit=3)] == ["corpus://kb/a.md"]


async def test_sleuth_corpus_folder_is_checked_at_most_every_corpus_check_s(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:

    now = [1000.0]
    checks = FolderChecks(now=lambda: now[0])
    folder = tmp_path / "kb"
    note = write(folder / "a.md", "alpha bravo\n")

    def corpus() -> LocalCorpus:
        return LocalCorpus(db_path_for(Settings().data_dir), str(folder), check_every_s=30, checks=checks)

    assert corpus().search("alpha", 3)
    note.write_text("charlie delta echo\n", encoding="utf-8")
    now[0] += 10
    assert corpus().search("alpha", 3)  # within 30 s: the index is used as it is
    now[0] += 25
    assert corpus().search("alpha", 3) == []
    assert [d.url for d in corpus().search("charlie", 3)] == ["corpus://kb/a.md"]


async def test_unset_corpus_searches_builtin_and_indexed_collections(tmp_path: Path) -> None:
    write(tmp_path / "team" / "notes.md", "# Notes\n\nOur lambda conventions: quuxify everything.\n")
    assert CliRunner().invoke(index, [str(tmp_path / "team")]).exit_code == 0
    search, _ = build_local_tools(Settings())
    urls = [d.url for d in await search.search("lambda quuxify", limit=10)]
    assert urls[0] == "corpus://team/notes.md"
    assert any(url.startswith("corpus://python-reference/") for url in urls)


async def test_env_folder_collection_is_not_searched_after_corpus_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path / "one" / "a.md", "wombat facts\n")
    monkeypatch.setenv("SLEUTH_CORPUS", str(tmp_path / "one"))
    search, _ = build_local_tools(Settings())
    assert await search.search("wombat", limit=3)
    monkeypatch.delenv("SLEUTH_CORPUS")
    search, _ = build_local_tools(Settings())
    assert await search.search("wombat", limit=3) == []


async def test_sleuth_corpus_may_name_an_indexed_collection(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLEUTH_CORPUS", "python-reference")
    search, _ = build_local_tools(Settings())
    assert await search.search("lambda", limit=2)


async def test_bad_sleuth_corpus_is_a_clear_tool_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLEUTH_CORPUS", str(tmp_path / "missing"))
    search, _ = build_local_tools(Settings())
    with pytest.raises(ToolError, match="neither a folder nor the name of an indexed collection"):
        await search.search("anything", limit=3)


async def test_bad_sleuth_corpus_still_lets_indexed_documents_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SLEUTH_CORPUS", str(tmp_path / "missing"))
    _, reader = build_local_tools(Settings())
    assert "lambda" in (await reader.read("corpus://python-reference/lambda")).text
