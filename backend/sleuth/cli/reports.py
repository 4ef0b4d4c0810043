"""`sleuth export` and `sleuth ask`: working with a stored report from the command line."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import click

from sleuth.audio.encoding import WavEncoding, available_encoding
from sleuth.audio.jobs import make_audio
from sleuth.audio.script import ScriptError
from sleuth.cli.research import check_message_length, check_output_path, run_or_exit, write_export
from sleuth.cli.settings import cli_settings
from sleuth.config import Settings
from sleuth.exports.formats import FORMATS, ExportFormat, render_export
from sleuth.llm.speech import SpeechError
from sleuth.store.store import Store
from sleuth.stream.packets import Packet
from sleuth.stream.results import Followup, ResearchRequest, ResearchResult


def _settings() -> Settings:
    return cli_settings()


def load_report(settings: Settings, report_id: str) -> ResearchResult:
    """A stored, completed report, or a one-line error naming what is wrong."""

    store = Store.from_settings(settings)
    try:
        data = store.get_report(report_id.strip())
    finally:
        store.close()
    if data is None:
        raise click.ClickException(f"no report {report_id!r} in {settings.data_dir}")
    report = ResearchResult.model_validate(data)
    if report.status != "completed":
        raise click.ClickException(f"report {report_id!r} did not complete ({report.stop_reason})")
    return report


@click.command("export")
@click.argument("report_id")
@click.option("--format", "fmt", type=click.Choice(list(FORMATS)), default=None, help="Default: from -o, else md.")
@click.option("--output", "-o", type=click.Path(dir_okay=False), default=None, help="File to write; default stdout.")
def export(report_id: str, fmt: str | None, output: str | None) -> None:
    """Write a stored report as markdown, PDF or DOCX."""
    report = load_report(_settings(), report_id)
    if fmt is None:
        fmt = check_output_path(output) if output else "md"
    chosen: ExportFormat = fmt  # type: ignore[assignment]  # a click.Choice of FORMATS
    if output:
        write_export(report, chosen, output)
        click.echo(f"Report written to {output}", err=True)
    elif chosen == "md":
        click.echo(render_export(report, "md").decode("utf-8"), nl=False)
    else:
        raise click.UsageError(f"{chosen} is binary: give a file with -o")


@click.command("ask")
@click.argument("report_id")
@click.argument("question")
@click.option("--json", "as_json", is_flag=True, help="Print one packet per line instead of the answer.")
def ask(report_id: str, question: str, as_json: bool) -> None:
    """Ask a follow-up QUESTION about a stored report, answered from it and its sources only."""
    if not question.strip():
        raise click.UsageError("the question is empty")
    settings = _settings()
    check_message_length(settings, question)
    report = load_report(settings, report_id)
    followup = Followup(
        report_id=str(report.report_id), question=report.question, markdown=report.markdown, sources=report.sources
    )
    request = ResearchRequest(question=question.strip(), clarify=False, followup=followup)

    def sink(packet: Packet) -> None:
        if as_json:
            sys.stdout.write(packet.model_dump_json() + "\n")
        elif packet.obj.type == "message_delta":
            sys.stdout.write(packet.obj.content)
        sys.stdout.flush()

    result = asyncio.run(run_or_exit(request, settings, sink))
    if not as_json:
        sys.stdout.write("\n")
        for source in result.sources:
            click.echo(f"[{source.number}] {source.title or source.url} — {source.url}")
    if result.status == "error":
        sys.exit(1)


@click.command("narrate")
@click.argument("report_id")
@click.option(
    "--style", type=click.Choice(["narration", "overview", "dialogue"]), default="narration", show_default=True
)
@click.option("--output", "-o", type=click.Path(dir_okay=False), required=True, help="Audio file to write.")
def narrate(report_id: str, style: str, output: str) -> None:
    """Speak a stored report: read aloud, a short overview, or a two-voice dialogue.

    The file is MP3, or WAV when the -o name ends in .wav."""

    settings = _settings()
    report = load_report(settings, report_id)
    path = Path(output)
    encoding = WavEncoding() if path.suffix.lower() == ".wav" else available_encoding()
    try:
        # click.Choice gives `style` as a str, always one of the styles make_audio takes.
        spoken = asyncio.run(make_audio(settings, report, style, path, encoding))  # type: ignore[arg-type]
    except (ScriptError, SpeechError) as exc:
        raise click.ClickException(str(exc)) from None
    except OSError as exc:
        raise click.ClickException(f"could not write {output}: {exc.strerror or exc}") from None
    length = f", {spoken.duration_s:.0f} s" if spoken.duration_s else ""
    click.echo(f"{style} written to {output} ({spoken.media_type}{length})", err=True)
