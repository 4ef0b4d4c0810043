"""Runs a question set through the engine entry point, several at a time, appending results as they finish."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sleuth.config import Mode, Settings
from sleuth.core.clock import Clock, SystemClock
from sleuth.evaluation.article import article_text
from sleuth.evaluation.files import append_line, read_lines, written_ids
from sleuth.evaluation.judge import RaceJudge
from sleuth.evaluation.metrics import RunTrace, question_metrics
from sleuth.evaluation.questions import EvalQuestion
from sleuth.evaluation.summary import summarise
from sleuth.runs.local import run_request
from sleuth.stream.results import ResearchRequest
from sleuth.tools.local.corpus import db_path_for
from sleuth.tools.local.library import document_urls
from sleuth.tools.toolbox import Toolbox

log = logging.getLogger(__name__)

ARTICLES = "articles.jsonl"
METRICS = "metrics.jsonl"
SUMMARY = "summary.json"


@dataclass
class EvalOptions:
    out: Path
    concurrency: int = 1
    mode: Mode | None = None
    time_budget_s: float | None = None  # None: the mode's default budget
    sources: list[str] | None = None  # None: the settings' sources

    def request(self, prompt: str) -> ResearchRequest:
        """The research request for one question: researched as asked, without clarifying questions."""
        return ResearchRequest(
            question=prompt, mode=self.mode, clarify=False, time_budget_s=self.time_budget_s, sources=self.sources
        )


@dataclass
class Finished:
    """One question done (or failed outside the engine), for progress display."""

    question: EvalQuestion
    metrics: dict[str, Any] | None
    error: str | None = None


@dataclass
class EvalOutcome:
    ran: int = 0
    skipped: int = 0
    failed: list[str] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)


class EvalRunner:
    """Each question is one run in this process (no HTTP), researched as asked (no clarification)."""

    def __init__(
        self,
        settings: Settings,
        toolbox: Toolbox,
        options: EvalOptions,
        *,
        judge: RaceJudge | None = None,
        clock: Clock | None = None,
        on_finished: Callable[[Finished], None] | None = None,
    ) -> None:
        self.settings = settings
        self.toolbox = toolbox
        self.options = options
        self.judge = judge
        self.clock = clock or SystemClock()
        self.on_finished = on_finished or (lambda _: None)
        self._urls_by_collection: dict[str, list[str]] = {}

    def pending(self, questions: list[EvalQuestion]) -> list[EvalQuestion]:
        """Questions without a metrics line yet (metrics are written after the article, so they mark completion)."""
        done = written_ids(self.options.out / METRICS)
        return [q for q in questions if q.key not in done]

    async def _one(self, question: EvalQuestion) -> dict[str, Any]:
        trace = RunTrace()
        request = self.options.request(question.prompt)
        started = self.clock.now()
        result = await run_request(
            request, self.settings, trace.observe, checked=False, clock=self.clock, toolbox=self.toolbox
        )
        article = article_text(result)
        metrics = question_metrics(question, result, trace, self.clock.now() - started, self._urls_by_collection)
        if self.judge is not None and article:
            metrics["race"] = await self.judge.score(question.prompt, article)
        append_line(self.options.out / ARTICLES, {"id": question.id, "prompt": question.prompt, "article": article})
        append_line(self.options.out / METRICS, metrics)
        return metrics

    async def run(self, questions: list[EvalQuestion]) -> EvalOutcome:
        self.options.out.mkdir(parents=True, exist_ok=True)
        # Which collection holds each document, for the share of citations off the gold pages' collections.
        self._urls_by_collection = await asyncio.to_thread(document_urls, db_path_for(self.settings.data_dir))
        todo = self.pending(questions)
        outcome = EvalOutcome(skipped=len(questions) - len(todo))
        gate = asyncio.Semaphore(max(1, self.options.concurrency))

        async def guarded(question: EvalQuestion) -> None:
            async with gate:
                try:
                    metrics = await self._one(question)
                except Exception as exc:  # one broken question must not lose the others' results
                    log.exception("eval question %s failed", question.key)
                    outcome.failed.append(question.key)
                    self.on_finished(Finished(question, None, f"{type(exc).__name__}: {exc}"))
                    return
                outcome.ran += 1
                self.on_finished(Finished(question, metrics))

        await asyncio.gather(*(guarded(q) for q in todo))
        by_key = {q.key: q for q in questions}
        # the question file says which split a question is in now, also for lines written before it did
        records = [
            {**r, "split": by_key[str(r["id"])].split}
            for r in read_lines(self.options.out / METRICS)
            if str(r.get("id")) in by_key
        ]
        outcome.summary = summarise(records)
        (self.options.out / SUMMARY).write_text(json.dumps(outcome.summary, indent=2) + "\n", encoding="utf-8")
        return outcome
