"""Every starter question the web UI offers is answerable from the built-in corpus.

The starters (frontend/src/starters.json) are in the built-in evaluation set with their gold page and
key facts, and the default offline model, run as `sleuth eval` runs it, cites that page and finds
the facts. A starter the corpus cannot answer (it never mentions `GeneratorExit`, so a question on
how a generator is closed) fails here before a new user meets it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sleuth.config import Settings
from sleuth.evaluation.metrics import RunTrace, question_metrics
from sleuth.evaluation.questions import EvalQuestion, load_questions
from sleuth.stream.results import ResearchRequest
from sleuth_testkit.engine import run_engine

ROOT = Path(__file__).resolve().parents[2]
STARTERS: list[str] = json.loads((ROOT / "frontend/src/starters.json").read_text(encoding="utf-8"))
GOLD = {question.prompt: question for question in load_questions(ROOT / "eval/python_reference.jsonl")}
# Of a starter's key facts, the share its report must hold: each is a phrase of the gold page that
# the question itself does not contain.
MIN_RECALL = 0.75


def _gold(starter: str) -> EvalQuestion:
    question = GOLD.get(starter)
    assert question is not None, f"starter not in eval/python_reference.jsonl: {starter!r}"
    return question


def test_every_starter_has_a_gold_page_and_key_facts_it_was_not_tuned_on() -> None:
    assert len(STARTERS) >= 3
    for starter in STARTERS:
        question = _gold(starter)
        assert question.gold_sources and len(question.key_facts) >= 3
        assert question.split == "heldout"


@pytest.mark.parametrize("starter", STARTERS)
async def test_the_offline_model_answers_each_starter_from_the_built_in_corpus(starter: str) -> None:
    question = _gold(starter)
    trace = RunTrace()
    run = await run_engine(Settings(clarify=False), ResearchRequest(question=starter))
    for packet in run.packets:
        trace.observe(packet)
    metrics = question_metrics(question, run.result, trace, wall_s=0.0)
    assert run.stop_reason == "completed"
    assert metrics["gold_cited"] == 1.0, [s.url for s in run.result.sources]
    assert metrics["key_fact_recall"] >= MIN_RECALL, metrics["key_facts_missing"]
