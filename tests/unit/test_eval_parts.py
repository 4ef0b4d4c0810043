"""The pieces of `sleuth eval`: question files, gold and key-fact matching, append-only output, summaries."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from sleuth.evaluation.files import append_line, read_lines, written_ids
from sleuth.evaluation.metrics import RunTrace, fact_found, gold_matches, gold_share, key_fact_recall, question_metrics
from sleuth.evaluation.questions import EvalInputError, EvalQuestion, alternatives, load_questions
from sleuth.evaluation.summary import calibration, summarise, summary_table
from sleuth.stream.documents import Document
from sleuth.stream.packets import NumberedSource
from sleuth.stream.results import ResearchResult

EVAL_SETS = sorted((Path(__file__).resolve().parents[2] / "eval").glob("*.jsonl"))
# Sets that judge answers (gold pages and key facts); claim_labels.jsonl labels claims instead.
QUESTION_SETS = [path for path in EVAL_SETS if path.name != "claim_labels.jsonl"]


def questions_file(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "q.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_questions_accept_drb_lines_and_optional_gold_data(tmp_path: Path) -> None:
    path = questions_file(
        tmp_path,
        '{"id": 7, "topic": "Science", "language": "en", "prompt": "  Why?  "}',
        "",
        '{"id": "b", "prompt": "How?", "gold_sources": ["x.html"], "key_facts": ["a", ["b", "c"]]}',
    )
    first, second = load_questions(path)
    assert (first.id, first.key, first.prompt, first.gold_sources) == (7, "7", "Why?", [])
    assert second.key_facts == ["a", ["b", "c"]]


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (['{"id": 1, "prompt": "a"}', "[1, 2]"], ":2: expected a JSON object with `id` and `prompt`"),
        (['{"id": 1, "prompt": "a"}', '{"prompt": "b"}'], ":2: id: Field required"),
        (['{"id": 1, "prompt": " "}'], ":1: prompt: Value error, the prompt is empty"),
        (['{"id": 1, "prompt": "a", "key_facts": [[]]}'], ":1: key_facts: Value error, a key fact is empty"),
        (
            ['{"id": 1, "prompt": "a", "gold_sources": [["x", " "]]}'],
            ":1: gold_sources: Value error, a gold source is empty",
        ),
        (['{"id": 1, "prompt": "a"}', '{"id": "1", "prompt": "b"}'], ":2: id '1' repeats line 1"),
        (['{"id": 1, "prompt": "a", "split": "train"}'], ":1: split: Input should be 'tune' or 'heldout'"),
        (["", "  "], ": no questions"),
    ],
)
def test_bad_question_lines_name_their_line(tmp_path: Path, lines: list[str], message: str) -> None:
    path = questions_file(tmp_path, *lines)
    with pytest.raises(EvalInputError) as error:
        load_questions(path)
    assert str(error.value) == f"{path}{message}"


def test_gold_sources_match_urls_or_path_suffixes_on_a_boundary() -> None:
    url = "file:///usr/share/doc/postgresql-doc-15/html/transaction-iso.html"
    assert gold_matches("transaction-iso.html", url)
    assert gold_matches("html/transaction-iso.html", url)
    assert not gold_matches("iso.html", url)  # a suffix must start at a path segment
    assert gold_matches("https://WWW.example.org/a/", "https://example.org/a")
    assert not gold_matches("https://example.org/a", "https://example.org/a/b")
    assert gold_share(["with", "missing"], ["corpus://python-reference/with"]) == 0.5
    assert gold_share([], ["corpus://python-reference/with"]) is None


def test_a_gold_source_may_list_copies_of_one_page() -> None:
    copies = ["/fileformat2.html", "/fileformat.html"]
    assert gold_share([copies], ["corpus://sqlite/fileformat.html"]) == 1.0
    assert gold_share([copies, "/pragma.html"], ["corpus://sqlite/fileformat2.html"]) == 0.5
    assert gold_share([copies], ["corpus://sqlite/fileformat3.html"]) == 0.0


def test_key_fact_recall_is_case_and_space_insensitive_with_alternatives() -> None:
    report = "The  Context\nManager calls __exit__."
    assert key_fact_recall(["context manager", ["__enter__", "__EXIT__"], "finally"], report) == 2 / 3
    assert key_fact_recall([], report) is None


def test_appending_after_a_torn_line_keeps_both_lines_intact(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    path.write_text('{"id": 1}\n{"id": 2, "trunc')  # a crash mid-write
    append_line(path, {"id": 3, "text": "é"})
    assert read_lines(path) == [{"id": 1}, {"id": 3, "text": "é"}]
    assert written_ids(path) == {"1", "3"}
    assert path.read_text(encoding="utf-8").endswith('\n{"id": 3, "text": "é"}\n')


def test_summary_averages_only_questions_that_have_a_measure() -> None:
    records = [
        {"id": 1, "gold_cited": 1.0, "key_fact_recall": 0.5, "claims_checked": 4, "claims_unsupported": 1,
         "stop_reason": "completed", "race": {"overall": 7.0, "depth": 6}},
        {"id": 2, "gold_cited": None, "key_fact_recall": 1.0, "claims_checked": 6, "claims_unsupported": 0,
         "stop_reason": "deadline", "race": {"error": "no scores"}},
    ]  # fmt: skip
    summary = summarise(records)
    assert summary["questions"] == 2 and summary["stop_reasons"] == {"completed": 1, "deadline": 1}
    assert summary["means"]["gold_cited"] == 1.0 and summary["means"]["key_fact_recall"] == 0.75
    assert summary["means"]["words"] is None and summary["unsupported_claim_rate"] == 0.1
    assert summary["means"]["race"]["overall"] == 7.0 and summary["means"]["race"]["readability"] is None
    table = summary_table(summary)
    rows = dict(re.split(r"\s{2,}", line, maxsplit=1) for line in table.splitlines())
    assert rows["mean key_fact_recall"] == "0.750" and rows["judge overall"] == "7.000" and rows["mean words"] == "—"
    json.dumps(summary)  # summary.json must serialise


def test_a_question_says_whether_it_may_be_tuned_on(tmp_path: Path) -> None:
    path = questions_file(
        tmp_path,
        '{"id": 1, "prompt": "a", "split": "tune"}',
        '{"id": 2, "prompt": "b", "split": "heldout"}',
        '{"id": 3, "prompt": "c"}',
    )
    assert [q.split for q in load_questions(path)] == ["tune", "heldout", None]


@pytest.mark.parametrize("path", QUESTION_SETS, ids=lambda path: path.name)
def test_public_sets_mark_every_question_and_their_facts_add_to_the_question(path: Path) -> None:
    """A key fact the question already contains is found in any report that repeats the question:
    it measures nothing."""
    questions = load_questions(path)
    assert all(q.split in ("tune", "heldout") for q in questions)
    assert any(q.split == "heldout" for q in questions) or path.name in ("python_reference.jsonl", "sqlite_pages.jsonl")
    for question in questions:
        assert question.gold_sources and question.key_facts, question.key
        echoed = [fact for fact in question.key_facts if fact_found(fact, question.prompt)]
        assert not echoed, f"{question.key}: {echoed}"


def test_the_page_finding_set_is_for_tuning_and_shares_no_page_with_held_out_questions() -> None:
    folder = Path(__file__).resolve().parents[2] / "eval"
    pages = load_questions(folder / "sqlite_pages.jsonl")
    assert len(pages) >= 30 and all(q.split == "tune" and q.gold_sources and len(q.key_facts) == 4 for q in pages)
    held_out = {
        url
        for q in load_questions(folder / "sqlite_docs.jsonl")
        if q.split == "heldout"
        for gold in q.gold_sources
        for url in alternatives(gold)
    }
    assert not held_out & {url for q in pages for gold in q.gold_sources for url in alternatives(gold)}


def test_the_sqlite_set_is_large_enough_and_mostly_held_out() -> None:
    questions = load_questions(Path(__file__).resolve().parents[2] / "eval/sqlite_docs.jsonl")
    assert len(questions) >= 30
    assert sum(q.split == "heldout" for q in questions) > len(questions) / 2


def _record(key: int, split: str | None, confidence: str | None, recall: float | None, gold: float | None) -> dict:
    return {"id": key, "split": split, "confidence": confidence, "key_fact_recall": recall, "gold_cited": gold,
            "stop_reason": "completed"}  # fmt: skip


def test_summary_reports_each_split_held_out_first_and_a_calibration_table() -> None:
    records = [
        _record(1, "tune", "high", 1.0, 1.0),
        _record(2, "tune", "high", 0.5, 0.0),
        _record(3, "heldout", "low", 0.25, 0.0),
        _record(4, "heldout", "medium", 0.75, 1.0),
        _record(5, None, "medium", None, None),
    ]
    summary = summarise(records)
    assert list(summary["splits"]) == ["heldout", "tune"]
    assert summary["splits"]["heldout"] == {
        "questions": 2,
        "gold_cited": 0.5,
        "gold_read": None,
        "key_fact_recall": 0.5,
    }
    assert summary["splits"]["tune"]["key_fact_recall"] == 0.75
    assert summary["calibration"] == {
        "high": {"reports": 2, "key_fact_recall": 0.75, "gold_not_cited": 1},
        "medium": {"reports": 2, "key_fact_recall": 0.75, "gold_not_cited": 0},
        "low": {"reports": 1, "key_fact_recall": 0.25, "gold_not_cited": 1},
    }
    rows = dict(re.split(r"\s{2,}", line, maxsplit=1) for line in summary_table(summary).splitlines())
    assert rows["heldout key_fact_recall"] == "0.500" and rows["tune questions"] == "2"
    assert rows["confidence high"] == "2 reports, key_fact_recall 0.750, gold not cited 1"
    table = summary_table(summary)
    assert table.index("heldout questions") < table.index("tune questions")
    json.dumps(summary)


def test_calibration_without_confidence_counts_nothing_and_a_set_without_splits_has_none() -> None:
    records = [{"id": 1, "key_fact_recall": 1.0, "gold_cited": 1.0, "stop_reason": "completed"}]
    assert calibration(records)["high"] == {"reports": 0, "key_fact_recall": None, "gold_not_cited": 0}
    assert summarise(records)["splits"] == {}
    assert "confidence" not in summary_table(summarise(records))


def test_citations_from_a_collection_without_a_gold_page_are_counted_as_pollution() -> None:
    question = EvalQuestion(id="q1", prompt="How does VACUUM work?", gold_sources=["/lang_vacuum.html"])
    cited = [
        "corpus://sqlite/lang_vacuum.html",
        "corpus://sqlite/pragma.html",  # another page of the gold page's collection: not pollution
        "corpus://pydoc311/sqlite3.html",
        "https://example.org/vacuum",  # the web holds no gold page either
    ]
    result = ResearchResult(
        status="completed",
        stop_reason="completed",
        question=question.prompt,
        sources=[NumberedSource(number=i, **Document.from_url(url).model_dump()) for i, url in enumerate(cited, 1)],
    )
    urls_by_collection = {
        "sqlite": ["corpus://sqlite/lang_vacuum.html", "corpus://sqlite/pragma.html"],
        "pydoc311": ["corpus://pydoc311/sqlite3.html"],
        "python-reference": ["corpus://python-reference/lambda"],
    }
    record = question_metrics(question, result, RunTrace(), 1.0, urls_by_collection)
    assert (record["off_collection_citations"], record["off_collection_share"]) == (2, 0.5)
    assert record["cited_by_collection"] == {"sqlite": 2, "pydoc311": 1, "web": 1}
    # No collection holds the gold page: nothing to judge by.
    unknown = question_metrics(question, result, RunTrace(), 1.0, {"pydoc311": ["corpus://pydoc311/sqlite3.html"]})
    assert unknown["off_collection_citations"] is None and unknown["off_collection_share"] is None

    clean = {"id": "q2", "sources_cited": 4, "off_collection_citations": 0, "off_collection_share": 0.0}
    summary = summarise([record, clean, {"id": "q3", "sources_cited": 5, "off_collection_citations": None}])
    assert summary["pollution"] == {"questions": 2, "citations": 8, "off_collection": 2, "share": 0.25}
    assert summary["means"]["off_collection_share"] == 0.25
    rows = dict(re.split(r"\s{2,}", line, maxsplit=1) for line in summary_table(summary).splitlines())
    assert rows["pollution"] == "2 of 8 citations (0.250) from a collection holding no gold page"
