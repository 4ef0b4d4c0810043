"""Opening a document as the document viewer shows it, whoever asks (the HTTP routes, the MCP
server): by the id packets give it, or by URL."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from functools import partial
from pathlib import Path

from sleuth.api.refused import Refused
from sleuth.api.schemas import DocumentOut
from sleuth.api.services import Services
from sleuth.tools.base import ToolError
from sleuth.tools.extraction.blocks import text_blocks
from sleuth.tools.local import library
from sleuth.tools.local.access import Viewer
from sleuth.tools.local.corpus import db_path_for
from sleuth.tools.local.urls import is_corpus_url
from sleuth.tools.mcp.results import is_mcp_url
from sleuth.tools.web.factory import build_web_reader


async def document_by_id(services: Services, doc_id: str, session_id: str | None = None) -> DocumentOut:
    """A local one from the index, a tool's result one of the session's runs read, a web page a
    report cited (fetched now)."""
    found = await asyncio.to_thread(
        _opened, partial(library.document_by_id, _db(services), doc_id, viewer=_viewer(services))
    )
    if found is not None:
        return found
    store = services.store
    if session_id is not None:
        kept = await asyncio.to_thread(store.tool_document, session_id, doc_id=doc_id)
        if kept is not None:
            return await asyncio.to_thread(_document_out, kept.id, kept.url, kept.title, None, kept.text)
    url = await asyncio.to_thread(store.cited_url, doc_id)
    if url is None:
        raise Refused(404, f"document {doc_id!r} is neither in the local corpus nor cited by a stored report")
    return await document_by_url(services, url, session_id)


async def document_by_url(services: Services, url: str, session_id: str | None = None) -> DocumentOut:
    """corpus:// from the index; mcp:// as one of the session's runs read it (the tool is never
    called again); http(s) fetched now, through the same SSRF guard as agents."""
    if is_corpus_url(url):
        find = partial(library.document_by_url, _db(services), url, viewer=_viewer(services))
        found = await asyncio.to_thread(_opened, find)
        if found is None:
            raise Refused(404, f"no document at {url!r} in the local corpus")
        return found
    if session_id is not None:
        # A tool's result under a web URI (an MCP resource) opens as the run read it, too.
        kept = await asyncio.to_thread(services.store.tool_document, session_id, url=url)
        if kept is not None:
            return await asyncio.to_thread(_document_out, kept.id, kept.url, kept.title, None, kept.text)
    if is_mcp_url(url):
        why = " (give session_id)" if session_id is None else " (no run of this session read it)"
        raise Refused(404, "an MCP result opens only in the session whose run read it" + why)
    reader = build_web_reader(services.settings)
    if not reader.handles(url):
        raise Refused(422, "only corpus://, mcp://, http:// and https:// URLs can be opened")
    try:
        page = await reader.read(url)
    except ToolError as exc:
        raise Refused(422, f"could not open {url!r}: {exc}") from None
    document = page.document
    return await asyncio.to_thread(_document_out, document.id, document.url, document.title, None, page.text)


def _db(services: Services) -> Path:
    return db_path_for(services.settings.data_dir)


def _viewer(services: Services) -> Viewer:
    """The caller the services are seen by (`Services.seen_by`): a local document opens only from a
    collection they see."""
    return Viewer(services.store.owner)


def _document_out(doc_id: str, url: str, title: str, collection: str | None, text: str) -> DocumentOut:
    """The response, with the text read into blocks (linear in the text; run off the event loop)."""
    return DocumentOut(id=doc_id, url=url, title=title, collection=collection, text=text, blocks=text_blocks(text))


def _opened(find: Callable[[], library.DocumentText | None]) -> DocumentOut | None:
    found = find()
    if found is None:
        return None
    return _document_out(found.id, found.url, found.title, found.collection, found.text)
