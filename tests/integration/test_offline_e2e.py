"""The embedded defaults end to end: offline model through litellm, built-in corpus, no keys, no network."""

from __future__ import annotations

import re

from sleuth.config import Settings
from sleuth.core.markdown import blocks
from sleuth.stream.results import ClarificationExchange, ResearchRequest
from sleuth.tools.local.providers import build_local_tools
from sleuth_testkit.engine import run_engine
from support.invariants import check_invariants

QUESTION = "How do Python descriptors and __getattr__ interact during attribute lookup?"


def _plain(text: str) -> str:
    """Compare text the way a reader does: no code-span marks, quotes or extra spaces."""
    return re.sub(r"\s+", " ", re.sub(r"[`\"]", "", text)).strip()


def _copied_from(sentence: str, page: str) -> bool:
    """A sentence copied verbatim, or "`entry()`: sentence" where the entry's name heads it on the page."""
    named = re.match(r"\s*`([\w.]+)\(\)`: (.*)$", sentence)
    if named:
        return named.group(1) in page and _plain(named.group(2)) in page
    plain = _plain(sentence)
    # a statement whose code example was dropped ends in a period where the page has a colon
    return plain in page or (plain.endswith(".") and f"{plain[:-1]}:" in page)


async def test_vague_question_gets_clarifying_questions() -> None:
    run = await run_engine(Settings(), "tell me stuff about asyncio")
    check_invariants(run.packets)
    assert run.stop_reason == "clarification"
    questions = run.of("clarification")[0].obj.questions
    assert 2 <= len(questions) <= 4 and all(q.endswith("?") for q in questions)


async def test_nonsense_is_clarified_and_an_answer_constrains_the_tasks() -> None:
    nonsense = await run_engine(Settings(), "asdkjh qwoeiu zxcmnb lkjqwe poiuyt")
    assert nonsense.stop_reason == "clarification" and not nonsense.of("plan_start")
    vague = await run_engine(Settings(), "decorators?")
    answer = ClarificationExchange(questions=vague.result.clarification_questions, answer="Python 3.12, in practice")
    run = await run_engine(Settings(max_cycles=2), ResearchRequest(question="decorators?", clarification=answer))
    check_invariants(run.packets)
    steps = run.of("plan_done")[0].obj.steps
    assert steps[0].startswith("Concrete examples of decorators")  # the aspect the user chose comes first
    tasks = [p.obj.task for p in run.of("research_agent_start")]
    assert tasks and all("decorators" in t and t.endswith("Keep to: Python 3.12.") for t in tasks)


async def test_clear_question_gets_a_report_whose_citations_are_real_sentences_of_their_sources() -> None:
    settings = Settings()
    run = await run_engine(settings, ResearchRequest(question=QUESTION))
    check_invariants(run.packets)
    assert run.stop_reason == "completed"
    assert 3 <= len(run.of("plan_done")[0].obj.steps) <= 6
    assert max(p.obj.num_parallel_branches for p in run.of("top_level_branching")) >= 2
    assert "extractive" in run.of("run_start")[0].obj.models["report"]

    report = run.of("report")[0].obj
    assert report.sources and not report.removed_citations
    _, reader = build_local_tools(settings)
    texts = {}
    for source in report.sources:
        assert source.url.startswith("corpus://python-reference/")
        texts[source.number] = _plain((await reader.read(source.url)).text)

    checked = 0
    for line in report.markdown.splitlines():
        if not line.strip() or line.startswith(("#", "_", "---")):
            continue  # headings, the italic extractive note and gap notes carry no claims
        for sentence, numbers in re.findall(r"(.+?)\s*((?:\[\d+\])+)(?=\s|$)", line):
            for n in map(int, re.findall(r"\d+", numbers)):
                assert _copied_from(sentence, texts[n]), f"[{n}] does not contain: {sentence!r}"
                checked += 1
    assert checked >= 5
    # code in copied sentences is rendered as code, never as accidental bold (the engine's method
    # note after the model's text bolds its confidence line on purpose)
    assert report.method is not None
    written = report.markdown.removesuffix(report.method.text)
    assert "`__getattr__" in written and "**" not in written
    headings = [line for line in report.markdown.splitlines() if line.startswith("## ")]
    assert headings and all(re.search(r"(?<!`)__\w+__", h) is None for h in headings), headings


async def test_the_opening_comes_from_the_page_on_the_subject_when_it_names_the_act_as_a_noun() -> None:
    # The question says "delete", the page on the del statement says "Deletion of a name removes ...";
    # a page that says "Delete" in passing (the debugger's "Delete the specified alias") must not open.
    run = await run_engine(
        Settings(clarify=False), "What happens when you delete a name with the Python del statement?"
    )
    report = run.of("report")[0].obj
    assert report.method is not None
    titles = {source.number: source.title for source in report.sources}
    written = report.markdown.removesuffix(report.method.text)
    opening = next(text for kind, text in blocks(written) if kind == "paragraph")
    assert opening.startswith("Deletion of a name removes the binding of that name"), opening
    first_citation = re.search(r"\[(\d+)\]", opening)
    assert first_citation is not None and titles[int(first_citation.group(1))] == 'The "del" statement'
