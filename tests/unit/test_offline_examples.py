"""Code examples in offline reports: a quoted paragraph carries the short code example that follows it
on the page, fenced, from the agent's findings through the final report (issue #26, point 6)."""

from __future__ import annotations

from typing import Any

from sleuth.evaluation.hygiene import dangling_colons, repeated_sentences
from sleuth.llm.offline.final import final_report
from sleuth.llm.offline.planner import plan_steps
from sleuth.llm.offline.reports import agent_report
from sleuth.llm.offline.request import OfflineRequest
from sleuth.llm.offline.text import cited_units, page_paragraphs, paragraphs, prose_blocks
from sleuth.llm.prompting import render
from support.offline import agent_report_request

UPSERT_PAGE = "\n\n".join(
    [
        "# Description",
        "UPSERT is a clause added to INSERT that causes the INSERT to behave as an UPDATE if the INSERT "
        "would violate a uniqueness constraint.",
        "To use the value that would have been inserted, add the special table qualifier to the column "
        "name in the DO UPDATE clause of the upsert.",
        "CREATE TABLE phonebook(name TEXT PRIMARY KEY, phonenumber TEXT);\n"
        "INSERT INTO phonebook(name,phonenumber) VALUES('Alice','704-555-1212')\n"
        "  ON CONFLICT(name) DO UPDATE SET phonenumber=excluded.phonenumber;",
        "The upsert decision is made separately for each row of a multi-row insert.",
    ]
)
UPSERT_QUESTION = "How do I write an upsert that updates the existing row?"
EXAMPLE = "ON CONFLICT(name) DO UPDATE SET phonenumber=excluded.phonenumber;"


def test_sql_statements_are_code_not_prose() -> None:
    prose = paragraphs(UPSERT_PAGE)
    assert not any("CREATE TABLE" in paragraph for paragraph in prose)
    # one statement on one line is code too; a list item ending in ";" is not
    assert paragraphs("CREATE VIRTUAL TABLE email USING fts5(sender, title, body);") == []
    assert paragraphs("- the first of the options, with a longer explanation;") != []


def test_a_short_code_block_after_a_paragraph_is_its_example() -> None:
    found = page_paragraphs(UPSERT_PAGE)
    carrying = [p for p in found if p.example]
    assert len(carrying) == 1
    assert carrying[0].text.startswith("To use the value that would have been inserted")
    assert EXAMPLE in carrying[0].example
    assert carrying[0].example.startswith("CREATE TABLE phonebook")  # whole, not dedented or cut


def test_a_long_listing_or_a_code_block_after_a_heading_is_no_example() -> None:
    listing = "\n".join(f"INSERT INTO t VALUES({i});" for i in range(30))
    page = f"The table is filled row by row with one statement per row.\n\n{listing}"
    assert [p.example for p in page_paragraphs(page)] == [""]
    page = "# Examples\n\nSELECT date('now');\n\nThe function returns the current date as text."
    assert [p.example for p in page_paragraphs(page)] == [""]


def test_a_quoted_paragraph_followed_by_a_code_example_carries_the_example() -> None:
    page = {"number": 1, "title": "UPSERT", "url": "corpus://d/upsert.html", "text": UPSERT_PAGE}
    text = agent_report(agent_report_request(UPSERT_QUESTION, [page], 900)).text
    assert "add the special table qualifier" in text
    assert "```\nCREATE TABLE phonebook(name TEXT PRIMARY KEY, phonenumber TEXT);" in text
    assert EXAMPLE in text
    # the example follows the sentence it illustrates, and the sentences after it go on below
    assert text.index("add the special table qualifier") < text.index(EXAMPLE)
    units = cited_units(text)
    carrier = next(unit for unit in units if "special table qualifier" in unit.bare)
    assert EXAMPLE in carrier.code
    assert all(not unit.code for unit in units if unit is not carrier)


def test_a_report_without_the_paragraph_quotes_no_example() -> None:
    page = {"number": 1, "title": "UPSERT", "url": "corpus://d/upsert.html", "text": UPSERT_PAGE}
    text = agent_report(agent_report_request("Is the upsert decision made for each row?", [page], 40)).text
    assert "```" not in text


def _final(question: str, findings: list[str]) -> str:
    plan = plan_steps(question)
    user = render(
        "report_user",
        question=question,
        clarification=None,
        mode="light",
        plan=plan,
        findings=[
            {"task": plan[0], "plan_step": 1, "report": finding} for finding in findings
        ],  # every agent on the first step
        sources=[{"number": 1, "title": "UPSERT", "url": "corpus://d/upsert.html"}],
        partial=False,
        min_words=300,
        max_words=900,
        max_tokens=4000,
    )
    system = render("report", today="2025-01-01", mode="light", min_words=300, max_words=900)
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}, {"role": "user", "content": user}]
    return final_report(OfflineRequest(messages=messages, tools=[])).text.split("\n---\n")[0]


def test_the_final_report_keeps_each_example_once_below_its_sentence() -> None:
    page = {"number": 1, "title": "UPSERT", "url": "corpus://d/upsert.html", "text": UPSERT_PAGE}
    finding = agent_report(agent_report_request(UPSERT_QUESTION, [page], 900)).text
    # two agents quote the same paragraph, one of them without its example
    bare = (
        "To use the value that would have been inserted, add the special table qualifier to the column name "
        "in the DO UPDATE clause of the upsert. [1]"
    )
    text = _final(UPSERT_QUESTION, [finding, bare])
    assert text.count(EXAMPLE) == 1
    assert text.count("```") == 2
    assert text.index("special table qualifier") < text.index(EXAMPLE)
    assert repeated_sentences(text) == 0 and dangling_colons(text) == 0


def test_a_sentence_announcing_its_example_keeps_it_and_is_dropped_without_it() -> None:
    announcing = "For an upsert with a condition, the statement takes this form as follows: [1]"
    code = "INSERT INTO t(a) VALUES(1) ON CONFLICT(a) DO NOTHING;"
    with_code = f"{announcing}\n\n```\n{code}\n```"
    text = _final(UPSERT_QUESTION, [with_code])
    assert "takes this form as follows:" in text and code in text
    assert dangling_colons(text) == 0
    text = _final(UPSERT_QUESTION, [announcing + " The upsert decision is made separately for each row. [1]"])
    assert "as follows" not in text


def test_an_example_shown_once_is_not_repeated_and_its_announcement_goes_with_it() -> None:
    first = cited_units("The upsert updates the row in place. [1]\n\n```\nUPDATE t SET a=1;\n```")
    second = cited_units("The statement has this form for a row: [1]\n\n```\nUPDATE t SET a=1;\n```")
    shown: set[str] = set()
    blocks = prose_blocks(first, shown) + prose_blocks(second, shown)
    assert blocks == ["The upsert updates the row in place. [1]", "```\nUPDATE t SET a=1;\n```"]


def test_a_code_block_away_from_any_cited_sentence_belongs_to_none() -> None:
    units = cited_units("Some uncited prose.\n\n```\nSELECT 1;\n```\n\nA cited sentence of the report. [1]")
    assert [unit.code for unit in units] == [""]
