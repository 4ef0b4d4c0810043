"""`sleuth eval QUESTIONS.jsonl --out DIR`: research every question and measure the reports."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TextIO

import click

from sleuth.cli.research import TimeBudget, checked_sources
from sleuth.cli.settings import cli_settings
from sleuth.config import Settings
from sleuth.evaluation.judge import RaceJudge
from sleuth.evaluation.questions import EvalInputError, load_questions
from sleuth.evaluation.runner import ARTICLES, METRICS, SUMMARY, EvalOptions, EvalOutcome, EvalRunner, Finished
from sleuth.evaluation.summary import summary_table
from sleuth.llm.access import model_access_problem
from sleuth.llm.gateway import LLMGateway
from sleuth.llm.runtime import is_offline
from sleuth.research.preflight import PreflightError, preflight
from sleuth.runs.local import run
from sleuth.tools.factory import build_toolbox


class EvalProgress:
    """A progress bar redrawn in place on a terminal, one line per question otherwise."""

    def __init__(self, total: int, err: TextIO, live: bool) -> None:
        self.total = total
        self.done = 0
        self.err = err
        self.live = live

    def start(self, skipped: int) -> None:
        if skipped:
            click.echo(f"{skipped} question(s) already in the output; skipping them.", file=self.err)
        self._draw("")

    def __call__(self, finished: Finished) -> None:
        self.done += 1
        m = finished.metrics
        if m is None:
            note = f"{finished.question.key}: FAILED ({finished.error})"
        else:
            recall = m["key_fact_recall"]
            note = (
                f"{finished.question.key}: {m['stop_reason']}, {m['sources_cited']} cited"
                + (f", facts {recall:.0%}" if recall is not None else "")
                + f", {m['wall_s']:.1f}s"
            )
        self._draw(note)

    def _draw(self, note: str) -> None:
        width = 24
        filled = width * self.done // max(1, self.total)
        bar = f"[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total}"
        if self.live:
            click.echo(f"\r\x1b[2K{bar} {note}", file=self.err, nl=self.done == self.total)
        elif note:
            click.echo(f"{bar} {note}", file=self.err)


def _preflight(settings: Settings, options: EvalOptions, judge: str | None) -> None:
    """Refuse a setup that cannot work before researching anything: models, keys, sources, the judge."""

    try:
        preflight(settings, options.request("preflight"))
    except PreflightError as exc:
        raise click.ClickException(str(exc)) from None
    if judge:
        api_key = settings.api_key.get_secret_value() if settings.api_key else None
        problem = model_access_problem(judge, api_key, settings.api_base)
        if problem:
            raise click.ClickException(f"--judge {judge}: {problem}")


async def _run(settings: Settings, runner_options: EvalOptions, path: Path, judge: str | None) -> EvalOutcome:
    questions = load_questions(path)
    _preflight(settings, runner_options, judge)
    try:
        toolbox = build_toolbox(settings, runner_options.sources, owner_id=None)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    race = RaceJudge(LLMGateway(settings)) if judge else None
    progress = EvalProgress(len(questions), sys.stderr, sys.stderr.isatty())
    runner = EvalRunner(settings, toolbox, runner_options, judge=race, on_finished=progress)
    pending = runner.pending(questions)
    progress.total = len(pending)
    progress.start(len(questions) - len(pending))
    return await runner.run(questions)


@click.command(name="eval")
@click.argument("questions", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--out", "out", type=click.Path(path_type=Path, file_okay=False), required=True, help="Output folder.")
@click.option("--concurrency", type=click.IntRange(1, 16), default=1, show_default=True, help="Questions at once.")
@click.option("--mode", type=click.Choice(["light", "heavy"]), default=None, help="Research mode for every question.")
@click.option(
    "--time-budget",
    type=TimeBudget(),
    default=None,
    help="How long each question's run may take, e.g. 90s, 5m (default: the mode's budget).",
)
@click.option(
    "--source",
    "sources",
    multiple=True,
    metavar="NAME",
    help="Search only this source for every question (repeatable). See `sleuth sources`.",
)
@click.option(
    "--judge",
    default=None,
    metavar="MODEL",
    help="A litellm model that scores each report (RACE-style) and checks each citation.",
)
def eval_command(
    questions: Path,
    out: Path,
    concurrency: int,
    mode: str | None,
    time_budget: float | None,
    sources: tuple[str, ...],
    judge: str | None,
) -> None:
    """Research every question in QUESTIONS (JSON lines: id, prompt, optional gold_sources and key_facts).

    Writes OUT/articles.jsonl ({id, prompt, article}, DeepResearch Bench's form), OUT/metrics.jsonl and
    OUT/summary.json. Running it again skips the questions already written.
    """

    if judge is not None and (not judge.strip() or is_offline(judge)):
        raise click.BadParameter("needs a generative model; the offline model only extracts", param_hint="--judge")
    settings = cli_settings()
    if judge:
        settings = settings.model_copy(update={"judge_model": judge})
    options = EvalOptions(
        out=out,
        concurrency=concurrency,
        mode=mode,  # type: ignore[arg-type]  # click.Choice gives a str, always one of Mode's
        time_budget_s=time_budget,
        sources=checked_sources(settings, sources) if sources else None,
    )
    try:
        # runs.local.run: the MCP servers the questions' runs started are closed by their owner, on this loop
        outcome = run(_run(settings, options, questions, judge))
    except EvalInputError as exc:
        raise click.ClickException(str(exc)) from None
    except OSError as exc:  # the output folder cannot be created or written
        raise click.ClickException(f"cannot write to {out}: {exc.strerror or exc}") from None
    except KeyboardInterrupt:
        click.echo("interrupted; finished questions are saved, run the same command to continue", err=True)
        sys.exit(130)
    click.echo(summary_table(outcome.summary))
    click.echo(f"\nWrote {out / ARTICLES}, {out / METRICS} and {out / SUMMARY}.", err=True)
    if outcome.failed:
        click.echo(f"sleuth: {len(outcome.failed)} question(s) failed: {', '.join(outcome.failed)}", err=True)
        sys.exit(1)
