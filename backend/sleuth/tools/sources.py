"""The sources a request may choose from: local collections, configured web providers, and MCP
servers (whose tools the agents may call).

One place decides what a source name means, so the API, the CLI and the engine agree: a name is a
web provider listed in SLEUTH_SEARCH, a local collection in the corpus index that the caller sees
(tools/local/access.py: another user's private upload is not a source to them), or a server of the
MCP servers file.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from sleuth.config import Settings
from sleuth.tools.local.access import Viewer, Visibility, changes, visibility
from sleuth.tools.local.builtin import sync_builtin
from sleuth.tools.local.corpus import db_path_for, unreadable_index
from sleuth.tools.local.schema import connect
from sleuth.tools.local.store import CorpusStore
from sleuth.tools.local.urls import BUILTIN_COLLECTION, slugify
from sleuth.tools.mcp.config import McpConfigError, load_config
from sleuth.tools.web.factory import NOT_WEB, PROVIDERS, provider_names

SourceKind = Literal["local", "web", "mcp"]


class UnknownSource(ValueError):
    """A request's sources cannot be used: a name that does not exist (the message lists the ones
    that do), or a corpus index that cannot be read to tell."""


@dataclass(frozen=True)
class SourceInfo:
    name: str
    kind: SourceKind
    documents: int | None = None  # local collections only
    default: bool = False  # searched when a request chooses no sources
    visibility: Visibility | None = None  # local collections only: who sees it
    editable: bool | None = None  # local collections only: whether the caller may add files to it


@dataclass(frozen=True)
class Selection:
    """What one run searches: local collections (None: the settings' default scope) and web
    providers; and whose MCP tools its agents may call (None: every configured server's)."""

    collections: tuple[str, ...] | None
    web: tuple[str, ...]
    local: bool  # whether the `local` provider is searched at all
    mcp: tuple[str, ...] | None = None


def mcp_server_names(settings: Settings) -> list[str]:
    """The MCP servers a request may name: the enabled entries of the servers file (whether they
    start is the engine's to find out; a file that cannot be read names none, and each run says why)."""
    try:
        servers = load_config(settings).servers
    except McpConfigError:
        return []
    return [server.name for server in servers if server.enabled]


def web_provider_names(settings: Settings) -> list[str]:
    return [name for name in dict.fromkeys(provider_names(settings)) if name in PROVIDERS]


def _local_default(settings: Settings, store: CorpusStore, kinds: dict[str, str]) -> list[str]:
    if settings.corpus is None:
        return [name for name, kind in kinds.items() if kind != "env"]
    folder = Path(settings.corpus).expanduser()
    if folder.is_dir():
        found = store.collection_by_root(str(folder.resolve()))
        return [found.name if found is not None else slugify(folder.resolve().name)]
    return [settings.corpus]


def list_sources(settings: Settings, *, viewer: Viewer) -> list[SourceInfo]:
    """Every source `viewer` may name, local collections first (the built-in reference leading)."""
    with closing(connect(db_path_for(settings.data_dir))) as conn:
        store = CorpusStore(conn)
        sync_builtin(store)  # a fingerprint check: the reference is listed from the first start
        stats = store.stats(viewer)
        kinds = {s.name: s.kind for s in stats}
        local_default = set(_local_default(settings, store, kinds)) if "local" in provider_names(settings) else set()
    web_default = set(web_provider_names(settings))
    sources = [
        SourceInfo(
            s.name,
            "local",
            s.documents,
            s.name in local_default,
            visibility(s.owner_id, s.shared),
            s.kind == "uploaded" and changes(viewer, s.owner_id),
        )
        for s in stats
    ]
    sources += [SourceInfo(name, "web", None, name in web_default) for name in web_provider_names(settings)]
    sources += [SourceInfo(name, "mcp", None, True) for name in mcp_server_names(settings)]
    return sources


def default_names(settings: Settings, *, viewer: Viewer) -> list[str]:
    """The names a request of `viewer` without `sources` searches (for `run_start.sources`).

    Read-only and quick (no indexing): the engine calls it before its first packet.
    """
    local: list[str] = []
    if "local" in provider_names(settings):
        try:
            with closing(connect(db_path_for(settings.data_dir))) as conn:
                store = CorpusStore(conn)
                kinds = {BUILTIN_COLLECTION: "builtin"}
                kinds.update(store.kinds(viewer))
                local = _local_default(settings, store, kinds)
        except sqlite3.Error:
            local = [settings.corpus or BUILTIN_COLLECTION]
    return local + web_provider_names(settings) + mcp_server_names(settings)


def clean_names(names: Sequence[str]) -> list[str]:
    """Requested names without blanks, surrounding spaces or repeats, in order."""
    return list(dict.fromkeys(name.strip() for name in names if name.strip()))


def check_sources(settings: Settings, names: Sequence[str], *, viewer: Viewer) -> list[str]:
    """The requested names, cleaned; UnknownSource names the first one that does not exist for
    `viewer` (another user's private collection does not)."""
    wanted = clean_names(names)
    if not wanted:
        raise UnknownSource("no sources chosen; name at least one (see GET /api/sources or `sleuth sources`)")
    try:
        with closing(connect(db_path_for(settings.data_dir))) as conn:
            store = CorpusStore(conn)
            sync_builtin(store)
            collections = store.kinds(viewer)  # names only: no counting per request
    except sqlite3.Error as exc:
        raise UnknownSource(unreadable_index(exc)) from exc
    known = {*collections, *web_provider_names(settings), *mcp_server_names(settings)}
    for name in wanted:
        if name not in known:
            listed = ", ".join(sorted(known)) or "none"
            raise UnknownSource(f"unknown source {name!r} (known sources: {listed})")
    return wanted


def select(settings: Settings, names: Sequence[str] | None) -> Selection:
    """Split chosen names into collections and web providers; None keeps the settings' defaults.

    No index access: names were checked up front (`check_sources`), and a collection removed since
    simply has nothing to find.
    """
    configured = web_provider_names(settings)
    if names is None:
        return Selection(None, tuple(configured), "local" in provider_names(settings))
    servers = set(mcp_server_names(settings))
    web = tuple(name for name in names if name in PROVIDERS)
    mcp = tuple(name for name in names if name in servers)
    collections = tuple(name for name in names if name not in PROVIDERS and name not in NOT_WEB and name not in servers)
    return Selection(collections, web, bool(collections), mcp)
