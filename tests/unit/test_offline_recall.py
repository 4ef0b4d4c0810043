"""What the offline model quotes from reference pages: table rows, defined terms, entry leads,
follow-up clauses, heading context in excerpts, and section sizes. Small constructed pages only."""

from __future__ import annotations

from sleuth.llm.offline.agent import search_queries, task_terms
from sleuth.llm.offline.final import section_size
from sleuth.llm.offline.reports import agent_report
from sleuth.llm.offline.text import (
    cited_units,
    defined_term,
    entry_name,
    is_dangling,
    is_fact_sentence,
    is_term_heading,
    sectioned_sentences,
    table_rows,
)
from sleuth.llm.prompting import render
from sleuth.research.lanes.excerpts import GAP, focused_text
from support.offline import agent_report_request

TABLE = """The filter decides what happens to a warning.

| Value | Disposition |
| --- | --- |
| "error" | turn matching warnings into exceptions |
| "ignore" | never print matching warnings |"""

START_METHODS = """Start methods

The possible start methods are 'fork', 'spawn' and 'forkserver', and the fork and spawn start methods differ.

Using the spawn or fork start methods with forkserver start methods needs care in a program.

When the spawn and fork and forkserver start methods mix, fork and spawn start methods conflict.

- spawn

The parent process starts a fresh interpreter.

- fork

The parent process uses os.fork() to copy the interpreter.

- forkserver

A server process is started once and forks the children on request."""


def _background(step: str, question: str) -> str:
    return render("offline/agent_task", step=step, scope="", question=question)


def test_table_rows_become_statements_under_the_heading_above() -> None:
    assert table_rows(TABLE.split("\n\n")[1]) == [
        '"error": turn matching warnings into exceptions.',
        '"ignore": never print matching warnings.',
    ]
    assert table_rows("| just | a line |") == []  # no header separator: not a table
    page = "## The Warnings Filter\n\n" + TABLE
    assert ("The Warnings Filter", '"ignore": never print matching warnings.') in sectioned_sentences(page)


def test_an_elision_ends_the_heading_above_it() -> None:
    after = "Child processes inherit nothing else."
    page = f"- spawn\n\nThe parent process starts a fresh interpreter.\n\n{GAP}\n\n{after}"
    headings = {sentence: heading for heading, sentence in sectioned_sentences(page)}
    assert headings["The parent process starts a fresh interpreter."] == "- spawn"
    assert headings[after] == ""


def test_definition_list_items_name_what_they_define() -> None:
    assert is_term_heading("- spawn") and not is_term_heading("Contexts and start methods")
    assert defined_term("- spawn") == "spawn"
    assert defined_term("- @functools.singledispatch") == "singledispatch"
    assert defined_term("- class enum.auto") == "auto"
    assert defined_term("- secrets.token_hex([nbytes=None])") == ""  # a signature: see entry_name
    assert entry_name("- secrets.token_hex([nbytes=None])") == "secrets.token_hex"


def test_a_demonstrative_with_its_noun_is_not_dangling() -> None:
    assert not is_dangling("This itertool may require significant auxiliary storage.")
    assert is_dangling("This is why the input is sorted first.")
    assert is_dangling("These cases need care.")
    assert is_dangling("It returns a new group.")


def test_each_defined_term_of_the_task_gets_its_definition_quoted() -> None:
    page = {"number": 1, "title": "multiprocessing", "url": "corpus://d/mp.html", "text": START_METHODS}
    reply = agent_report(agent_report_request("What are the start methods spawn, fork and forkserver?", [page], 900))
    # the sentences that repeat every term rank high, yet each entry's first sentence is quoted,
    # with the term it defines in front
    assert "spawn: The parent process starts a fresh interpreter. [1]" in reply.text
    assert "The parent process uses os.fork() to copy the interpreter. [1]" in reply.text
    assert "fork: The parent process uses" not in reply.text  # the sentence names its term itself
    assert "forkserver: A server process is started once" in reply.text


def test_one_entry_that_is_the_whole_answer_may_say_more_than_two_sentences() -> None:
    entry = "\n\n".join(
        [
            "- itertools.tee(iterable, n=2)",
            "Return n independent iterators from a single tee iterable.",
            "The tee iterators are not threadsafe.",
            "The tee function may require significant auxiliary storage.",
            "Once a tee has been created, the original iterable should not be used.",
        ]
    )
    page = {"number": 1, "title": "itertools", "url": "corpus://d/it.html", "text": entry}
    reply = agent_report(agent_report_request("How does itertools.tee split an iterable?", [page], 900))
    assert "auxiliary storage" in reply.text and "not threadsafe" in reply.text


def test_a_follow_up_clause_inherits_the_questions_subject() -> None:
    question = "What are the multiprocessing start methods spawn and fork, and how do they differ?"
    terms = task_terms(_background("How do they differ?", question))
    assert {"multiprocess", "spawn"} <= terms.focus
    assert any("multiprocessing" in query for query in search_queries(terms, 0, set()))
    question = "How does itertools.groupby group elements and why does the input need to be sorted first?"
    terms = task_terms(_background("Why does the input need to be sorted first?", question))
    assert "itertools.groupby" in terms.focus
    # a step that names the subject keeps its own focus
    terms = task_terms(_background("How does itertools.groupby group elements?", question))
    assert "sort" not in terms.focus


def test_excerpts_keep_the_definition_under_a_matching_term() -> None:
    def count(text: str) -> int:
        return len(text.split())

    filler = [f"Paragraph {i} talks about sockets and files in general terms here." for i in range(40)]
    page = "\n\n".join([*filler[:20], "- forkserver", "A server process is started once.", *filler[20:]])
    shown = focused_text(page, ["forkserver"], 60, count)
    assert "A server process is started once." in shown


def test_sections_grow_with_the_things_a_step_lists_within_a_bound() -> None:
    assert section_size("How does functools.lru_cache evict entries?") == 6
    assert section_size("What are the start methods spawn, fork and forkserver?") == 8
    assert section_size("Compare a, b, c, d, e, f and g") == 8


def test_weak_sentences_of_other_entries_do_not_crowd_out_the_entry_that_answers() -> None:
    words = "red apples|green pears|blue plums|ripe figs|sour limes|dry dates|wild cherries|sweet melons|pale kiwis"
    others = [
        f"- itertools.other{i}(iterable)\n\nEach iterator here splits {fruit} into smaller baskets."
        for i, fruit in enumerate(words.split("|"))
    ]
    tee = [
        "- itertools.tee(iterable, n=2)",
        "Return n independent iterators from a single tee iterable.",
        "The tee iterators are not threadsafe, even when the tee input is.",
        "The tee function may require significant auxiliary storage for its iterators.",
        "Once a tee has been created, the original iterable should not be used by tee callers.",
    ]
    page = {"number": 1, "title": "itertools", "url": "corpus://d/it.html", "text": "\n\n".join([*others, *tee])}
    reply = agent_report(agent_report_request("How does itertools.tee split an iterator?", [page], 150))
    # every other entry mentions an iterator, none is about tee, and the budget holds about 8 sentences
    assert "not threadsafe" in reply.text and "auxiliary storage" in reply.text


def test_a_snake_case_entry_is_about_the_words_of_its_name() -> None:
    entries = "\n\n".join(
        [
            "The secrets module generates strong random numbers for passwords and account authentication.",
            *[
                f"- secrets.other_{i}(x)\n\nReturn a value computed from the seed in mode {i} of the generator."
                for i in range(12)
            ],
            "- secrets.token_hex([nbytes=None])",
            "Return a random text string, in hexadecimal, with nbytes random bytes.",
        ]
    )
    page = {"number": 1, "title": "secrets", "url": "corpus://d/secrets.html", "text": entries}
    task = "Why should secrets be used for generating passwords and security tokens?"
    reply = agent_report(agent_report_request(task, [page], 120))
    # the budget holds a few sentences; the entry whose name says "token" is one of them
    assert "`secrets.token_hex()`: Return a random text string" in reply.text


def test_an_index_into_a_name_is_code_not_a_citation_marker() -> None:
    sentence = "The interesting property of a heap is that its smallest element is always the root, heap[0]."
    assert is_fact_sentence(sentence)
    assert not is_fact_sentence("The smallest element is always the root, as the book says [2].")
    (unit,) = cited_units(f"{sentence} [1]")
    assert unit.bare == sentence and unit.numbers == [1]


def test_a_table_row_is_not_discounted_as_a_short_sentence() -> None:
    page = {"number": 1, "title": "warnings", "url": "corpus://d/warnings.html", "text": "## Filters\n\n" + TABLE}
    page["text"] += "\n\nA filter can be ignored when another filter value matches the warning first."
    reply = agent_report(agent_report_request("Which warnings filter value ignores a warning?", [page], 40))
    assert reply.text.startswith('"ignore": never print matching warnings. [1]')


def test_an_excerpt_keeps_the_term_above_a_definition_it_keeps() -> None:
    filler = [f"Paragraph {i} talks about sockets and files in general terms here." for i in range(40)]
    definition = "Subclass of SubprocessError, raised when a process returns a non-zero exit status."
    page = "\n\n".join([*filler[:20], "- exception subprocess.CalledProcessError", definition, *filler[20:]])
    shown = focused_text(page, ["non-zero exit status"], 60, lambda text: len(text.split()))
    assert f"- exception subprocess.CalledProcessError\n\n{definition}" in shown


WAIT_FOR_ENTRY = [
    "- coroutine asyncio.wait_for(aw, timeout)",
    "Wait for the aw awaitable to complete with a timeout.",
    "If a timeout occurs, it cancels the task and raises TimeoutError.",
    "To avoid the task cancellation, wrap it in shield().",
    "- coroutine asyncio.sleep(delay)",
    "Block for delay seconds.",
]


def test_an_excerpt_reads_the_section_under_a_matching_heading_whole() -> None:
    filler = [f"Paragraph {i} talks about sockets and files in general terms here." for i in range(60)]
    page = "\n\n".join([*filler[:30], *WAIT_FOR_ENTRY, *filler[30:]])
    shown = focused_text(page, ["asyncio.wait_for timeout"], 260, lambda text: len(text.split()))
    # the shield() paragraph shares no searched word; it is shown because its entry matched
    assert "\n\n".join(WAIT_FOR_ENTRY[:4]) in shown


def test_an_entry_of_any_kind_names_what_it_documents() -> None:
    assert entry_name("- coroutine asyncio.wait_for(aw, timeout)") == "asyncio.wait_for"
    assert entry_name("- abstractmethod async aclose()") == "aclose"
    assert entry_name("see the note (below)") == ""  # prose with a parenthesis is no signature


def test_the_agent_quotes_a_section_on_its_subject_beyond_the_sentences_that_share_its_words() -> None:
    other = [f"The event loop runs task number {i} until it completes or times out." for i in range(30)]
    page = {
        "number": 1,
        "title": "asyncio",
        "url": "corpus://d/asyncio.html",
        "text": "\n\n".join([*other, *WAIT_FOR_ENTRY]),
    }
    reply = agent_report(agent_report_request("How does asyncio.wait_for enforce a timeout?", [page], 400))
    assert "To avoid the task cancellation, wrap it in shield()." in reply.text
    assert "Block for delay seconds." not in reply.text


def test_searches_leave_out_the_domain_every_page_names() -> None:
    terms = task_terms("What does VACUUM do in SQLite?")
    assert search_queries(terms, 0, set()) == ["VACUUM"]  # "SQLite" alone would rank the SQLITE_OMIT_… lists
    # a name of two joined words is a subject, not a domain
    assert "ExitStack" in " ".join(search_queries(task_terms("What is contextlib ExitStack useful for?"), 0, set()))
    assert "TimeoutError" in " ".join(search_queries(task_terms("When is TimeoutError raised?"), 0, set()))


def test_no_search_is_for_the_kind_of_fact_alone() -> None:
    # the step's last phrase is the domain ("in SQLite"): the kind of fact goes with the last phrase
    # that names something, not alone, where it would match "example" anywhere in the documentation
    steps = {
        "Definition and purpose of several columns in a WHERE clause in SQLite": "WHERE clause definition",
        "Concrete examples of a large SQLite database in use on a device with RBU": "RBU example",
        "Pitfalls, edge cases and limitations of math functions in SQLite": "math functions error",
    }
    for step, hinted in steps.items():
        queries = search_queries(task_terms(step), 0, set())
        assert queries[-1] == hinted, queries
        assert not {"definition", "example", "error"} & set(queries)


def test_a_statement_before_its_example_ends_as_a_statement_once_the_code_is_dropped() -> None:
    page = (
        "If the finally clause executes a return statement, the saved exception is discarded:\n\n"
        "   >>> def f():\n   ...     return 42\n\n"
        "The following functions are provided by this module for such cases:\n\n"
        "   >>> import os\n   >>> os.getcwd()\n"
    )
    sentences = [sentence for _, sentence in sectioned_sentences(page)]
    # the fact stands whole without its example; the final report would drop it as a dangling colon
    assert "If the finally clause executes a return statement, the saved exception is discarded." in sentences
    # a line that only announces what follows keeps its colon (and is left out of reports)
    assert "The following functions are provided by this module for such cases:" in sentences


def test_a_name_in_code_form_late_in_the_question_is_searched_for() -> None:
    terms = task_terms("How do I generate a sequence of integers in SQLite like generate_series in PostgreSQL?")
    queries = search_queries(terms, 0, set())
    assert any("generate_series" in query for query in queries), queries
    assert len(queries) <= 3
    # a question whose names are among its first phrases keeps its last phrase as the hint query
    plain = search_queries(task_terms("How do Python descriptors and __getattr__ interact during lookup?"), 0, set())
    assert plain[0] == "descriptors __getattr__" and "lookup" in plain[-1]


def test_a_quoted_passage_never_skips_a_sentence_of_the_page() -> None:
    # the footnote-marked sentence cannot be quoted; the sentences around it are no passage without it
    page = {
        "number": 1,
        "title": "Naming and binding",
        "url": "corpus://builtin/naming",
        "text": (
            "The eval() and exec() functions do not have access to the full environment for resolving names. "
            "Names may be resolved in the local and global namespaces of the caller. "
            "Free variables are not resolved in the nearest enclosing namespace, but in the global namespace. [1] "
            "The exec() and eval() functions have optional arguments to override the global and local namespace. "
            "If only one namespace is specified to eval() or exec(), it is used for both."
        ),
    }
    reply = agent_report(agent_report_request("How do eval() and exec() resolve names?", [page], 600))
    quoted = [line for line in reply.text.split("\n\n") if line]
    assert "Names may be resolved in the local and global namespaces of the caller. [1]" in reply.text, reply.text
    assert "If only one namespace is specified to eval() or exec(), it is used for both. [1]" in reply.text
    assert not any("caller. If only" in line for line in quoted)


def crowding_pages(title: str, sentence: str, count: int) -> list[dict[str, object]]:
    """Pages 2-5, each of `count` distinct sentences "<sentence> <three made-up words>." that share
    every word of a task: enough strong sentences to fill an agent report without the page on it."""
    syllables = "ba ko mi tu re sa lo ne vi du".split()
    words = iter(f"{first}{second}{third}" for first in syllables for second in syllables for third in "xyz")
    return [
        {
            "number": number,
            "title": f"{title}, part {number}",
            "url": f"corpus://d/notes{number}.html",
            "text": "\n\n".join(f"{sentence} {next(words)} {next(words)} {next(words)}." for _ in range(count)),
        }
        for number in (2, 3, 4, 5)
    ]


def test_the_section_on_the_subject_is_read_even_when_other_pages_have_more_than_enough_to_say() -> None:
    pages = crowding_pages("Timeouts with asyncio.wait_for", "A timeout of asyncio.wait_for in", 8)
    entry = {"number": 1, "title": "asyncio", "url": "corpus://d/asyncio.html", "text": "\n\n".join(WAIT_FOR_ENTRY)}
    reply = agent_report(agent_report_request("How does asyncio.wait_for enforce a timeout?", [entry, *pages], 2000))
    assert sum(f"[{number}]" in reply.text for number in (2, 3, 4, 5)) >= 3  # the other pages have their say
    # the shield() sentence shares no word of the task: it is there because its entry is on the subject
    assert "To avoid the task cancellation, wrap it in shield()." in reply.text


def test_a_sentence_that_announces_a_list_is_quoted_with_the_list() -> None:
    # the items name none of the task's words: they answer it because the sentence above announces them
    precautions = {
        "number": 1,
        "title": "Defense Against The Dark Arts",
        "url": "corpus://sqlite/security.html",
        "text": "\n\n".join(
            [
                "## Untrusted SQLite Database Files",
                "Applications that read database files from an untrusted source should take the precautions "
                "enumerated below.",
                "For reading database files from an untrusted source that are unusually high-risk, the "
                "following extra precautions might be justified.",
                "- Run PRAGMA integrity_check on the database as the first statement after opening it.",
                "- Enable the PRAGMA cell_size_check=ON setting.",
                "- Do not enable memory-mapped I/O.",
                "## Summary",
                "The precautions above are not required in order to read an untrusted database file.",
            ]
        ),
    }
    others = crowding_pages("Database files", "A database file from an untrusted source is", 10)
    task = "How do I use SQLite safely on a database file from an untrusted source?"
    reply = agent_report(agent_report_request(task, [precautions, *others], 1200))
    assert (
        "the following extra precautions might be justified. "
        "Run PRAGMA integrity_check on the database as the first statement after opening it. "
        "Enable the PRAGMA cell_size_check=ON setting. Do not enable memory-mapped I/O. [1]"
    ) in reply.text, reply.text
