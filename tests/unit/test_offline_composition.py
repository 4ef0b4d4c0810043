"""How the offline model composes a final report from its agents' findings (issue #26, points 1 and 3).

The first paragraph answers the question from sentences that name what it asks about; every other
sentence goes to one plan step; a part of the question nothing answered is named once; no sentence
is used twice; headings are the question's own sub-questions.
"""

from __future__ import annotations

import re
from typing import Any

from sleuth.evaluation.hygiene import dangling_colons, repeated_sentences
from sleuth.llm.offline.agent import task_terms
from sleuth.llm.offline.artifact import record_artifact
from sleuth.llm.offline.final import Finding, Pool, answers_directly, final_report, opening, question_parts
from sleuth.llm.offline.planner import analyse, plan_steps
from sleuth.llm.offline.request import OfflineRequest
from sleuth.llm.offline.text import cited_units
from sleuth.llm.prompting import render

RUNBOOK = "How is the payments service released to production, and what happens if the smoke tests fail?"
STAGES = "The payments service is released to production in four stages: build, staging, smoke tests and rollout. [1]"
SMOKE = "If the smoke tests fail, the pipeline stops the release and the previous version stays live in production. [1]"
GENERATOR = (
    "What happens when a generator's close() and throw() methods are called, and how do they interact with try/finally?"
)


def report(question: str, plan: list[str], reports: list[str], steps: list[int] | None = None) -> str:
    """The offline model's final report for findings `reports`, the i-th found for plan step `steps[i]`."""
    steps = steps or list(range(1, len(reports) + 1))
    findings: list[dict[str, Any]] = [
        {"task": plan[step - 1], "plan_step": step, "report": text} for step, text in zip(steps, reports, strict=True)
    ]
    user = render(
        "report_user",
        question=question,
        clarification=None,
        mode="light",
        plan=plan,
        findings=findings,
        sources=[{"number": n, "title": f"page {n}", "url": f"corpus://d/{n}"} for n in (1, 2, 3)],
        partial=False,
        min_words=300,
        max_words=900,
        max_tokens=4000,
    )
    system = render("report", today="2025-01-01", mode="light", min_words=300, max_words=900)
    messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
    request = OfflineRequest(messages=messages, tools=[])
    text = final_report(request).text
    return text.split("\n---\n")[0]  # the extractive note after the rule is the same in every report


def paragraphs(text: str) -> list[str]:
    return [p for p in text.split("\n\n") if p.strip()]


def answers(question: str, sentence: str) -> bool:
    """Whether a cited sentence can open the report on `question` (answers one of its parts directly)."""
    unit = cited_units(f"{sentence} [1]")[0]
    return any(answers_directly(part, unit) for part in question_parts(question))


def test_the_first_paragraph_answers_from_the_sentences_that_name_the_subject() -> None:
    question = "What does __slots__ do in a Python class?"
    text = report(
        question,
        plan_steps(question),
        [
            "In Python, all classes are themselves instances of other classes. [2] "
            "The class body is executed in a new execution frame. [2]",
            "As a result, class attributes cannot set default values for variables defined by __slots__. [1] "
            "__slots__ reserves space for the declared variables and prevents the automatic creation of "
            "__dict__ for each instance. [1] In Python, all classes are themselves instances of other classes. [2]",
        ],
    )
    first = paragraphs(text)[0]
    assert "__slots__ reserves space" in first
    assert "all classes are themselves instances" not in first  # on the topic's words, not about __slots__
    assert "As a result" not in first  # it leans on a sentence the reader has not seen
    assert "all classes are themselves instances" in text  # still in the report, once


def test_a_sentence_that_adds_to_one_before_it_does_not_lead_the_report() -> None:
    question = "How does Python decide where an attribute lookup like obj.x finds its value?"
    text = report(
        question,
        plan_steps(question),
        [
            "An attribute lookup like obj.x finds its value faster as well. [1]",
            "An attribute lookup like obj.x finds its value in the instance dictionary first. [2]",
        ],
    )
    first = paragraphs(text)[0]
    assert first.startswith("An attribute lookup like obj.x finds its value in the instance"), (
        first
    )  # "as well" as what?


def test_a_sentence_that_shares_a_word_but_not_the_subject_does_not_open_the_report() -> None:
    close = "Programs are strongly recommended to explicitly close such objects with their close() method. [1]"
    mutable = "Objects whose value can change are said to be mutable once they are created. [1]"
    text = report(GENERATOR, plan_steps(GENERATOR), [close, mutable])
    first = paragraphs(text)[0]
    assert first == "_The sources found do not answer this question directly; what they say about it follows._"
    assert text.count("explicitly close such objects") == 1


def test_no_sentence_is_used_twice_however_many_agents_quoted_it() -> None:
    question = "How do Python descriptors work?"
    same = (
        "A descriptor can define any combination of __get__(), __set__() and __delete__(). [1] "
        "If the descriptor defines __set__() or __delete__(), it is a data descriptor. [1] "
        "Data descriptors always override a redefinition in an instance dictionary. [1] "
        "Non-data descriptors can be overridden by instances. [1]"
    )
    text = report(question, plan_steps(question), [same, same, same])
    assert repeated_sentences(text) == 0
    for sentence in re.findall(r"[^.\]]+\.(?= \[1\])", same):
        assert text.count(sentence.strip().replace("__get__()", "`__get__()`")[:40]) == 1, sentence


def test_a_sentence_whose_list_was_dropped_is_left_out() -> None:
    question = "How does Python decide whether __getitem__ or __class_getitem__ is called?"
    announcing = (
        "Presented with the expression obj[x], the interpreter follows this process to decide whether "
        "__getitem__() or __class_getitem__() should be called: [1]"
    )
    fact = "__class_getitem__() is called when the subscripted object is itself a class. [1]"
    text = report(question, plan_steps(question), [f"{announcing} {fact}"])
    assert "follows this process" not in text
    assert "__class_getitem__() is called" in text
    assert dangling_colons(text) == 0


def test_headings_are_the_questions_own_sub_questions_never_the_plans_template() -> None:
    plan = plan_steps(GENERATOR)
    assert any(step.startswith("Definition and purpose") for step in plan)  # the template the plan has
    text = report(
        GENERATOR,
        plan,
        [
            "A generator's close() method raises GeneratorExit at the point where the generator was paused. [1] "
            "The throw() method of a generator raises an exception at the paused yield expression. [1] "
            "If the generator yields a value after GeneratorExit, a RuntimeError is raised by close(). [1] "
            "Calling close() on a generator that has already exited does nothing. [1]",
            "A finally clause of a try statement runs when a generator is closed while paused inside it. [2] "
            "The finally clause runs even when throw() raises an exception at the paused yield. [2] "
            "A yield inside a finally clause of a closing generator makes close() raise RuntimeError. [2] "
            "The exception raised by throw() propagates through the try statement like any other. [2]",
        ],
    )
    headings = re.findall(r"^#+ (.+)$", text, re.M)
    assert headings and set(headings) <= {
        "What happens when a generator's close() and throw() methods are called?",
        "How do they interact with try/finally?",
    }
    assert "Definition and purpose" not in text and "step by step" not in text
    one_thing = "How do Python descriptors work?"
    single = report(one_thing, plan_steps(one_thing), ["A descriptor defines __get__() and __set__(). [1]"])
    assert not re.findall(r"^#", single, re.M)  # one question asked: a heading would only repeat it


# ---- point 3: one decision per plan step -------------------------------------------------------


def test_a_step_answered_in_the_first_paragraph_is_never_called_unanswered() -> None:
    plan = plan_steps(RUNBOOK)
    assert plan[1] == "What happens if the smoke tests fail?"
    text = report(RUNBOOK, plan, [STAGES, SMOKE], steps=[1, 2])
    assert text.count("If the smoke tests fail, the pipeline stops the release") == 1
    assert "If the smoke tests fail" in paragraphs(text)[0]  # it answers the question, so it opens the report
    assert "Not answered" not in text and "No source found" not in text and "do not answer" not in text


def test_a_part_nothing_answered_is_named_once_and_nothing_says_it() -> None:
    plan = plan_steps(RUNBOOK)
    text = report(RUNBOOK, plan, [STAGES], steps=[1])
    gaps = [line for line in text.splitlines() if "Not answered" in line]
    assert gaps == ["_Not answered by the sources found: What happens if the smoke tests fail?_"]
    assert "smoke tests fail, the pipeline" not in text
    assert "## How is the payments service released" not in text  # its only sentence opens the report


def test_the_offline_title_is_a_whole_phrase() -> None:
    def title(question: str) -> str:
        finding = {"task": "the subject", "report": "Some fact here about it. [1]", "plan_step": 1}
        user = render("artifact_user", question=question, clarification=None, findings=[finding], sources=[])
        reply = record_artifact(OfflineRequest(messages=[{"role": "user", "content": user}], tools=[]))
        return str(reply.tool_calls[0][1]["title"])

    assert title(GENERATOR) == GENERATOR.rstrip("?")  # it fits: the whole question
    longer = GENERATOR + " And which exceptions does each of them raise when the generator has already finished?"
    assert title(longer) == "What happens when a generator's close() and throw() methods are called…"


def test_the_artifact_takes_no_sentence_whose_list_was_dropped() -> None:
    announcing = "If the finally clause executes a return statement, the saved exception is discarded: [1]"
    fact = "If there is a saved exception it is re-raised at the end of the finally clause. [1]"
    finding = {"task": "finally", "report": f"{announcing} {fact}", "plan_step": 1}
    question = "What happens to an exception raised in a finally clause?"
    user = render("artifact_user", question=question, clarification=None, findings=[finding], sources=[])
    arguments = record_artifact(OfflineRequest(messages=[{"role": "user", "content": user}], tools=[])).tool_calls[0][1]
    assert [f["text"] for f in arguments["key_findings"]] == [fact.removesuffix(" [1]")]
    assert "discarded:" not in arguments["summary"]


def test_the_verb_after_how_do_i_is_not_part_of_the_subject() -> None:
    question = (
        "How do I write an upsert in SQLite that updates the existing row when an insert hits a unique constraint?"
    )
    assert analyse(question).subjects == ["an upsert"]
    assert analyse("How can I turn on foreign keys in SQLite?").subjects == ["foreign keys"]
    assert analyse("How to use asyncio.wait_for with a timeout?").subjects[0] == "asyncio.wait_for"
    # the sentence that defines an upsert answers the question without the asker's "write"
    assert answers(
        question,
        "UPSERT is a clause added to INSERT that causes the INSERT to behave as an UPDATE or a no-op if the"
        " INSERT would violate a uniqueness constraint.",
    )


def test_how_the_asker_wants_it_done_is_not_what_they_ask_about() -> None:
    rbu = "How do I update a large SQLite database incrementally on a device with RBU?"
    assert analyse(rbu).subjects == ["a large SQLite database"]
    # nothing but the product and a manner before the context: the context names the subject
    untrusted = "What should I do to use SQLite safely on a database file from an untrusted source?"
    assert analyse(untrusted).subjects == ["a database file", "an untrusted source"]
    assert all("safely" not in step for step in plan_steps(untrusted)[1:])
    assert analyse("How do I use OrderedDict efficiently in Python?").subjects == ["OrderedDict"]
    # a noun in -ly
    assert analyse("How does a family of functions share a cache?").subjects[0] == "a family of functions"
    # the sentence that defines RBU answers the question; "incrementally" is not a word it must hold
    assert answers(
        rbu,
        "The RBU extension is an add-on for SQLite designed for use with large SQLite database files on"
        " low-power devices at the edge of a network.",
    )


def test_a_noun_bound_by_of_is_one_subject_and_a_name_stops_at_its_verb() -> None:
    sequence = "How do I generate a sequence of integers in SQLite like generate_series in PostgreSQL?"
    assert analyse(sequence).subjects == ["a sequence of integers"]
    assert "Definition and purpose of a sequence of integers in SQLite" in plan_steps(sequence)[1]
    assert analyse("How do I pass an array of values from C into a SQLite query?").subjects[0] == "an array of values"
    # "of" after these starts a phrase of its own
    assert all("instead of" not in s for s in analyse("How do I retry instead of failing at once?").subjects)
    assert analyse("What are the advantages of using write-ahead logging?").subjects == ["write-ahead logging"]
    # after "does", a name and then the question's verb: the name alone is the subject
    lru = analyse("How does functools.lru_cache decide which entries to evict?")
    assert lru.subjects == ["functools.lru_cache", "entries"]
    assert analyse("How does itertools.tee split one iterator?").subjects[0] == "itertools.tee"
    assert (
        analyse("How do collections.Counter objects count elements?")
        .subjects[0]
        .startswith("collections.Counter objects")
    )
    # the product named before the verb is the domain, not a thing the steps are about
    atomic = "How does SQLite make a commit atomic so that a power failure does not corrupt the database?"
    assert "SQLite" not in analyse(atomic).subjects
    assert all(" SQLite and " not in step for step in plan_steps(atomic)[1:])
    assert analyse("How does SQLite treat NULL values in UNIQUE columns?").subjects == ["NULL values"]
    # nor does the example after the subject take the product's place
    lookup = "How does Python decide where an attribute lookup like obj.x finds its value?"
    assert analyse(lookup).subjects[0] == "an attribute lookup" and "obj.x" not in analyse(lookup).subjects


def test_a_negated_auxiliary_is_not_a_subject() -> None:
    # the apostrophe splits "shouldn't" into "shouldn" and "t": neither names what the question asks about
    mutable = "Why shouldn't I use a mutable default argument like a list in a Python function?"
    assert analyse(mutable).subjects == ["a mutable default argument", "a list"]
    assert analyse("Why doesn't my SQLite foreign key constraint work?").subjects == ["SQLite foreign key constraint"]
    assert all("shouldn" not in step for step in plan_steps(mutable)[1:])  # the first is the question
    assert "shouldn" not in task_terms(mutable).focus
    assert answers(
        mutable,
        "(Default values are calculated, once, when the function is defined; thus, a mutable object such as a"
        " list or dictionary used as default value will be shared by all calls.)",
    )


def test_a_list_item_that_only_names_an_action_does_not_open_the_report() -> None:
    question = "How can a database file get corrupted?"
    units = cited_units(
        "Swapping journal files between two different databases. [1] "
        "Moving a journal file from one database to another. [1] "
        "Deleting a hot journal file after a crash. [1] "
        "A database file can be corrupted when its hot journal is deleted after a crash. [1] "
        "Making a copy of a database file while a transaction is in progress can corrupt the copy. [1]"
    )
    lead = opening(question_parts(question), Pool.of([Finding(task=question, units=units)]), {})
    assert lead and all(not unit.bare.startswith(("Swapping", "Moving", "Deleting")) for unit in lead), lead
    assert lead[0].bare.startswith("A database file can be corrupted")


def test_a_sentence_on_the_general_subject_does_not_answer_for_the_name_asked_about() -> None:
    question = "How does itertools.tee split one iterator into several independent iterators?"
    general = [
        "An iterator is an object representing a stream of data that returns its items one at a time. [1]",
        "When the iterator is exhausted, the suite in the else clause, if present, is executed. [1]",
    ]
    text = report(question, plan_steps(question), [" ".join(general)])
    assert paragraphs(text)[0].startswith("_The sources found do not answer this question directly")
    tee = "`itertools.tee()`: Return n independent iterators from a single iterable. [2]"
    text = report(question, plan_steps(question), [" ".join([*general, tee])])
    assert paragraphs(text)[0].startswith("`itertools.tee()`: Return n independent iterators")


def test_a_page_the_agents_quoted_once_keeps_a_place_beside_the_page_they_quoted_at_length() -> None:
    question = "How does the SQLite query planner choose an index for a query?"
    planner = [
        "The query planner chooses an index for each table in the FROM clause of a query. [1]",
        "The query planner estimates the cost of each index before it chooses one. [1]",
        "An index on the columns of the WHERE clause lets the query planner skip a full scan. [1]",
        "The query planner may use an index to avoid sorting the rows of the query. [1]",
        "Statistics gathered by ANALYZE help the query planner compare one index with another. [1]",
        "The query planner can use at most one index per table in a simple query. [1]",
        "A multi-column index helps the query planner only when its left-most columns are constrained. [1]",
        "The query planner ignores an index whose first column is not used in the query. [1]",
        "An index can make the query planner pick a worse plan when statistics are stale. [1]",
        "The query planner treats an OR term as several lookups on the same index. [1]",
        "A partial index is used by the query planner only when the WHERE clause implies its condition. [1]",
        "The query planner prefers an index that also delivers the rows in ORDER BY order. [1]",
    ]
    covering = (
        "A covering index lets the query planner answer a query from the index alone, without reading the table. [2]"
    )
    found = " ".join([*planner, covering])
    text = report(question, [question], [found, found, found], [1, 1, 1])
    # more of [1] than the report has room for, each sentence as much on the question as [2]'s
    assert len(re.findall(r"\[1\]", text)) < len(planner)
    assert text.count("A covering index lets the query planner answer") == 1


def test_a_call_in_a_name_and_a_passive_verb_do_not_split_or_add_a_subject() -> None:
    close = "What happens when a generator's close() method is called?"
    assert analyse(close).subjects == ["a generator's close() method"]
    assert "Definition and purpose of a generator's close() method" in plan_steps(close)[1]
    assert analyse("How does the str.join() method handle non-string items?").subjects[0] == "the str.join() method"
    assert analyse("What happens when an exception is raised inside a finally clause?").subjects == ["an exception"]
    # a participle before a noun describes it; before an adverb it is the verb
    assert "reserved keywords" in analyse("Which words are reserved keywords in SQLite?").subjects
    spelled = analyse("How do I find strings that are spelled similarly to a misspelled word?")
    assert spelled.subjects == ["strings", "a misspelled word"]
    # a participle after the subject, before a preposition or the end, is the verb of the clause
    assert analyse("How are default argument values evaluated in Python?").subjects == ["default argument values"]
    enforced = "Why are my SQLite foreign key constraints not enforced, and how do I turn them on?"
    assert analyse(enforced).subjects == ["SQLite foreign key constraints"]
    # a keyword in capitals is no participle
    begin = analyse("What is the difference between BEGIN DEFERRED, IMMEDIATE and EXCLUSIVE transactions?")
    assert begin.subjects[0] == "BEGIN DEFERRED"
    assert analyse("How is query speed affected by indexes?").subjects == ["query speed", "indexes"]
