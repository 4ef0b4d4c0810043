"""Pure text pieces of the local corpus: chunking, query sanitising, extraction, corpus URLs."""

from __future__ import annotations

from pathlib import Path

import pytest

from sleuth.tools.local.builtin import builtin_sources, topic_title
from sleuth.tools.local.chunking import MAX_WORDS, chunk_text
from sleuth.tools.local.extract import ExtractError, extract
from sleuth.tools.local.query import MAX_TERMS, fts_query, terms
from sleuth.tools.local.urls import corpus_url, parse_corpus_url, slugify


def test_chunks_follow_markdown_and_underlined_headings() -> None:
    text = "Intro paragraph.\n\n# First\n\nAlpha.\n\nBeta.\n\nSecond part\n===========\n\nGamma.\n"
    chunks = chunk_text(text, "Doc")
    assert [(c.heading, c.body) for c in chunks] == [
        ("Doc", "Intro paragraph."),
        ("First", "Alpha.\n\nBeta."),
        ("Second part", "Gamma."),
    ]


def test_chunks_are_a_few_hundred_words() -> None:
    paragraph = " ".join(f"word{i}" for i in range(90)) + "."
    text = "\n\n".join([paragraph] * 20)  # 1,800 words in 20 paragraphs
    chunks = chunk_text(text, "T")
    sizes = [len(c.body.split()) for c in chunks]
    assert all(150 <= n <= MAX_WORDS for n in sizes[:-1]), sizes
    assert sum(sizes) == 1800  # nothing lost, nothing duplicated


def test_giant_paragraph_is_split() -> None:
    text = " ".join(["lorem"] * 1000)  # no sentence ends at all
    sizes = [len(c.body.split()) for c in chunk_text(text, "T")]
    assert max(sizes) <= MAX_WORDS and sum(sizes) == 1000


def test_title_only_document_still_has_a_chunk() -> None:
    assert [c.body for c in chunk_text("", "Just a title")] == ["Just a title"]


def test_builtin_topics_have_real_titles() -> None:
    assert topic_title("with", 'The "with" statement\n********************\n\nbody') == 'The "with" statement'
    assert topic_title("odd", "no underline here\nbody") == "odd"
    sources = builtin_sources()
    assert len(sources) > 50
    titles = {s.path: s.parse(s.read()).title for s in sources}
    assert titles["attribute-access"] == "Customizing attribute access"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("descriptor __get__", '"descriptor" OR "get" OR "descriptor get"'),
        ('NEAR("a" AND b*)', '"near" OR "b"'),  # operators and single letters are words, quoted
        ("What is the GIL?", '"gil"'),
        ("the", '"the"'),  # only stopwords: keep them rather than search nothing
        ("?!", None),
        ("", None),
        ("Ça déjà-vu", '"ça" OR "déjà" OR "vu" OR "ça déjà" OR "déjà vu"'),
        ("x x X", '"x"'),
        # an identifier is also searched as the phrase of its parts, which the index stores in order,
        # and so is each pair of adjacent content words
        ("subprocess.run output", '"subprocess" OR "run" OR "output" OR "subprocess run" OR "run output"'),
        ("lru_cache", '"lru" OR "cache" OR "lru cache"'),
        (
            "the global interpreter lock",
            '"global" OR "interpreter" OR "lock" OR "global interpreter" OR "interpreter lock"',
        ),
    ],
)
def test_fts_query_quotes_every_term(text: str, expected: str | None) -> None:
    assert fts_query(text) == expected


def test_query_terms_are_capped() -> None:
    assert len(terms(" ".join(f"t{i}" for i in range(100)))) == MAX_TERMS


def test_html_extraction_drops_chrome_and_keeps_headings(tmp_path: Path) -> None:
    html = (
        b"<html><head><title> The  Title </title><style>p{}</style></head><body>"
        b"<header>Site header</header><h1>Main</h1><p>First <i>para</i>.</p>"
        b"<ul><li>one</li><li>two</li></ul><pre>def f():\n    return 1</pre><footer>Copyright</footer></body></html>"
    )
    out = extract(tmp_path / "a.html", html)
    assert out.title == "The Title"
    assert out.text == "# Main\n\nFirst para.\n\n- one\n\n- two\n\ndef f():\n    return 1"
    assert "Copyright" not in out.text and "Site header" not in out.text


def test_markdown_title_from_front_matter_or_h1(tmp_path: Path) -> None:
    assert extract(tmp_path / "a.md", b"---\ntitle: 'Front'\n---\n# H1\n\nbody").title == "Front"
    assert extract(tmp_path / "a.md", b"intro line\n\n# Heading One\n\nbody").title == "Heading One"
    long_first = ("word " * 40).encode()
    assert extract(tmp_path / "notes.txt", long_first).title == "notes"


def test_binary_and_empty_files_are_extract_errors(tmp_path: Path) -> None:
    with pytest.raises(ExtractError, match="binary"):
        extract(tmp_path / "a.txt", b"abc\x00def")
    with pytest.raises(ExtractError, match="no text"):
        extract(tmp_path / "a.md", b"  \n ")
    with pytest.raises(ExtractError, match="could not read the PDF"):
        extract(tmp_path / "a.pdf", b"%PDF-1.7\n1 0 obj <<")


def test_corpus_urls_round_trip_awkward_paths() -> None:
    url = corpus_url("docs", "sub dir/ünï #1?.md")
    assert " " not in url and "#" not in url and "?" not in url
    assert parse_corpus_url(url) == ("docs", "sub dir/ünï #1?.md")
    assert parse_corpus_url("CORPUS://Docs/a.md/") == ("docs", "a.md")
    with pytest.raises(ValueError):
        parse_corpus_url("corpus://docs/")
    assert slugify("My Notes (2024)") == "my-notes-2024"
    assert slugify("???") == "corpus"
