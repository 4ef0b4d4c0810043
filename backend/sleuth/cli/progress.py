"""Human-readable live progress of a run in a terminal (the `--json`-less CLI view)."""

from __future__ import annotations

import math
from typing import TextIO

import click

from sleuth.core.durations import format_duration
from sleuth.core.text import shorten
from sleuth.exports.markdown import document_markdown
from sleuth.stream.packets import (
    Clarification,
    Degraded,
    Error,
    IntermediateReportCitedDocs,
    MessageStart,
    OpenUrlDocuments,
    Packet,
    PlanDone,
    Progress,
    ReasoningDone,
    Report,
    ResearchAgentStart,
    RunStart,
    SearchDocuments,
    SearchQueries,
    Summary,
    TopLevelBranching,
)


def searched_line(start: RunStart) -> str:
    """What the run searches: the collections its question was routed to (and those left out, with
    why), then the other sources; the sources alone when the request chose them."""
    if not start.routes:
        return f"Searching: {', '.join(start.sources)}" if start.sources else ""
    routed = {route.name for route in start.routes}
    searched = [f"{r.name} ({r.reason})" for r in start.routes if r.searched]
    searched += [name for name in start.sources if name not in routed]
    line = f"Searching: {'; '.join(searched)}"
    left_out = [r for r in start.routes if not r.searched]
    if left_out:
        line += f" · not searched: {', '.join(r.name for r in left_out)} (they do not fit the question)"
    return line


class ProgressPrinter:
    """Turns packets into short progress lines on `err`; the verified report goes to `out`."""

    def __init__(self, out: TextIO, err: TextIO, color: bool) -> None:
        self.out = out
        self.err = err
        self.color = color
        self._cycle = 0
        self._branches = 0
        self._planned = False  # message packets before a plan are clarifying questions, not a report
        self.questions: list[str] = []
        self.fatal: str | None = None  # a run-ending error, left for the CLI's one closing line
        self.question = ""

    def _line(self, text: str, fg: str | None = None, dim: bool = False) -> None:
        click.echo(click.style(text, fg=fg, dim=dim) if self.color else text, file=self.err)

    def _lane(self, packet: Packet) -> str:
        return f"  [lane {packet.placement.tab_index + 1}]"

    def __call__(self, packet: Packet) -> None:
        lane = self._lane(packet)
        match packet.obj:
            case RunStart() as start:
                self.question = start.question
                models = sorted(set(start.models.values()))
                budget = f" · budget {format_duration(start.time_budget_s)}" if start.time_budget_s else ""
                self._line(f"Sleuth · {start.mode} mode{budget} · model: {', '.join(models)}", fg="cyan")
                searched = searched_line(start)
                if searched:
                    self._line(searched, fg="cyan")
            case PlanDone(steps=steps):
                self._planned = True
                self._line("Plan:", fg="cyan")
                for i, step in enumerate(steps, 1):
                    self._line(f"  {i}. {step}")
            case ReasoningDone(reasoning=reasoning) if packet.placement.sub_turn_index is None and reasoning.strip():
                self._line(f"  thinking: {shorten(reasoning, 160)}", dim=True)
            case TopLevelBranching(num_parallel_branches=n):
                self._cycle += 1
                self._branches = n  # announced with the time left, by the next progress
            case Progress(time_left_s=time_left_s) if self._branches:
                n, self._branches = self._branches, 0
                # a countdown never shows more than is left: 59m 59s, not a rounded-up 1h
                left = f" · {format_duration(math.floor(time_left_s))} left" if time_left_s is not None else ""
                self._line(
                    f"Research cycle {self._cycle}: " + (f"{n} agents in parallel" if n > 1 else "1 agent") + left,
                    fg="cyan",
                )
            case ResearchAgentStart(task=task):
                self._line(f"{lane} {shorten(task, 120)}", fg="magenta")
            case SearchQueries(queries=queries):
                self._line(f"{lane} search: {' | '.join(queries)}", dim=True)
            case SearchDocuments(documents=documents):
                self._line(f"{lane}   {len(documents)} results", dim=True)
            case OpenUrlDocuments(documents=documents) if documents:
                self._line(f"{lane} read: {'; '.join(shorten(d.title or d.url, 50) for d in documents)}", dim=True)
            case IntermediateReportCitedDocs(documents=documents):
                self._line(f"{lane} reported, citing {len(documents)} sources", fg="green")
            case Degraded(level=level, detail=detail):
                self._line(f"! {level.replace('_', ' ')}: {detail}", fg="yellow")
            case Error(message=message, recoverable=False):
                self.fatal = message
            case Error(message=message):
                self._line(f"✗ {message}", fg="red")
            case MessageStart() if self._planned:
                self._line("Writing the report…", fg="cyan")
            case Clarification(questions=questions):
                self.questions = questions
            case Report() as report:
                self._report(report)
            case Summary() as summary if not self.questions and not self.fatal:
                self._line(
                    f"Done in {summary.elapsed_s:.1f}s · sources seen {summary.sources_seen}, "
                    f"read {summary.sources_fetched}, cited {summary.sources_cited} · "
                    f"tokens {summary.input_tokens}+{summary.output_tokens} · ${summary.cost_usd:.4f}",
                    dim=True,
                )

    def _report(self, report: Report) -> None:
        document = document_markdown(
            question=self.question,
            title=report.title,
            summary=report.summary,
            key_findings=report.key_findings,
            markdown=report.markdown,
            sources=report.sources,
        )
        # the terminal's own sources list follows, with its unsupported-claim marks
        click.echo(document.rpartition("\n## Sources\n")[0], file=self.out)
        flagged: dict[str, int] = {}
        for claim in report.unsupported_claims:
            flagged[claim.marker] = flagged.get(claim.marker, 0) + 1
        if report.sources:
            click.echo("\nSources:", file=self.out)
            for source in report.sources:
                count = flagged.get(f"[{source.number}]", 0)
                mark = f"  (! {count} unsupported claim{'s' if count > 1 else ''})" if count else ""
                click.echo(f"[{source.number}] {source.title or source.url} — {source.url}{mark}", file=self.out)
        if report.unsupported_claims:
            click.echo(
                "\nUnsupported claims (no source is cited, or the cited one does not appear to say this):",
                file=self.out,
            )
            for claim in report.unsupported_claims:
                marker = f"{claim.marker} " if claim.marker else ""  # an uncited sentence has none
                click.echo(f"! {marker}“{shorten(claim.sentence, 100)}” — {claim.reason}", file=self.out)
        if report.removed_citations:
            self._line(f"{len(report.removed_citations)} unverifiable citation(s) removed", fg="yellow")
