"""`sleuth research`, and writing a report to a file (`research --output`, `export`)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from sleuth.cli.answers import answer_questions, exit_failed
from sleuth.cli.json_lines import JsonLines
from sleuth.cli.plan_review import TerminalReviewer
from sleuth.cli.progress import ProgressPrinter
from sleuth.cli.remote import KEY_ENV, KEY_FILE_ENV, SERVER_ENV, RemoteOptions, Server, research_on_server, server_key
from sleuth.cli.settings import cli_check_database, cli_settings
from sleuth.config import MAX_TIME_BUDGET_S, MIN_TIME_BUDGET_S, Mode, Settings, Strategy
from sleuth.core.durations import format_duration, parse_duration
from sleuth.core.ids import new_run_id
from sleuth.core.text import has_visible_text, message_too_long
from sleuth.exports.formats import FORMATS, ExportFormat, render_export
from sleuth.research.planning.review import AutoApprove, PlanReviewer
from sleuth.runs import local as event_loop
from sleuth.runs.local import RunRefused, run_request
from sleuth.runs.warmup import start_for_cli
from sleuth.stream.emitter import PacketSink
from sleuth.stream.packets import Packet
from sleuth.stream.results import ClarificationExchange, ResearchRequest, ResearchResult
from sleuth.tools.local.access import BUILT_IN
from sleuth.tools.sources import UnknownSource, check_sources, clean_names


class TimeBudget(click.ParamType[float]):
    name = "duration"

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> float:
        if isinstance(value, float):
            return value
        try:
            seconds = parse_duration(str(value))
        except ValueError as exc:
            self.fail(str(exc), param, ctx)
        if not MIN_TIME_BUDGET_S <= seconds <= MAX_TIME_BUDGET_S:
            self.fail(
                f"must be between {format_duration(MIN_TIME_BUDGET_S)} and {format_duration(MAX_TIME_BUDGET_S)}",
                param,
                ctx,
            )
        return seconds


@click.command()
@click.argument("question")
@click.option(
    "--mode", type=click.Choice(["light", "heavy"]), default=None, help="light: one round of short agents, quicker."
)
@click.option("--strategy", type=click.Choice(["exploratory", "focused", "balanced"]), default=None)
@click.option("--no-clarify", is_flag=True, help="Research the question as asked, without clarifying questions.")
@click.option(
    "--json", "as_json", is_flag=True, help="Print one packet per line (the SSE `data` objects), nothing else."
)
@click.option("--answer", default=None, help="Your answer if Sleuth asks clarifying questions (no prompt then).")
@click.option(
    "--time-budget",
    type=TimeBudget(),
    default=None,
    help="How long the run may take, e.g. 90s, 5m, 1h (default: the mode's budget).",
)
@click.option(
    "--source",
    "sources",
    multiple=True,
    metavar="NAME",
    help="Search only this source (a collection or web provider; repeatable). See `sleuth sources`.",
)
@click.option("--review-plan", is_flag=True, help="Show the plan and ask to approve, edit or revise it first.")
@click.option("--approve-plan", is_flag=True, help="With --review-plan: approve the plan without asking.")
@click.option(
    "--output",
    "-o",
    "output",
    type=click.Path(dir_okay=False, writable=True),
    default=None,
    help="Also write the report to FILE (.md, .pdf or .docx).",
)
@click.option(
    "--server",
    envvar=SERVER_ENV,
    default=None,
    metavar="URL",
    help=f"Research on this Sleuth server instead of here (or {SERVER_ENV}); its API key comes from "
    f"{KEY_ENV} or the file {KEY_FILE_ENV} names.",
)
def research(
    question: str,
    mode: Mode | None,
    strategy: Strategy | None,
    no_clarify: bool,
    as_json: bool,
    answer: str | None,
    time_budget: float | None,
    sources: tuple[str, ...],
    review_plan: bool,
    approve_plan: bool,
    output: str | None,
    server: str | None,
) -> None:
    """Research QUESTION and print a cited report."""
    if not has_visible_text(question):
        raise click.UsageError("the question is empty")
    if server is not None:
        # The REST API has no strategy, and the terminal's plan review is not wired to the server's yet.
        refused = [
            name for name, used in (("--strategy", strategy), ("--review-plan", review_plan or approve_plan)) if used
        ]
        if refused:
            raise click.UsageError(f"{' and '.join(refused)} cannot be used with --server yet")
        options = RemoteOptions(
            mode=mode,
            clarify=False if no_clarify else None,
            time_budget_s=time_budget,
            sources=clean_names(sources) if sources else None,
        )
        target = (output, check_output_path(output)) if output else None
        remote = Server(server, server_key())
        research_on_server(remote, question.strip(), options, as_json=as_json, answer=answer, output=target)
        return
    start_for_cli()  # on the preload thread while the run starts: its first packet need not wait
    settings = cli_settings()
    check_message_length(settings, question, answer)
    request = ResearchRequest(
        question=question.strip(),
        mode=mode,
        strategy=strategy,
        clarify=False if no_clarify else None,
        time_budget_s=time_budget,
        sources=clean_names(sources) if sources else None,
        review_plan=review_plan or approve_plan,
    )
    reviewer: PlanReviewer | None = None
    if request.review_plan:
        if not approve_plan and (as_json or not sys.stdin.isatty()):
            raise click.UsageError("--review-plan asks in the terminal; add --approve-plan when there is none")
        reviewer = AutoApprove() if approve_plan else TerminalReviewer()
    export_format = check_output_path(output) if output else None
    cli_check_database(settings)  # the finished report is saved there

    printer = ProgressPrinter(sys.stdout, sys.stderr, color=sys.stderr.isatty())
    sink: PacketSink = JsonLines(sys.stdout) if as_json else printer
    try:
        run_id, kept = new_run_id(), list[Packet]()
        result = event_loop.run(run_or_exit(request, settings, sink, reviewer, run_id, kept), settings.slow_callback_ms)
        if result.status == "waiting_for_input":
            prompted = answer is None
            answer = answer_questions(result.clarification_questions, answer, as_json=as_json)
            if answer is None:
                return
            if prompted:
                check_message_length(settings, answer)
            request.clarification = ClarificationExchange(questions=result.clarification_questions, answer=answer)
            run_id, kept = new_run_id(), list[Packet]()
            result = event_loop.run(
                run_or_exit(request, settings, sink, reviewer, run_id, kept), settings.slow_callback_ms
            )
    except KeyboardInterrupt:
        click.echo("cancelled", err=True)
        sys.exit(130)
    if result.status == "error":
        exit_failed(printer, result.error, as_json=as_json)
    if result.status == "completed" and result.report_id:
        event_loop.save_report(settings, request, result, run_id, kept)
        if not as_json:
            click.echo(f"Report {result.report_id} saved (sleuth export / sleuth ask).", err=True)
    if output and export_format and result.status == "completed" and result.report_id:
        write_export(result, export_format, output)
        if not as_json:
            click.echo(f"Report written to {output}", err=True)


def check_output_path(path: str) -> ExportFormat:
    """The format a file name asks for; a usage error for any other suffix."""
    suffix = Path(path).suffix.lower().lstrip(".")
    if suffix not in FORMATS:
        raise click.UsageError(f"cannot write {path!r}: the file name must end in .md, .pdf or .docx")
    return suffix  # narrowed to ExportFormat by the membership check


def write_export(report: ResearchResult, fmt: ExportFormat, path: str) -> None:
    try:
        body = render_export(report, fmt)
    except Exception as exc:  # a rendering failure must not cost the user the report: it stays stored
        raise click.ClickException(f"could not render the report as {fmt}: {exc}") from None
    try:
        Path(path).write_bytes(body)
    except OSError as exc:
        raise click.ClickException(f"could not write {path}: {exc.strerror or exc}") from None


def check_message_length(settings: Settings, *texts: str | None) -> None:
    """The server's limit on a question or message (`SLEUTH_MAX_MESSAGE_CHARS`), with its message."""
    for text in texts:
        problem = message_too_long(text or "", settings.max_message_chars)
        if problem is not None:
            raise click.ClickException(problem)


def checked_sources(settings: Settings, names: tuple[str, ...]) -> list[str]:
    """The source names, checked to exist, or a one-line CLI error."""

    try:
        return check_sources(settings, names, viewer=BUILT_IN)  # the CLI is the built-in user
    except UnknownSource as exc:
        raise click.ClickException(str(exc)) from None


async def run_or_exit(
    request: ResearchRequest,
    settings: Settings,
    sink: PacketSink,
    reviewer: PlanReviewer | None = None,
    run_id: str | None = None,
    kept: list[Packet] | None = None,
) -> ResearchResult:
    """`runs.local.run_request`, a refusal as one line and exit 1."""

    try:
        return await run_request(request, settings, sink, reviewer, run_id, kept)
    except RunRefused as exc:
        raise click.ClickException(str(exc)) from None
