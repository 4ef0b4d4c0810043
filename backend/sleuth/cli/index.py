"""`sleuth index`: add a folder to the local corpus, list collections, remove one."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import click

from sleuth.cli.index_progress import IndexProgress, worth_showing
from sleuth.cli.settings import cli_settings
from sleuth.tools.local.access import BUILT_IN
from sleuth.tools.local.builtin import sync_builtin
from sleuth.tools.local.corpus import db_path_for
from sleuth.tools.local.folders import folder_collection
from sleuth.tools.local.indexer import IndexReport, scan_folder, sync
from sleuth.tools.local.schema import connect
from sleuth.tools.local.store import CorpusStore
from sleuth.tools.local.urls import BUILTIN_COLLECTION


@click.command("index")
@click.argument("directory", required=False, type=click.Path(path_type=Path))
@click.option("--name", help="Collection name (default: the folder's name). Appears in corpus://NAME/... URLs.")
@click.option("--list", "list_", is_flag=True, help="List collections with their document and chunk counts.")
@click.option("--remove", metavar="NAME", help="Remove a collection from the index.")
def index(directory: Path | None, name: str | None, list_: bool, remove: str | None) -> None:
    """Add DIRECTORY (md, txt, rst, html, pdf files) to the local corpus searched by `local`.

    Re-running is incremental: unchanged files are skipped, changed ones re-indexed,
    deleted ones removed.
    """
    chosen = sum([directory is not None, list_, remove is not None])
    if chosen != 1:
        raise click.UsageError("give exactly one of DIRECTORY, --list or --remove NAME")
    if name is not None and directory is None:
        raise click.UsageError("--name goes with DIRECTORY")

    settings = cli_settings()
    db_path = db_path_for(settings.data_dir)
    try:
        conn = connect(db_path)
    except sqlite3.Error as exc:
        raise click.ClickException(f"cannot open the index at {db_path}: {exc}") from exc
    try:
        store = CorpusStore(conn)
        if list_:
            _list(store)
        elif remove is not None:
            _remove(store, remove)
        else:
            assert directory is not None
            _add(store, directory, name, settings.index_max_file_bytes)
    except sqlite3.Error as exc:
        raise click.ClickException(f"index error ({db_path}): {exc}") from exc
    finally:
        conn.close()


def _list(store: CorpusStore) -> None:
    sync_builtin(store)  # "always available": make it visible even before the first search
    stats = store.stats(BUILT_IN)
    width = max(len("NAME"), *(len(s.name) for s in stats))
    click.echo(f"{'NAME':<{width}}  {'KIND':<7}  {'DOCS':>6}  {'CHUNKS':>7}  SOURCE")
    for s in stats:
        source = s.root or "CPython pydoc_data.topics"
        click.echo(f"{s.name:<{width}}  {s.kind:<7}  {s.documents:>6}  {s.chunks:>7}  {source}")


def _remove(store: CorpusStore, name: str) -> None:
    if name == BUILTIN_COLLECTION:
        raise click.ClickException(f"{name!r} is the built-in reference and cannot be removed")
    docs = next((s.documents for s in store.stats(BUILT_IN) if s.name == name), None)
    if docs is None or not store.remove_collection(name):
        raise click.ClickException(f"no collection named {name!r} (see `sleuth index --list`)")
    reclaimed = store.vacuum()
    click.echo(
        f"Removed collection {name!r} ({docs} documents); {reclaimed / 1_000_000:.1f} MB of disk space reclaimed."
    )


def _add(store: CorpusStore, directory: Path, name: str | None, max_bytes: int) -> None:
    if not directory.exists():
        raise click.ClickException(f"folder {str(directory)!r} does not exist")
    if not directory.is_dir():
        raise click.ClickException(f"{str(directory)!r} is not a folder")

    try:
        with store.transaction():
            collection = folder_collection(store, directory, name, "indexed")
    except ValueError as exc:
        raise click.ClickException(str(exc)) from exc
    # The built-in reference is routed with the other collections: its profile must exist before
    # the first run's header says where the question goes.
    sync_builtin(store)
    found = scan_folder(directory.resolve(), max_bytes=max_bytes)
    sources = found.sources
    if worth_showing(sources):
        progress = IndexProgress(collection.name, sources, sys.stderr)
        report = sync(store, collection, sources, progress=progress)
        progress.close()
    else:
        report = sync(store, collection, sources)
    skipped = [*found.skipped, *report.skipped]
    for path, reason in skipped:
        click.echo(f"skipped: {path}: {reason}", err=True)
    for path, reason in [*found.warnings, *report.warnings]:
        click.echo(f"warning: {path}: {reason}", err=True)
    for path, reason in report.errors:
        click.echo(f"error: {path}: {reason}", err=True)
    total = next(s for s in store.stats(BUILT_IN) if s.name == collection.name)
    click.echo(_summary(report, directory, total.documents, total.chunks, len(skipped)))
    if total.documents == 0:
        store.remove_collection(collection.name)  # an empty collection would only clutter --list
        if report.errors:
            why = "every supported file failed"
        elif skipped:
            why = "every entry was skipped (see the lines above)"
        else:
            why = "no md, txt, html or pdf files found"
        raise click.ClickException(f"nothing indexed from {str(directory)!r}: {why}")


def _summary(report: IndexReport, directory: Path, documents: int, chunks: int, skipped: int) -> str:
    return (
        f"Indexed {str(directory)!r} as {report.collection!r}: {report.added} added, {report.updated} updated, "
        f"{report.unchanged} unchanged, {report.removed} removed, {len(report.errors)} failed, {skipped} skipped "
        f"— {documents} documents, {chunks} chunks. URLs: corpus://{report.collection}/<path>"
    )
