"""How the offline model chooses what to read and what to quote: page kinds, headings, redundancy, read spreading."""

from __future__ import annotations

import asyncio
import itertools
import re
from typing import Any

import pytest

from sleuth.config import Settings
from sleuth.core.clock import SystemClock
from sleuth.core.words import stem
from sleuth.llm.offline.agent import open_priority, task_terms, titled_for
from sleuth.llm.offline.final import Finding, Pool, final_report
from sleuth.llm.offline.reports import MAX_REPORT_SENTENCES, agent_report
from sleuth.llm.offline.request import OfflineRequest
from sleuth.llm.offline.text import (
    NumberedBlock,
    cited_units,
    entry_name,
    is_fact_sentence,
    is_navigation_page,
    numbered_blocks,
    page_paragraphs,
    sectioned_sentences,
    split_sentences,
    term_set,
)
from sleuth.llm.prompting import render
from sleuth.research.lanes.agent import Lane, _search
from sleuth.research.lanes.excerpts import GAP, focused_text
from sleuth.research.run import new_state
from sleuth.stream.documents import Document
from sleuth.stream.emitter import Emitter
from sleuth.stream.results import ResearchRequest
from sleuth.tools.toolbox import Toolbox
from support.offline import agent_report_request

TOC_PAGE = "\n\n".join(
    [
        "Functional Programming Modules",
        "The modules described in this chapter provide functions and classes that support a functional style.",
        "itertools — Functions creating iterators for efficient looping",
        "Itertool functions",
        "Itertools Recipes",
        "functools — Higher-order functions and operations on callable objects",
        "functools.cache()",
        "functools.lru_cache()",
        "functools.partial()",
        "operator — Standard operators as functions",
        "Mapping Operators to Functions",
        "In-place Operators",
        "functools.reduce()",
        "functools.singledispatch()",
        "functools.total_ordering()",
        "functools.wraps()",
        "itertools.accumulate()",
        "itertools.chain()",
        "itertools.groupby()",
        "itertools.islice()",
    ]
)

REFERENCE_PAGE = """functools — Higher-order functions

The functools module is for higher-order functions: functions that act on or return other functions.

@functools.lru_cache(maxsize=128, typed=False)¶

Decorator to wrap a function with a memoizing callable that saves up to the maxsize most recent calls.
It can save time when an expensive or I/O bound function is periodically called with the same arguments.

@functools.total_ordering¶

Given a class defining one or more rich comparison ordering methods, this class decorator supplies the rest."""


def test_table_of_contents_is_navigation_and_a_reference_page_is_not() -> None:
    assert is_navigation_page(TOC_PAGE)
    assert not is_navigation_page(REFERENCE_PAGE)
    # hard-wrapped prose (lines cut at 70 characters) is still prose
    wrapped = "\n".join(["The functools module is for higher-order functions: functions that act on or"] * 3) + "."
    assert not is_navigation_page(wrapped)


def test_sentences_know_the_heading_they_sit_under_and_signatures_name_their_entry() -> None:
    pairs = sectioned_sentences(REFERENCE_PAGE)
    under = {sentence: heading for heading, sentence in pairs}
    sentence = "Decorator to wrap a function with a memoizing callable that saves up to the maxsize most recent calls."
    assert entry_name(under[sentence]) == "functools.lru_cache"
    assert entry_name("functools — Higher-order functions") == ""
    # a statement that introduces an example is kept; a bare title is not a sentence
    page = "Counter objects return a zero count for missing items instead of raising a KeyError:\n\nNote"
    assert [s for _, s in sectioned_sentences(page)] == [
        "Counter objects return a zero count for missing items instead of raising a KeyError:"
    ]


def test_a_bracket_or_quote_closed_after_the_full_stop_stays_with_its_sentence() -> None:
    paragraph = (
        'It is not called.  (This is an asymmetry between "a()" and "b()".) This is done. He said "Yes." Then he left.'
    )
    assert split_sentences(paragraph) == [
        "It is not called.",
        '(This is an asymmetry between "a()" and "b()".)',
        "This is done.",
        'He said "Yes."',
        "Then he left.",
    ]


def test_the_page_on_the_subject_gives_the_report_all_its_sentences_beside_another_pages() -> None:
    # Sibling agents that open the same page on the subject each quote its best sentences; a report
    # that stops at a dozen of them leaves the rest of the page's answer to pages read by the way.
    facts = [
        "A window function computes its result from a window of rows related to the current row.",
        "The OVER clause turns an ordinary aggregate into a window function over the partition.",
        "PARTITION BY splits the window function's input into groups that are processed apart.",
        "ORDER BY inside the window definition decides in which sequence the frame's rows are read.",
        "The frame specification limits the window to rows between two boundaries of the partition.",
        "ROWS frames count physical rows, while RANGE frames compare values of the ordering column.",
        "GROUPS frames treat each set of peer rows of the window as a single unit of distance.",
        "UNBOUNDED PRECEDING starts the window frame at the first row of the whole partition.",
        "CURRENT ROW ends the frame at the row being computed, including its peers for RANGE.",
        "The EXCLUDE clause removes the current row, its group or its ties from the window frame.",
        "A FILTER clause restricts which rows of the window reach the aggregate at all.",
        "Named windows declared in a WINDOW clause can be reused by several window functions.",
        "Window functions run after WHERE, GROUP BY and HAVING have been applied to the query.",
        "The default frame without ORDER BY spans the whole partition of the window.",
        "Built-in window functions such as ntile split the ordered partition into buckets.",
        "Aggregate window functions return one value per row instead of collapsing the group.",
    ]
    notes = [
        "Version 3.25 added support for window functions and the OVER clause to the query planner.",
        "Version 3.28 added the EXCLUDE clause and GROUPS frames to window definitions.",
        "Window functions now work inside triggers and views since version 3.26.",
        "A crash when a window function appeared in a correlated subquery was fixed.",
        "The planner can now push WHERE terms down into subqueries that use window functions.",
        "Frames with RANGE and an offset value were added to window functions in version 3.28.",
    ]
    pages = [
        {"number": 1, "title": "Window Functions", "url": "corpus://d/windows.html", "text": "\n\n".join(facts)},
        {"number": 2, "title": "Release notes", "url": "corpus://d/changes.html", "text": "\n\n".join(notes)},
    ]
    reply = agent_report(
        agent_report_request("How do window functions read the rows of their window frame?", pages, 4000)
    )
    quoted = [fact for fact in facts if fact[:-1] in reply.text]
    assert len(quoted) == len(facts)


def test_an_agent_quotes_the_page_on_the_subject_past_its_first_thirty_sentences() -> None:
    # Every agent that opens the page on the subject quotes its best sentences alike; only a report
    # that goes on past them reaches what the rest of the page says.
    words = (
        "apple basin cedar delta ember falcon garnet harbor ivory jasper kettle lantern meadow nickel orchid "
        "pepper quartz raven saddle timber umber velvet willow yarrow zephyr anchor bramble copper dune fern "
        "glacier hollow island juniper kelp lichen marble nectar oak pebble quill reed slate thistle tulip vine "
        "acorn beacon canyon dagger engine fossil goblet hammer igloo jacket kernel ladder magnet needle oyster "
        "parcel quiver ribbon shovel tunnel wagon walnut basket candle"
    ).split()
    facts = [
        f"Window frames read {first} rows before {second} rows."
        for first, second in zip(words[::2], words[1::2], strict=True)
    ]
    pages = [{"number": 1, "title": "Window Functions", "url": "corpus://d/windows.html", "text": "\n\n".join(facts)}]
    reply = agent_report(agent_report_request("How do window frames read rows?", pages, 4000))
    quoted = [fact for fact in facts if fact[:-1] in reply.text]
    assert len(facts) > 30
    assert len(quoted) == len(facts)


def _pages(*pages: tuple[str, str, str]) -> list[dict[str, Any]]:
    """Opened pages numbered from 1, each (title, file name, text)."""
    return [
        {"number": number, "title": title, "url": f"corpus://d/{name}", "text": text}
        for number, (title, name, text) in enumerate(pages, 1)
    ]


def _one_page_report(title: str, text: str, task: str) -> str:
    pages = [{"number": 1, "title": title, "url": "corpus://d/page.html", "text": text}]
    return agent_report(agent_report_request(task, pages, 4000)).text


def test_a_statement_broken_over_lines_is_an_example_and_an_entry_mentioned_late_is_labelled() -> None:
    page = (
        "# Window Functions\n\n"
        "Named window definitions may be added to a SELECT statement with a WINDOW clause and referred to by name:\n\n"
        "SELECT x, y, row_number() OVER win1, rank() OVER win2\n"
        "FROM t0\n"
        "WINDOW win1 AS (ORDER BY y),\n"
        "       win2 AS (PARTITION BY y ORDER BY x)\n"
        "ORDER BY x;\n\n"
        "rank()\n\n"
        "The row_number() of the first peer in each group - the rank of the current row with gaps.\n\n"
        "row_number()\n\n"
        "The number of the row within the current partition, counting from 1 in window order.\n"
    )
    report = _one_page_report("Window Functions", page, "How do the rank() and row_number() window functions work?")
    # the statement is the example of the sentence before it, fenced, never a sentence of its own
    assert "```\nSELECT x, y, row_number() OVER win1" in report
    assert "ORDER BY x; [1]" not in report
    # the sentence under rank() mentions "rank" only in passing: its entry's name goes in front
    assert "`rank()`: The row_number() of the first peer in each group" in report


def test_a_page_on_the_words_of_a_snake_case_name_is_not_about_that_name() -> None:
    windows = (
        "The row_number() window function numbers the rows of each partition in window order.\n\n"
        "A window function takes its input from a window of rows of the result set."
    )
    changes = (
        "These functions return the number of rows modified, inserted or deleted by the last statement.\n\n"
        "The total number of rows changed since the connection opened is returned by another function."
    )
    pages = _pages(
        ("Window Functions", "windows.html", windows), ("Count The Number Of Rows Modified", "changes.html", changes)
    )
    reply = agent_report(agent_report_request("How does the row_number() window function work?", pages, 4000))
    assert "[1]" in reply.text
    assert "[2]" not in reply.text  # "row" and "number" are words of the name, not what the task asks about


def test_a_weak_sentence_of_another_page_does_not_take_the_place_of_a_strong_one_on_the_subject() -> None:
    verbs = ["orders", "ranks", "numbers", "filters", "groups", "partitions", "frames", "excludes"]
    syllables = (
        ["ka", "lo", "mi", "nu", "pe", "ro", "su", "ti"],
        ["bar", "dex", "gol", "vin", "fam", "hup", "jet", "wok"],
        ["a", "o"],
    )
    names = ["".join(pair) for pair in itertools.product(*syllables)]
    facts = [
        f"The window {a} {b} and {c} the {n} and {m} rows."
        for (a, b, c), n, m in zip(itertools.combinations(verbs, 3), names[0::2], names[1::2], strict=False)
    ][: MAX_REPORT_SENTENCES + 5]
    pages = [
        {"number": 1, "title": "Window Functions", "url": "corpus://d/w.html", "text": "\n\n".join(facts)},
        {
            "number": 2,
            "title": "Statements",
            "url": "corpus://d/s.html",
            "text": "Every statement counts the rows that it changed, then orders them.",
        },
    ]
    task = "How does a window order, rank, number, filter, group, partition, frame and exclude rows?"
    reply = agent_report(agent_report_request(task, pages, 4000))
    assert "[2]" not in reply.text  # it shares one word with the task; each fact of [1] shares three
    assert sum(fact[:-1] in reply.text for fact in facts) == MAX_REPORT_SENTENCES  # the subject page fills it


def test_a_parenthesis_over_two_sentences_is_one_unit_and_an_unclosed_one_is_no_fact() -> None:
    paragraph = (
        "It is considered printable.  (Note that printable characters are those that repr() does not "
        "escape.  It has no bearing on the handling of strings written to sys.stdout.) Next comes isspace()."
    )
    assert split_sentences(paragraph) == [
        "It is considered printable.",
        "(Note that printable characters are those that repr() does not escape. It has no bearing on the "
        "handling of strings written to sys.stdout.)",
        "Next comes isspace().",
    ]
    assert not is_fact_sentence("(Note that printable characters are those that repr() does not escape.")


def test_the_tail_of_a_broken_sentence_is_no_fact_but_a_name_in_lower_case_is() -> None:
    assert not is_fact_sentence("is not a WITHOUT ROWID table, as the schema declares it.")
    assert not is_fact_sentence("to enable or disable only the C-API of the extension.")
    assert is_fact_sentence("most_common(): Return a list of the n most common elements and their counts.")
    assert is_fact_sentence("asyncio.run() runs the coroutine and returns its result.")


def test_a_python_block_with_comments_is_the_example_of_the_sentence_before_it() -> None:
    page = (
        "# ExitStack\n\n"
        "An ExitStack combines a variable number of context managers in a single with statement, as follows:\n\n"
        "with ExitStack() as stack:\n"
        "    files = [stack.enter_context(open(fname)) for fname in filenames]\n"
        "    # All opened files will automatically be closed at the end of\n"
        "    # the with statement, even if attempts to open files later fail\n"
    )
    report = _one_page_report("contextlib", page, "What is an ExitStack useful for with context managers?")
    assert "```\nwith ExitStack() as stack:\n    files = [stack.enter_context(open(fname))" in report
    assert "stack: files" not in report  # never flattened into a sentence


def test_dotted_names_meet_their_parts() -> None:
    assert {stem("functools"), "lru_cache"} <= term_set("How does functools.lru_cache evict?")


def test_agent_report_quotes_under_the_matching_entry_skips_navigation_and_drops_repeats() -> None:
    repeated = "The lru_cache decorator keeps the maxsize most recent calls of the wrapped function in memory."
    pages = [
        {"number": 1, "title": "Functional Programming Modules", "url": "corpus://d/functional.html", "text": TOC_PAGE},
        {"number": 2, "title": "functools", "url": "corpus://d/functools.html", "text": REFERENCE_PAGE},
        {
            "number": 3,
            "title": "caching notes",
            "url": "corpus://d/notes.html",
            "text": f"{repeated}\n\n{repeated.replace('memory', 'RAM')}",
        },
    ]
    task = "How functools.lru_cache decides which calls to keep."
    reply = agent_report(agent_report_request(task, pages))
    assert "[1]" not in reply.text  # the table of contents names lru_cache but explains nothing
    assert "`functools.lru_cache()`: Decorator to wrap a function with a memoizing callable" in reply.text
    assert "total_ordering" not in reply.text and "rich comparison" not in reply.text  # another entry's text
    assert reply.text.count("[3]") == 1  # the near-duplicate sentence is left out


def test_open_priority_prefers_the_top_hit_and_unread_pages_and_skips_off_task_hits() -> None:
    terms = task_terms("How functools.lru_cache evicts entries.")
    top = NumberedBlock(
        1, "functools — Higher-order functions", "corpus://d/functools.html", "@lru_cache(user_function)"
    )
    read = NumberedBlock(2, "Caching notes", "corpus://d/notes.html", "old entries are evicted", True)
    unread = NumberedBlock(3, "Caching recipes", "corpus://d/recipes.html", "old entries are evicted")
    off = NumberedBlock(4, "Truth value testing", "corpus://d/truth.html", "Any object can be tested.")
    order = [hit.number for _, hit in open_priority([(0, top), (1, read), (2, unread), (3, off)], terms)]
    assert order[0] == 1  # the engine's best hit for the agent's own query is read first
    assert order.index(3) < order.index(2)  # of two equal pages, the one no sibling has read
    assert 4 not in order


def test_search_results_flag_pages_another_agent_read() -> None:
    text = render(
        "responses/search_results",
        documents=[
            {"number": 1, "title": "A", "url": "corpus://d/a", "snippet": "first", "read_elsewhere": True},
            {"number": 2, "title": "B", "url": "corpus://d/b", "snippet": "second", "read_elsewhere": False},
        ],
        errors=[],
    )
    blocks = numbered_blocks(text)
    assert [(b.number, b.read_elsewhere, b.body) for b in blocks] == [(1, True, "first"), (2, False, "second")]


class _Provider:
    name = "local"

    def __init__(self, results: dict[str, list[str]]) -> None:
        self.results = results

    async def search(self, query: str, *, limit: int) -> list[Document]:
        snippet = f"the passage that matches {query}"
        return [Document.from_url(url, title=url, snippet=snippet) for url in self.results[query]][:limit]


def test_engine_lists_every_querys_best_hit_first_and_flags_what_an_earlier_agent_opened() -> None:
    provider = _Provider({"a": ["corpus://d/1", "corpus://d/2", "corpus://d/3"], "b": ["corpus://d/4", "corpus://d/5"]})
    toolbox = Toolbox(providers=[provider], readers=[])
    state = new_state(ResearchRequest(question="q"), Settings(), Emitter("run_x", []), SystemClock(), toolbox)
    state.registry.add(Document.from_url("corpus://d/4"), fetched=True)  # an agent of an earlier cycle opened it
    lane = Lane(state=state, turn=1, tab=0, task="t", started_at=0.0, read_before=state.registry.fetched_ids())
    # a sibling of the same cycle opens another page while this agent works: whether it got there
    # first is a matter of timing, so it must not change what this agent is shown
    state.registry.add(Document.from_url("corpus://d/5"), fetched=True)
    call = type("Call", (), {"parsed": {"queries": ["a", "b"]}})()
    text = asyncio.run(_search(lane, call))  # type: ignore[arg-type]
    blocks = numbered_blocks(text)
    assert [b.url for b in blocks] == [f"corpus://d/{n}" for n in (1, 4, 2, 5, 3)]
    assert [b.read_elsewhere for b in blocks] == [False, True, False, False, False]


def test_a_search_shows_its_own_snippet_of_a_page_another_search_found_first() -> None:
    toolbox = Toolbox(providers=[_Provider({"pragma": ["corpus://d/1"], "busy": ["corpus://d/1"]})], readers=[])
    state = new_state(ResearchRequest(question="q"), Settings(), Emitter("run_x", []), SystemClock(), toolbox)
    first, second = (Lane(state=state, turn=1, tab=tab, task="t", started_at=0.0) for tab in (0, 1))
    asyncio.run(_search(first, type("Call", (), {"parsed": {"queries": ["pragma"]}})()))  # type: ignore[arg-type]
    text = asyncio.run(_search(second, type("Call", (), {"parsed": {"queries": ["busy"]}})()))  # type: ignore[arg-type]
    assert "the passage that matches busy" in text
    assert "matches pragma" not in text


def test_long_pages_are_focused_on_what_the_agent_searched_for() -> None:
    def count(text: str) -> int:
        return len(text.split())

    filler = [f"Paragraph {i} talks about sockets and files in general terms here." for i in range(60)]
    page = "\n\n".join([*filler[:30], "The heappush function pushes onto the heap invariant.", *filler[30:]])
    shown = focused_text(page, ["heappush heap"], 120, count)
    assert "The heappush function pushes onto the heap invariant." in shown
    assert shown.startswith("Paragraph 0 ") and GAP in shown and count(shown) <= 120
    assert focused_text("short page", ["x"], 120, count) == "short page"


def test_final_report_names_unanswered_steps_in_one_line() -> None:
    plan = ["How functools.lru_cache evicts entries", "Pitfalls of asyncio cancellation"]
    findings = [
        {
            "task": render("offline/agent_task", step=plan[0], scope="", question="q"),
            "plan_step": 1,
            "report": "The lru_cache decorator saves up to the maxsize most recent calls of a function. [1]",
        }
    ]
    user = render(
        "report_user",
        question="How does lru_cache evict entries and how does asyncio cancellation work?",
        clarification=None,
        mode="heavy",
        plan=plan,
        findings=findings,
        sources=[{"number": 1, "title": "functools", "url": "corpus://d/functools.html"}],
        partial=False,
        min_words=2500,
        max_words=5000,
        max_tokens=8192,
    )
    system = render("report", today="2025-01-01", mode="heavy", min_words=2500, max_words=5000)
    messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
    request = OfflineRequest(messages=messages, tools=[])
    text = final_report(request).text
    gap_lines = [line for line in text.splitlines() if "Not answered by the sources found" in line]
    # named once, as the question words it; the part a finding answered is not named
    assert len(gap_lines) == 1 and "How does asyncio cancellation work?" in gap_lines[0]
    assert "lru_cache" not in gap_lines[0] and "Pitfalls" not in text
    # it sits under the opening paragraph, above any section
    assert text.split("\n\n")[1] == gap_lines[0] and "lru_cache decorator" in text.split("\n\n")[0]


def test_final_report_sections_prefer_the_source_the_agents_quoted_most() -> None:
    question = "How does json.dumps serialise objects?"
    plan = ["How does json.dumps serialise objects?", "How can I customise encoding of unsupported types?"]
    main = [
        "Serialize obj to a JSON formatted str using the conversion table of json. [1]",
        "Keys in key/value pairs of JSON are always of the type str in every document. [1]",
        "The json module always produces str objects, not bytes objects, from dumps. [1]",
        "To customise encoding, pass a JSONEncoder subclass that overrides default() as cls. [1]",
    ]
    # shares more of the second step's words, from a page one agent opened by the way
    aside = "The optional encoding argument is used to support unsupported types of pickle streams. [2]"
    findings = [
        {"task": plan[0], "plan_step": 1, "report": " ".join(main)},
        {"task": plan[1], "plan_step": 2, "report": " ".join([*main[2:], aside])},
    ]
    user = render(
        "report_user",
        question=question,
        clarification=None,
        mode="light",
        plan=plan,
        findings=findings,
        sources=[],
        partial=False,
        min_words=100,
        max_words=500,
        max_tokens=2000,
    )
    request = OfflineRequest(messages=[{"role": "user", "content": user}], tools=[])
    text = final_report(request).text
    assert "JSONEncoder subclass" in text
    assert "pickle streams" not in text or text.index("JSONEncoder subclass") < text.index("pickle streams")


def test_a_short_page_every_agent_quoted_is_as_central_as_a_long_one() -> None:
    # [1] is the short page on the subject, whose few sentences every agent quotes; [2] a long page
    # each agent also opened, with many quotable sentences; [3] a page one agent read by the way
    short = "Deletion of a name removes the binding of that name from the namespace. [1]"
    long = [f"Special method number {n} customises another operation on objects. [2]" for n in range(6)]
    aside = [f"An aside on debugging number {n} with breakpoints and frames. [3]" for n in range(6)]
    findings = [
        Finding(task="step one", units=cited_units(" ".join([short, *long, *aside]))),
        Finding(task="step two", units=cited_units(" ".join([short, *long]))),
        Finding(task="step three", units=cited_units(" ".join([short, *long]))),
    ]
    pool = Pool.of(findings)
    central = {unit.numbers[0]: pool.centrality(unit) for _, unit in pool.units}
    # counted by sentences, the long page was six times as central as the short one
    assert central[1] >= 0.8 and central[2] == pytest.approx(1.0)
    assert central[3] < central[1]


def test_a_page_titled_for_the_subject_is_opened_before_pages_that_mention_it() -> None:
    terms = task_terms("Why are my SQLite foreign key constraints not enforced?")
    quirks = NumberedBlock(
        1,
        "Quirks, Caveats, and Gotchas In SQLite",
        "corpus://d/quirks.html",
        "Foreign Key Enforcement Is Off: SQLite has parsed foreign key constraints; it can enforce those constraints",
    )
    pragma = NumberedBlock(
        2, "Pragma statements", "corpus://d/pragma.html", "Query or set the enforcement of foreign key constraints."
    )
    invalid = NumberedBlock(3, "Invalid UTF Policy", "corpus://d/utf.html", "SQLite does not enforce UTF rules.")
    gold = NumberedBlock(
        4, "SQLite Foreign Key Support", "corpus://d/foreignkeys.html", "RESTRICT and normal enforcement differ."
    )
    hits = [(0, quirks), (1, pragma), (2, invalid), (3, gold)]
    order = [hit.number for _, hit in open_priority(hits, terms)]
    assert 4 in order[:3]  # among the pages an agent opens at once
    assert titled_for("threading — Thread-based parallelism", task_terms("How does the threading module work?"))
    assert not titled_for("The Advantages Of Flexible Typing", task_terms("What are the advantages of WAL?"))


def test_a_page_titled_with_a_function_named_for_the_subject_is_opened() -> None:
    terms = task_terms("How do I pass an array of values from C into a SQLite query?")
    hits = [
        (0, NumberedBlock(1, "Full-Text Search", "corpus://d/fts5.html", "The values of an array of phrases.")),
        (1, NumberedBlock(2, "JSON Functions", "corpus://d/json1.html", "A JSON array of values in a query.")),
        (2, NumberedBlock(3, "Tcl Interface", "corpus://d/tcl.html", "Pass the values of a Tcl array to a query.")),
        (3, NumberedBlock(4, "The Carray() Table-Valued Function", "corpus://d/carray.html", "Binds a C array.")),
    ]
    order = [hit.number for _, hit in open_priority(hits, terms)]
    assert 4 in order[:3]  # "carray" is the function an array is passed through
    # a name must hold the word, not the domain: every C API name holds "sqlite"
    sqlite_api = NumberedBlock(5, "The sqlite3_bind_value() Interface", "corpus://d/bind.html", "Binds a value.")
    assert 5 not in [hit.number for _, hit in open_priority([*hits[:3], (3, sqlite_api)], terms)][:3]


def test_the_opening_comes_from_the_page_on_the_subject_not_a_changelog() -> None:
    question = "How does SQLite choose a new rowid with AUTOINCREMENT?"
    # the changelog quotes the subject's words as often, and two agents quoted it
    changelog = "Added AUTOINCREMENT support, so SQLite chooses a new rowid that is never reused after a delete. [1]"
    page = "With AUTOINCREMENT, SQLite chooses a new rowid one larger than the largest rowid ever used. [2]"
    findings = [
        {"task": question, "plan_step": 1, "report": f"{changelog} {page}"},
        {"task": "History of rowid", "plan_step": 2, "report": changelog},
    ]

    def lead(titles: list[str]) -> str:
        user = render(
            "report_user",
            question=question,
            clarification=None,
            mode="light",
            plan=[question, "History of rowid"],
            findings=findings,
            sources=[{"number": n, "title": t, "url": f"corpus://s/{n}.html"} for n, t in enumerate(titles, 1)],
            partial=False,
            min_words=100,
            max_words=500,
            max_tokens=2000,
        )
        report = final_report(OfflineRequest(messages=[{"role": "user", "content": user}], tools=[]))
        return report.text.split("\n\n")[0]

    assert lead(["Release History", "SQLite Autoincrement"]).startswith("With AUTOINCREMENT")
    # without a page titled for the subject, the better-supported sentence leads as before
    assert lead(["Release History", "Database File Format"]).startswith("Added AUTOINCREMENT")


def test_a_sentence_naming_the_class_of_a_dotted_name_answers_the_question_directly() -> None:
    question = "What is contextlib.ExitStack useful for when managing a variable number of context managers?"
    answer = (
        "The primary use case for ExitStack is supporting a variable number of context managers "
        "and other cleanup operations in a single with statement. [1]"
    )
    user = render(
        "report_user",
        question=question,
        clarification=None,
        mode="light",
        plan=[question],
        findings=[{"task": question, "plan_step": 1, "report": answer}],
        sources=[{"number": 1, "title": "contextlib", "url": "corpus://p/contextlib.html"}],
        partial=False,
        min_words=100,
        max_words=500,
        max_tokens=2000,
    )
    report = final_report(OfflineRequest(messages=[{"role": "user", "content": user}], tools=[])).text
    # "ExitStack" names `contextlib.ExitStack`; "useful" frames the question and names nothing
    assert report.startswith("The primary use case for ExitStack")
    assert "do not answer this question directly" not in report


def test_a_list_item_that_opens_on_a_label_is_quoted_under_it() -> None:
    page = (
        "# Using SQLite In Multi-Threaded Applications\n\n"
        "SQLite supports three different threading modes:\n\n"
        "- Single-thread. In this mode, all mutexes are disabled and SQLite is unsafe to use in more than a single"
        " thread at once.\n\n"
        "- Multi-thread. In this mode, SQLite can be safely used by multiple threads provided that no single"
        " database connection is used simultaneously in two or more threads.\n\n"
        "- Serialized mode lets SQLite be safely used by multiple threads with no restriction.\n\n"
        "# Other matters\n\n"
        "The database file is a single ordinary disk file that can be copied freely.\n\n"
        "Applications can attach further database files to a connection at run time.\n"
    )
    assert [(p.heading, p.text[:20]) for p in page_paragraphs(page)[1:4]] == [
        ("- Single-thread", "In this mode, all mu"),
        ("- Multi-thread", "In this mode, SQLite"),
        ("SQLite supports three different threading modes:", "Serialized mode lets"),
    ]
    report = _one_page_report("Threads", page, "Which threading modes does SQLite support?")
    assert "Single-thread: In this mode, all mutexes are disabled" in report
    assert "Multi-thread: In this mode, SQLite can be safely used" in report


def test_a_list_of_bare_names_does_not_head_the_paragraph_after_it() -> None:
    page = (
        "## Device Characteristics\n\n"
        "The xDeviceCharacteristics method returns a vector of these bit values:\n\n"
        "- SQLITE_IOCAP_ATOMIC\n\n- SQLITE_IOCAP_SAFE_APPEND\n\n- SQLITE_IOCAP_BATCH_ATOMIC\n\n"
        "The SQLITE_IOCAP_SAFE_APPEND value means that when data is appended to a file, the data is appended first.\n\n"
        "- os.getenv(key)\n\n- os.getenvb(key)\n\n"
        "Return the value of the environment variable key as a string.\n"
    )
    headings = {p.text[:24]: p.heading for p in page_paragraphs(page)}
    assert headings["The SQLITE_IOCAP_SAFE_AP"] == "Device Characteristics"
    assert headings["Return the value of the "] == "- os.getenvb(key)"  # an entry's two signatures
    report = _one_page_report("Device Characteristics", page, "What does SQLITE_IOCAP_SAFE_APPEND mean?")
    assert "SQLITE_IOCAP_BATCH_ATOMIC" not in report
    # an excerpt that keeps only the list's last name: the sentence names its own subject
    excerpt = page.replace("- SQLITE_IOCAP_ATOMIC\n\n- SQLITE_IOCAP_SAFE_APPEND\n\n", "[…]\n\n")
    report = _one_page_report("Device Characteristics", excerpt, "What does SQLITE_IOCAP_SAFE_APPEND mean?")
    assert "The SQLITE_IOCAP_SAFE_APPEND value means" in report
    assert "SQLITE_IOCAP_BATCH_ATOMIC" not in report


def test_a_list_item_under_an_introduction_still_belongs_to_its_section() -> None:
    page = (
        "# 1. Untrusted SQLite Database Files\n\n"
        "Applications that read database files of uncertain provenance should take precautions.\n\n"
        "These added defenses come with performance costs, however, and so may not be appropriate everywhere:\n\n"
        "- Run PRAGMA integrity_check as the first statement after opening.\n\n"
        "- Do not enable memory-mapped I/O.\n\n"
        "# 2. Speed\n\n"
        "Prepared statements are faster when they are reused many times over.\n\n"
        "Batching writes inside one transaction saves a journal sync for each row:\n\n"
        "- Keep transactions short.\n"
    )
    paragraphs = page_paragraphs(page)
    assert [(p.heading[:14], p.section) for p in paragraphs[2:4]] == [
        ("These added de", "1. Untrusted SQLite Database Files"),
        ("These added de", "1. Untrusted SQLite Database Files"),
    ]
    assert paragraphs[-1].section == "2. Speed"
    report = _one_page_report("Defenses", page, "How do I open a database file from an untrusted source safely?")
    assert "Run PRAGMA integrity_check as the first statement after opening." in report
    assert "Do not enable memory-mapped I/O." in report
    assert "Keep transactions short." not in report


def test_the_opening_prefers_the_page_that_speaks_to_the_whole_question() -> None:
    question = "How do I find strings that are spelled similarly to a misspelled word?"
    changelog = [
        "Double-quoted strings interpreted as column names. [1]",
        "Escape control characters in JSON strings. [1]",
        "Disallow control characters inside of strings in JSON. [1]",
        "Add C-language APIs for dynamic strings. [1]",
    ]
    spellfix = [
        "The spellfix1 table returns the strings of a vocabulary closest to a misspelled word. [2]",
        "Words spelled similarly are ranked by their edit distance. [2]",
    ]
    # every agent opened the changelog, which says "strings" on every line; one read the page that
    # covers what is asked
    findings = [
        {"task": question, "plan_step": 1, "report": " ".join(changelog + spellfix)},
        {"task": "Definition of strings", "plan_step": 2, "report": " ".join(changelog)},
        {"task": "Examples of strings", "plan_step": 3, "report": " ".join(changelog)},
    ]
    user = render(
        "report_user",
        question=question,
        clarification=None,
        mode="light",
        plan=[question, "Definition of strings", "Examples of strings"],
        findings=findings,
        sources=[
            {"number": 1, "title": "Release History", "url": "corpus://d/changes.html"},
            {"number": 2, "title": "The Spellfix1 Virtual Table", "url": "corpus://d/spellfix1.html"},
        ],
        partial=False,
        min_words=100,
        max_words=500,
        max_tokens=2000,
    )
    text = final_report(OfflineRequest(messages=[{"role": "user", "content": user}], tools=[])).text
    first_citation = re.search(r"\[(\d+)\]", text)
    assert first_citation is not None and first_citation.group(1) == "2", text[:300]


def test_the_word_that_asks_how_things_differ_does_not_make_a_sentence_relevant() -> None:
    task = "How do threading.Event and threading.Condition differ for coordinating threads?"
    assert "differ" not in task_terms(task).focus
    notes = (
        "Note that the treatment of a negative timeout differs from the behaviour of a lock in threads.\n\n"
        "Note that signal handling differs for threads, where the equivalent blocking calls ignore it."
    )
    threading = (
        "An event object manages an internal flag that the set() method sets to true and clear() resets.\n\n"
        "A condition variable allows one or more threads to wait until they are notified by another thread."
    )
    pages = _pages(
        ("Programming guidelines", "notes.html", notes), ("Thread-based parallelism", "threading.html", threading)
    )
    reply = agent_report(agent_report_request(task, pages, 70)).text
    assert "internal flag" in reply and "notified by another thread" in reply, reply
    assert "differs from" not in reply
