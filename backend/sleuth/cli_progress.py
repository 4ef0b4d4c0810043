"""Human-readable live progress of a run in a terminal (the `--json`-less CLI view)."""

from __future__ import annotations

from typing import TextIO

import click

from sleuth.durations import format_duration
from sleuth.stream.packets import Packet


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

    def _line(self, text: str, fg: str | None = None, dim: bool = False) -> None:
        click.echo(click.style(text, fg=fg, dim=dim) if self.color else text, file=self.err)

    def _lane(self, packet: Packet) -> str:
        return f"  [lane {packet.placement.tab_index + 1}]"

    def __call__(self, packet: Packet) -> None:
        obj = packet.obj
        kind = obj.type
        if kind == "run_start":
            models = sorted(set(obj.models.values()))
            budget = f" · budget {format_duration(obj.time_budget_s)}" if obj.time_budget_s else ""
            self._line(f"Sleuth · {obj.mode} mode{budget} · model: {', '.join(models)}", fg="cyan")
        elif kind == "plan_done":
            self._planned = True
            self._line("Plan:", fg="cyan")
            for i, step in enumerate(obj.steps, 1):
                self._line(f"  {i}. {step}")
        elif kind == "reasoning_done" and packet.placement.sub_turn_index is None and obj.reasoning.strip():
            self._line(f"  thinking: {_short(obj.reasoning, 160)}", dim=True)
        elif kind == "top_level_branching":
            self._cycle += 1
            self._branches = obj.num_parallel_branches  # announced with the time left, by the next progress
        elif kind == "progress" and self._branches:
            n, self._branches = self._branches, 0
            left = f" · {format_duration(obj.time_left_s)} left" if obj.time_left_s is not None else ""
            self._line(
                f"Research cycle {self._cycle}: " + (f"{n} agents in parallel" if n > 1 else "1 agent") + left,
                fg="cyan",
            )
        elif kind == "research_agent_start":
            self._line(f"{self._lane(packet)} {_short(obj.task, 120)}", fg="magenta")
        elif kind == "search_queries":
            self._line(f"{self._lane(packet)} search: {' | '.join(obj.queries)}", dim=True)
        elif kind == "search_documents":
            self._line(f"{self._lane(packet)}   {len(obj.documents)} results", dim=True)
        elif kind == "open_url_documents" and obj.documents:
            self._line(
                f"{self._lane(packet)} read: {'; '.join(_short(d.title or d.url, 50) for d in obj.documents)}", dim=True
            )
        elif kind == "intermediate_report_cited_docs":
            self._line(f"{self._lane(packet)} reported, citing {len(obj.documents)} sources", fg="green")
        elif kind == "degraded":
            self._line(f"! {obj.level.replace('_', ' ')}: {obj.detail}", fg="yellow")
        elif kind == "error" and not obj.recoverable:
            self.fatal = obj.message
        elif kind == "error":
            self._line(f"✗ {obj.message}", fg="red")
        elif kind == "message_start" and self._planned:
            self._line("Writing the report…", fg="cyan")
        elif kind == "clarification":
            self.questions = obj.questions
        elif kind == "report":
            click.echo(obj.markdown, file=self.out)
            flagged: dict[str, int] = {}
            for claim in obj.unsupported_claims:
                flagged[claim.marker] = flagged.get(claim.marker, 0) + 1
            if obj.sources:
                click.echo("\nSources:", file=self.out)
                for source in obj.sources:
                    count = flagged.get(f"[{source.number}]", 0)
                    mark = f"  (! {count} unsupported claim{'s' if count > 1 else ''})" if count else ""
                    click.echo(f"[{source.number}] {source.title or source.url} — {source.url}{mark}", file=self.out)
            if obj.unsupported_claims:
                click.echo("\nUnsupported claims (the cited source does not appear to say this):", file=self.out)
                for claim in obj.unsupported_claims:
                    click.echo(f"! {claim.marker} “{_short(claim.sentence, 100)}” — {claim.reason}", file=self.out)
            if obj.removed_citations:
                self._line(f"{len(obj.removed_citations)} unverifiable citation(s) removed", fg="yellow")
        elif kind == "summary" and not self.questions and not self.fatal:
            self._line(
                f"Done in {obj.elapsed_s:.1f}s · sources seen {obj.sources_seen}, read {obj.sources_fetched}, "
                f"cited {obj.sources_cited} · tokens {obj.input_tokens}+{obj.output_tokens} · ${obj.cost_usd:.4f}",
                dim=True,
            )


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
