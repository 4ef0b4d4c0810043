"""Writing a report to a file from the CLI (`research --output`, `export`)."""

from __future__ import annotations

from pathlib import Path

import click

from sleuth.exports.formats import FORMATS, ExportFormat, render_export
from sleuth.stream.results import ResearchResult


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
