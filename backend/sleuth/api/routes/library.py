"""Sources, collections, uploads and documents: what a request can search, and opening what it found."""

from __future__ import annotations

import asyncio
from functools import partial
from pathlib import Path

from fastapi import APIRouter, HTTPException, Query, Request, UploadFile, status
from fastapi.responses import JSONResponse

from sleuth.api import documents
from sleuth.api.auth import principal_of
from sleuth.api.routes.deps import manager_of, responses, services_of, settings_of, upload_slots_of
from sleuth.api.schemas import (
    CollectionOut,
    DocumentEntryOut,
    DocumentOut,
    RefusedFileOut,
    SourceOut,
    UploadOut,
    UploadRefusedOut,
)
from sleuth.core.text import clean_label
from sleuth.tools import sources
from sleuth.tools.local import library
from sleuth.tools.local.access import Viewer, changes, visibility
from sleuth.tools.local.corpus import db_path_for
from sleuth.tools.local.isolated import ExtractionLimits, extract_in_child
from sleuth.tools.local.store import CollectionStats
from sleuth.tools.mcp.hub import ServerState

router = APIRouter(tags=["sources"])


def _db(request: Request) -> Path:
    return db_path_for(settings_of(request).data_dir)


def _refused(exc: library.LibraryError) -> HTTPException:
    return HTTPException(status_code=exc.status, detail=str(exc))


def _viewer(request: Request) -> Viewer:
    """Who asks, as the library judges it (tools/local/access.py): the built-in user sees everything."""
    principal = principal_of(request)
    return Viewer(principal.user_id, admin=principal.is_admin)


def _collection_out(stats: CollectionStats, viewer: Viewer) -> CollectionOut:
    return CollectionOut(
        name=stats.name,
        kind=stats.kind,
        documents=stats.documents,
        chunks=stats.chunks,
        visibility=visibility(stats.owner_id, stats.shared),
        editable=stats.kind == "uploaded" and changes(viewer, stats.owner_id),
    )


def _file_name(filename: str | None) -> str:
    """The upload's name as a label (core/text.py): no control or bidi characters, something visible."""
    try:
        return clean_label(filename or "")
    except ValueError as exc:
        raise HTTPException(status_code=422, detail=f"file name {filename or ''!r}: {exc}") from None


@router.get("/sources", response_model=list[SourceOut], responses=responses(401))
async def list_sources(request: Request) -> list[SourceOut]:
    """Every searchable source: local collections (with document counts), configured web providers,
    and MCP servers (with their tools and availability, as the engines that run them last said)."""
    found = await asyncio.to_thread(partial(sources.list_sources, settings_of(request), viewer=_viewer(request)))
    states = await manager_of(request).mcp_states()
    return [_source_out(s, states) for s in found]


def _source_out(source: sources.SourceInfo, states: tuple[ServerState, ...] | None) -> SourceOut:
    out = SourceOut(
        name=source.name,
        kind=source.kind,
        documents=source.documents,
        default=source.default,
        visibility=source.visibility,
        editable=source.editable,
    )
    if source.kind != "mcp":
        return out
    if states is None:
        return out.model_copy(update={"state": "starting"})
    known = next((s for s in states if s.name == source.name), None)
    if known is None:  # the file names a server the engines were not started with
        changed = "not started: the servers file changed since the server started"
        return out.model_copy(update={"state": "unavailable", "reason": changed})
    if known.state == "ready":
        return out.model_copy(update={"state": "ready", "tools": known.tools})
    if known.state == "starting":
        return out.model_copy(update={"state": "starting"})
    return out.model_copy(update={"state": "unavailable", "reason": known.reason or known.state})


@router.get("/collections", response_model=list[CollectionOut], responses=responses(401))
async def list_collections(request: Request) -> list[CollectionOut]:
    """The collections the caller sees: the shared ones and their own uploads."""
    viewer = _viewer(request)
    found = await asyncio.to_thread(partial(library.list_collections, _db(request), viewer=viewer))
    return [_collection_out(s, viewer) for s in found]


@router.get("/collections/{name}/documents", response_model=list[DocumentEntryOut], responses=responses(401, 404))
async def list_documents(request: Request, name: str) -> list[DocumentEntryOut]:
    try:
        entries = await asyncio.to_thread(partial(library.list_documents, _db(request), name, viewer=_viewer(request)))
    except library.LibraryError as exc:
        raise _refused(exc) from None
    return [DocumentEntryOut.model_validate(e) for e in entries]


@router.post(
    "/collections/{name}/documents",
    status_code=status.HTTP_201_CREATED,
    response_model=UploadOut,
    responses={
        **responses(401, 403, 409, 429),
        **{
            code: {"model": UploadRefusedOut, "description": f"No file was added ({what}); `refused` says why for each"}
            for code, what in ((413, "too big"), (415, "types not supported"), (422, "no usable text"))
        },
    },
)
async def upload_documents(request: Request, name: str, files: list[UploadFile]) -> UploadOut | JSONResponse:
    """Add files (md, txt, rst, html, pdf) to a collection, creating it if new.

    Each file is added or refused on its own (`refused` lists why); when none was added, the
    answer is that of the files' refusals (a single file's own status). Extraction runs in a
    child process bounded in time and memory; past `SLEUTH_UPLOAD_MAX_CONCURRENT` uploads being
    extracted, another gets 429 with Retry-After. With accounts, a new collection is the caller's,
    private until an administrator shares it; another user's private collection is not found (404),
    and one the caller sees but does not own is read-only (403).
    """
    settings = settings_of(request)
    slots = upload_slots_of(request)
    if slots.locked():  # refused, not queued: a queued request would hold its spooled files until its turn
        raise HTTPException(
            status_code=429,
            detail=f"the server is extracting its maximum of {settings.upload_max_concurrent} uploads; retry later",
            headers={"Retry-After": str(settings_of(request).retry_after_s)},
        )
    limits = library.UploadLimits(settings.upload_max_file_bytes, settings.upload_max_files)
    # The form parser spooled each file to disk (past 1 MB): the library copies it in bounded reads.
    uploads = [library.Upload(_file_name(file.filename), file.size, file.file) for file in files]
    extract_file = partial(extract_in_child, limits=ExtractionLimits.from_settings(settings))
    async with slots:
        try:
            add = partial(
                library.add_uploads, _db(request), name, uploads, limits, extract_file, viewer=_viewer(request)
            )
            result = await asyncio.to_thread(add)
        except library.UploadRefused as exc:
            refused = [RefusedFileOut.model_validate(r) for r in exc.refused]
            body = UploadRefusedOut(detail=str(exc), refused=refused)
            return JSONResponse(status_code=exc.status, content=body.model_dump())
        except library.LibraryError as exc:
            raise _refused(exc) from None
    return UploadOut.model_validate(result)


@router.delete("/collections/{name}", status_code=status.HTTP_204_NO_CONTENT, responses=responses(401, 403, 404, 409))
async def delete_collection(request: Request, name: str) -> None:
    try:
        await asyncio.to_thread(partial(library.delete_collection, _db(request), name, viewer=_viewer(request)))
    except library.LibraryError as exc:
        raise _refused(exc) from None


@router.delete(
    "/collections/{name}/documents/{doc_id}",
    status_code=status.HTTP_204_NO_CONTENT,
    responses=responses(401, 403, 404, 409),
)
async def delete_document(request: Request, name: str, doc_id: str) -> None:
    try:
        await asyncio.to_thread(partial(library.delete_document, _db(request), name, doc_id, viewer=_viewer(request)))
    except library.LibraryError as exc:
        raise _refused(exc) from None


@router.post("/collections/{name}/share", response_model=CollectionOut, responses=responses(401, 403, 404, 409))
async def share_collection(request: Request, name: str) -> CollectionOut:
    """Share a user's upload with every user, read-only (administrators only; 409 for a collection
    without an owner, which every user sees already)."""
    return await _set_shared(request, name, shared=True)


@router.delete("/collections/{name}/share", response_model=CollectionOut, responses=responses(401, 403, 404, 409))
async def unshare_collection(request: Request, name: str) -> CollectionOut:
    """Make a shared upload private to its owner again (administrators only)."""
    return await _set_shared(request, name, shared=False)


async def _set_shared(request: Request, name: str, *, shared: bool) -> CollectionOut:
    viewer = _viewer(request)
    try:
        if not viewer.admin:
            # What the caller does not see is not found; what they see, they may not share.
            await asyncio.to_thread(partial(library.find_collection, _db(request), name, viewer=viewer))
            raise HTTPException(status_code=403, detail="administrators only")
        found = await asyncio.to_thread(library.set_shared, _db(request), name, shared)
    except library.LibraryError as exc:
        raise _refused(exc) from None
    return _collection_out(found, viewer)


SessionQuery = Query(
    default=None,
    min_length=1,
    max_length=100,
    description="The session whose run read the document: what a tool (an MCP server) returned opens only there.",
)


@router.get("/documents/{doc_id}", response_model=DocumentOut, responses=responses(401, 404))
async def get_document(request: Request, doc_id: str, session_id: str | None = SessionQuery) -> DocumentOut:
    """A document by the id packets give it: a local one from the index, a tool's result one of the
    session's runs read, a web page a report cited (fetched now)."""
    return await documents.document_by_id(services_of(request), doc_id, session_id)


@router.get("/documents", response_model=DocumentOut, responses=responses(401, 404))
async def get_document_by_url(
    request: Request, url: str = Query(min_length=1, max_length=4096), session_id: str | None = SessionQuery
) -> DocumentOut:
    """A document by URL: corpus:// from the index; mcp:// as one of the session's runs read it (the
    tool is never called again); http(s) fetched now, through the same SSRF guard as agents."""
    return await documents.document_by_url(services_of(request), url, session_id)
