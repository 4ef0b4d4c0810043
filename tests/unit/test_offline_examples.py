"""Code examples in offline reports: a quoted paragraph carries the short code example that follows it
on the page, fenced, from the agent's findings through the final report (issue #26, point 6)."""

from __future__ import annotations

from typing import Any

from sleuth.evaluation.hygiene import dangling_colons, repeated_sentences
from sleuth.llm.offline.artifact import record_artifact
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


# ---- passages: a strong sentence's paragraph goes on, under one citation ------------------------

GIL_PAGE = "\n\n".join(
    [
        "threading — Thread-based parallelism",
        "This module constructs higher-level threading interfaces on top of the lower level module.",
        "In CPython, due to the Global Interpreter Lock, only one thread can execute Python code at once. "
        "If you want your application to make better use of the computational resources of multi-core "
        "machines, you are advised to use multiprocessing. "
        "However, threading is still an appropriate model if you want to run multiple I/O-bound tasks "
        "simultaneously.",
        *[f"The method number {i} of a lock object returns a boolean value to its caller." for i in range(25)],
    ]
)


def test_the_sentences_after_a_strong_sentence_come_along_as_one_passage() -> None:
    page = {"number": 1, "title": "threading", "url": "corpus://d/threading.html", "text": GIL_PAGE}
    task = "What is the global interpreter lock's effect on the threading module?"
    text = agent_report(agent_report_request(task, [page], 900)).text
    # neither sentence after it shares a word with the task, yet they finish its thought
    passage = next(unit for unit in cited_units(text) if "Global Interpreter Lock" in unit.bare)
    assert "computational resources of multi-core machines" in passage.bare
    assert "I/O-bound tasks" in passage.bare
    assert passage.text.count("[1]") == 1  # one citation after the passage, none inside it


def test_a_sentence_quoted_alone_and_within_a_passage_is_in_the_report_once() -> None:
    passage = (
        "In CPython only one thread can execute Python code at once. However, threading is still an "
        "appropriate model for I/O-bound tasks. [1]"
    )
    alone = "In CPython only one thread can execute Python code at once. [1]"
    question = "What is the global interpreter lock's effect on the threading module?"
    text = _final(question, [alone, passage])
    assert text.count("only one thread can execute") == 1
    assert "I/O-bound tasks" in text  # the passage, not the lone sentence, is what stays
    assert repeated_sentences(text) == 0


def test_the_artifact_gives_a_passage_sentence_by_sentence() -> None:
    first = "In CPython only one thread can execute Python code at once."
    second = "Threading is still an appropriate model for I/O-bound tasks."
    finding = {"task": "threads", "report": f"{first} {second} [1]", "plan_step": 1}
    question = "What is the global interpreter lock's effect on the threading module?"
    user = render("artifact_user", question=question, clarification=None, findings=[finding], sources=[])
    arguments = record_artifact(OfflineRequest(messages=[{"role": "user", "content": user}], tools=[])).tool_calls[0][1]
    # the body may hold one sentence of the passage; each finding is one sentence the engine can drop
    assert sorted(f["text"] for f in arguments["key_findings"]) == sorted([first, second])
    assert all(f["citations"] == [1] for f in arguments["key_findings"])


def test_a_hard_wrapped_list_item_is_prose_not_code() -> None:
    step = (
        "1. The context expression (the expression given in the with_item) is\n"
        "   evaluated to obtain a context manager."
    )
    page = f"The execution of the with statement proceeds as follows:\n\n{step}"
    assert any("evaluated to obtain a context manager" in paragraph for paragraph in paragraphs(page))
    statement = "CREATE TABLE phonebook2(\n  name TEXT PRIMARY KEY,\n  phonenumber TEXT\n);"
    assert paragraphs(f"The table has a primary key.\n\n{statement}") == ["The table has a primary key."]


def test_quoted_names_in_a_note_do_not_make_it_code() -> None:
    # the reference manuals quote names ("remove()", *x*); the quotes are a sentence's, not code's
    notes = [
        '2. The optional argument *i* defaults to "-1", so that by default the\n   last item is removed.',
        '3. "remove()" raises "ValueError" when *x* is not found in *s*.',
        '4. If a target was included in the "with" statement, the return value\n'
        '   from "__enter__()" is assigned to it.',
    ]
    found = page_paragraphs("Notes:\n\n" + "\n\n".join(notes))
    assert not any(paragraph.example for paragraph in found), found
    assert [paragraph.text[:12] for paragraph in found[-3:]] == ["The optional", '"remove()" r', "If a target "]


def test_an_abbreviation_that_introduces_an_example_keeps_it() -> None:
    page = (
        "A way around this is to use None as the default, and explicitly test for it in the body of the"
        " function, e.g.:\n\ndef whats_on_the_telly(penguin=None):\n    if penguin is None:\n        penguin = []"
    )
    [paragraph] = page_paragraphs(page)
    assert paragraph.text.endswith("function, e.g.:"), paragraph.text  # not "e.g.."
    assert paragraph.example.startswith("def whats_on_the_telly")
