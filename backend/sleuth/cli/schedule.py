"""`sleuth schedule add|list|remove|run`: schedules in the store that `sleuth serve` fires
(docs/schedules.md). `run` researches the schedule's question here and now, in its session, compared
with its last run, as a firing would."""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from typing import get_args

import click

from sleuth.cli.json_lines import JsonLines
from sleuth.cli.progress import ProgressPrinter
from sleuth.cli.research import TimeBudget, run_or_exit
from sleuth.cli.settings import cli_check_database, cli_settings
from sleuth.config import Mode, Settings
from sleuth.core.durations import format_duration
from sleuth.core.ids import new_run_id
from sleuth.runs import local as event_loop
from sleuth.schedules.scheduler import fired_now
from sleuth.schedules.specs import ScheduleError, ScheduleSpec, new_schedule
from sleuth.store.schedules import Notify, ScheduleRecord, ScheduleStore
from sleuth.store.store import Store
from sleuth.stream.emitter import PacketSink
from sleuth.stream.packets import Packet
from sleuth.stream.results import ResearchRequest, Snapshot
from sleuth.tools.sources import clean_names


def _store(settings: Settings) -> Store:
    cli_check_database(settings)
    return Store.from_settings(settings)


def _find(schedules: ScheduleStore, schedule_id: str) -> ScheduleRecord:
    record = schedules.get(schedule_id)
    if record is None:
        raise click.ClickException(f"no schedule {schedule_id!r} (sleuth schedule list)")
    return record


def timing_text(record: ScheduleRecord) -> str:
    if record.cron is not None:
        return f"cron '{record.cron}' {record.timezone}"
    return f"every {format_duration(record.every_s or 0)}"


@click.group("schedule")
def schedule() -> None:
    """Ask a question again on a schedule and see what changed: add, list, remove, or run one now."""


@schedule.command("add")
@click.argument("question")
@click.option("--cron", default=None, help="A cron expression, e.g. '0 7 * * 1-5' (weekdays at 07:00).")
@click.option("--every", default=None, help="An interval instead of cron: 6h, 30m, 1h30m.")
@click.option("--tz", "timezone", default="UTC", show_default=True, help="The IANA time zone of --cron.")
@click.option("--source", "sources", multiple=True, metavar="NAME", help="Search only this source (repeatable).")
@click.option("--mode", type=click.Choice(get_args(Mode)), default=None, help="light or heavy.")
@click.option("--time-budget", type=TimeBudget(), default=None, help="How long each run may take, e.g. 5m.")
@click.option(
    "--notify",
    type=click.Choice(["always", "on_change", "never"]),
    default="on_change",
    show_default=True,
    help="When to call the webhook.",
)
@click.option("--webhook", "webhook_url", default=None, help="POST what changed to this URL (signed, HMAC-SHA256).")
@click.option("--email", default=None, help="E-mail what changed to this address (needs SLEUTH_SMTP_HOST).")
def add(
    question: str,
    cron: str | None,
    every: str | None,
    timezone: str,
    sources: tuple[str, ...],
    mode: Mode | None,
    time_budget: float | None,
    notify: Notify,
    webhook_url: str | None,
    email: str | None,
) -> None:
    """Schedule QUESTION: every run is a run in the schedule's own session."""
    settings = cli_settings()
    spec = ScheduleSpec(
        question=question,
        cron=cron,
        every=every,
        timezone=timezone,
        sources=clean_names(sources) if sources else None,
        mode=mode,
        time_budget_s=time_budget,
        notify=notify,
        webhook_url=webhook_url,
        email=email,
    )
    try:
        record, title = new_schedule(spec, settings, datetime.now(UTC))
    except ScheduleError as exc:
        raise click.ClickException(str(exc)) from None
    store = _store(settings)
    try:
        ScheduleStore(store.database).create(record, title)
    finally:
        store.close()
    click.echo(f"{record.id}  next due {record.next_due_at}  ({timing_text(record)})")
    if record.webhook_secret:
        click.echo(f"webhook secret (shown once): {record.webhook_secret}")


@schedule.command("list")
def list_schedules() -> None:
    """Every schedule: id, next due time (UTC), timing, whether paused, the last firing, the question."""
    store = _store(cli_settings())
    try:
        schedules = ScheduleStore(store.database)
        records = schedules.all()
        if not records:
            click.echo("No schedules (sleuth schedule add).")
        for record in records:
            last = schedules.firings(record.id, limit=1)
            state = "paused" if record.paused else f"next {record.next_due_at}"
            fired = f"last {last[0].status} {last[0].fired_at}" if last else "never fired"
            click.echo(f"{record.id}  {state}  {timing_text(record)}  {fired}  {record.question[:80]}")
    finally:
        store.close()


@schedule.command("remove")
@click.argument("schedule_id")
def remove(schedule_id: str) -> None:
    """Remove a schedule; its session keeps the runs and reports it made."""
    store = _store(cli_settings())
    try:
        if not ScheduleStore(store.database).delete(schedule_id):
            raise click.ClickException(f"no schedule {schedule_id!r} (sleuth schedule list)")
    finally:
        store.close()
    click.echo(f"removed {schedule_id}")


@schedule.command("run")
@click.argument("schedule_id")
@click.option(
    "--json", "as_json", is_flag=True, help="Print one packet per line (the SSE `data` objects), nothing else."
)
def run(schedule_id: str, as_json: bool) -> None:
    """Run a schedule's question now, here, and print the report with what changed since its last run."""
    settings = cli_settings()
    store = _store(settings)
    try:
        schedules = ScheduleStore(store.database)
        record = _find(schedules, schedule_id)
        if schedules.session_running(record.session_id):
            raise click.ClickException("the schedule's previous run is still running; wait or cancel it")
        previous = schedules.previous_snapshot(record.session_id)
    finally:
        store.close()
    request = ResearchRequest(
        question=record.question,
        session_id=record.session_id,
        mode=record.mode,
        clarify=False,
        time_budget_s=record.time_budget_s,
        sources=record.sources,
        scheduled=True,
        previous=Snapshot.model_validate(previous) if previous else None,
    )
    printer = ProgressPrinter(sys.stdout, sys.stderr, color=sys.stderr.isatty())
    sink: PacketSink = JsonLines(sys.stdout) if as_json else printer
    run_id, kept = new_run_id(), list[Packet]()
    try:
        result = event_loop.run(run_or_exit(request, settings, sink, None, run_id, kept), settings.slow_callback_ms)
    except KeyboardInterrupt:
        click.echo("cancelled", err=True)
        sys.exit(130)
    event_loop.save_report(settings, request, result, run_id, kept)
    store = Store.from_settings(settings)
    try:
        ScheduleStore(store.database).record_firing(fired_now(record, run_id, datetime.now(UTC)))
    finally:
        store.close()
    if result.status == "error":
        if not as_json:
            click.echo(f"sleuth: research failed: {printer.fatal or result.error or 'see above'}", err=True)
        sys.exit(1)
    if not as_json and result.report_id:
        click.echo(f"Report {result.report_id} saved in the schedule's session {record.session_id}.", err=True)
