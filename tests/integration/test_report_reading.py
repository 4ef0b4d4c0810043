"""Reports as a reader meets them, end to end with the offline model and the built-in corpus (issue #26).

Point 1: the first paragraph answers the question, no sentence is read twice, no line ends in a colon
with nothing after it, headings are the question's own words, the title is a whole phrase. Point 3:
an uploaded runbook's report never answers a step and also says it was not answered.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from sleuth.cli.main import main
from sleuth.config import Settings
from sleuth.evaluation.hygiene import dangling_colons, is_cut_title, reader_document, repeated_sentences
from sleuth.stream.results import ResearchRequest, ResearchResult
from sleuth_testkit.engine import run_engine
from support.invariants import check_invariants

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
GENERATOR = (
    "What happens when a generator's close() and throw() methods are called, and how do they interact with try/finally?"
)
# question -> what its first paragraph must name (None: the built-in corpus cannot answer it)
QUESTIONS = {
    "How do Python descriptors work?": "descriptor",
    "What does __slots__ do in a Python class?": "__slots__",
    "How does Python compute the method resolution order (MRO) of a class?": "method resolution order",
    "What happens to an exception raised in a finally clause in Python?": "finally",
    GENERATOR: None,
}


async def research(question: str, **request: object) -> ResearchResult:
    run = await run_engine(Settings(clarify=False), ResearchRequest(question=question, mode="light", **request))
    check_invariants(run.packets)
    assert run.stop_reason == "completed"
    return run.result


def body(result: ResearchResult) -> str:
    """The model's report, without the engine's method note and the extractive note after the rule."""
    return result.markdown.split("\n## How this report was made")[0].split("\n---\n")[0]


def words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


@pytest.mark.parametrize("question", QUESTIONS)
async def test_a_report_reads_once_and_opens_on_the_answer(question: str) -> None:
    result = await research(question)
    document = reader_document(result)
    assert repeated_sentences(document) == 0, document
    assert dangling_colons(document) == 0, document
    assert not is_cut_title(result.title, question) and result.title
    first = body(result).split("\n\n")[0]
    key_term = QUESTIONS[question]
    if key_term is None:
        assert first.startswith("_The sources found do not answer this question")
    else:
        assert key_term in first.lower().replace("`", "") and re.search(r"\[\d+\]", first), first
    for heading in re.findall(r"^#+ (.+)$", body(result), re.M):
        assert words(heading) <= words(question), heading  # a part of the question, in its words


async def test_a_runbook_step_answered_in_the_report_is_not_called_unanswered(tmp_path: Path) -> None:
    indexed = CliRunner().invoke(main, ["index", str(FIXTURES / "runbook"), "--name", "runbook"])
    assert indexed.exit_code == 0, indexed.output
    question = "How is the payments service released to production, and what happens if the smoke tests fail?"
    result = await research(question, sources=["runbook"])
    text = body(result)
    answer = re.search(r"If the smoke tests fail, the pipeline stops the release[^\[]*\[\d+\]", text)
    assert answer, text  # the step is answered, with a citation...
    assert "Not answered" not in text and "No source found" not in text and "do not answer" not in text  # ...once
    assert repeated_sentences(reader_document(result)) == 0
