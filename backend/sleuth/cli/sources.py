"""`sleuth sources` (what a run can search; `share` and `unshare` a user's upload) and `sleuth show
ID|URL` (print one document)."""

from __future__ import annotations

import asyncio
import sqlite3

import click

from sleuth.cli.settings import cli_settings
from sleuth.tools.base import ToolError
from sleuth.tools.local import library
from sleuth.tools.local.access import BUILT_IN
from sleuth.tools.local.corpus import db_path_for, unreadable_index
from sleuth.tools.local.urls import is_corpus_url
from sleuth.tools.sources import list_sources
from sleuth.tools.web.factory import build_web_reader


@click.group("sources", invoke_without_command=True)
@click.pass_context
def sources(ctx: click.Context) -> None:
    """List every source `--source NAME` accepts: local collections and configured web providers.

    ACCESS says who sees a local collection: `everyone` (no owner), `private` (a user's upload, theirs
    alone) or `shared` (a user's upload an administrator shared, read-only). The CLI, like the
    server's operator, sees every collection. `sleuth sources share NAME` and `unshare NAME` change it.
    """
    if ctx.invoked_subcommand is not None:
        return
    settings = cli_settings()
    try:
        found = list_sources(settings, viewer=BUILT_IN)
    except sqlite3.Error as exc:
        raise click.ClickException(unreadable_index(exc)) from None
    width = max(len("NAME"), *(len(s.name) for s in found))
    click.echo(f"{'NAME':<{width}}  {'KIND':<5}  {'DOCS':>6}  {'DEFAULT':<7}  ACCESS")
    for s in found:
        docs = "" if s.documents is None else str(s.documents)
        click.echo(
            f"{s.name:<{width}}  {s.kind:<5}  {docs:>6}  {'yes' if s.default else 'no':<7}  {s.visibility or ''}"
        )


@sources.command("share")
@click.argument("name")
def share(name: str) -> None:
    """Share the uploaded collection NAME with every user of the server, read-only."""
    _set_shared(name, shared=True)


@sources.command("unshare")
@click.argument("name")
def unshare(name: str) -> None:
    """Make the shared collection NAME private to the user who uploaded it again."""
    _set_shared(name, shared=False)


def _set_shared(name: str, *, shared: bool) -> None:
    settings = cli_settings()
    try:
        library.set_shared(db_path_for(settings.data_dir), name, shared)
    except library.LibraryError as exc:
        raise click.ClickException(str(exc)) from None
    except sqlite3.Error as exc:
        raise click.ClickException(unreadable_index(exc)) from None
    click.echo(f"{name}: shared with every user, read-only" if shared else f"{name}: private to its owner")


@click.command("show")
@click.argument("target")
def show(target: str) -> None:
    """Print a document: a local one by id (d_...) or corpus:// URL, or a web page by http(s) URL."""

    settings = cli_settings()
    target = target.strip()
    db_path = db_path_for(settings.data_dir)
    if target.lower().startswith(("http://", "https://")):
        try:
            page = asyncio.run(build_web_reader(settings).read(target))
        except ToolError as exc:
            raise click.ClickException(f"could not open {target}: {exc}") from None
        _print(page.document.title, page.document.url, None, page.text)
        return
    try:
        found = (
            library.document_by_url(db_path, target)
            if is_corpus_url(target)
            else library.document_by_id(db_path, target)
        )
    except sqlite3.Error as exc:
        raise click.ClickException(unreadable_index(exc)) from None
    if found is None:
        raise click.ClickException(f"no document {target!r} (give a document id, a corpus:// URL or an http(s) URL)")
    _print(found.title, found.url, found.collection, found.text)


def _print(title: str, url: str, collection: str | None, text: str) -> None:
    click.secho(title or url, bold=True)
    click.echo(url if collection is None else f"{url}  (collection {collection})")
    click.echo("")
    click.echo(text.rstrip())
