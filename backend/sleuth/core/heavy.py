"""The one lazy import boundary: the libraries a command may never use, and that cost more to import
than the paths with a speed target can pay (`sleuth --help`, a CLI run's first packet, a server's
first run).

They are imported here and nowhere else (the `heavy` contract in pyproject.toml). Each name below is
declared for the type checker and imported on its first use: code writes `heavy.BeautifulSoup(...)`
inside the function that needs it, never `from sleuth.core.heavy import ...` (ruff refuses it).

`preload` imports libraries, and runs a warm-up after them, on one background thread, in the order
asked; `ready` awaits them on an event loop without holding a thread of its executor, so a loop that
closes meanwhile does not wait for an import under way. `on_load` runs a step once a library has
loaded, before anyone else can use it (litellm's configuration, `llm/runtime.py`).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from importlib import import_module
from importlib.machinery import PathFinder
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import litellm as litellm
    import procrastinate as procrastinate
    import psycopg as psycopg
    import redis as redis
    import tiktoken as tiktoken
    from bs4 import BeautifulSoup as BeautifulSoup
    from bs4.element import Comment as Comment
    from bs4.element import NavigableString as NavigableString
    from bs4.element import PageElement as PageElement
    from bs4.element import PreformattedString as PreformattedString
    from bs4.element import Tag as Tag
    from ddgs import DDGS as DDGS
    from ddgs.exceptions import DDGSException as DDGSException
    from ddgs.exceptions import RatelimitException as RatelimitException
    from ddgs.exceptions import TimeoutException as TimeoutException
    from docx import Document as Document
    from docx.document import Document as _DocxDocument
    from docx.opc.constants import RELATIONSHIP_TYPE as RELATIONSHIP_TYPE
    from docx.oxml import OxmlElement as OxmlElement
    from docx.oxml.ns import qn as qn
    from docx.shared import Pt as Pt
    from docx.text.paragraph import Paragraph as Paragraph
    from fpdf import FPDF as FPDF
    from fpdf.fonts import FontFace as FontFace
    from fpdf.html import HTML2FPDF as HTML2FPDF
    from fpdf.line_break import TextLine as TextLine
    from httpx2 import AsyncBaseTransport as _Httpx2AsyncBaseTransport
    from httpx2 import AsyncClient as _Httpx2AsyncClient
    from httpx2 import AsyncHTTPTransport as _Httpx2AsyncHTTPTransport
    from httpx2 import Request as _Httpx2Request
    from httpx2 import Response as _Httpx2Response
    from httpx2 import Timeout as _Httpx2Timeout
    from jsonschema import Draft202012Validator as Draft202012Validator
    from jsonschema.exceptions import SchemaError as SchemaError
    from litellm.llms.custom_llm import CustomLLM as CustomLLM
    from litellm.types.llms.openai import ChatCompletionToolCallChunk as ChatCompletionToolCallChunk
    from litellm.types.llms.openai import ChatCompletionUsageBlock as ChatCompletionUsageBlock
    from litellm.types.utils import GenericStreamingChunk as GenericStreamingChunk
    from litellm.utils import custom_llm_setup as custom_llm_setup
    from markdown_it import MarkdownIt as MarkdownIt
    from markdown_it.rules_core import StateCore as StateCore
    from markdown_it.token import Token as Token
    from mcp.client.client import Client as _McpClient
    from mcp.client.stdio import StdioServerParameters as StdioServerParameters
    from mcp.client.stdio import stdio_client as stdio_client
    from mcp.client.streamable_http import streamable_http_client as streamable_http_client
    from mcp.server.mcpserver import Context as _McpContext
    from mcp.server.mcpserver import MCPServer as MCPServer
    from mcp.server.mcpserver.exceptions import ResourceNotFoundError as ResourceNotFoundError
    from mcp.server.mcpserver.exceptions import ToolError as _McpToolError
    from mcp.shared._httpx_utils import MCP_DEFAULT_SSE_READ_TIMEOUT as MCP_DEFAULT_SSE_READ_TIMEOUT
    from mcp.shared._httpx_utils import MCP_DEFAULT_TIMEOUT as MCP_DEFAULT_TIMEOUT
    from mcp.shared.exceptions import MCPError as MCPError
    from mcp_types import CONNECTION_CLOSED as CONNECTION_CLOSED
    from mcp_types import CallToolResult as CallToolResult
    from mcp_types import EmbeddedResource as EmbeddedResource
    from mcp_types import Resource as _McpResource
    from mcp_types import ResourceLink as ResourceLink
    from mcp_types import TextContent as TextContent
    from mcp_types import TextResourceContents as TextResourceContents
    from procrastinate.schema import SchemaManager as SchemaManager
    from psycopg.abc import Buffer as Buffer
    from psycopg.conninfo import conninfo_to_dict as conninfo_to_dict
    from psycopg.rows import RowMaker as RowMaker
    from psycopg.types.string import StrDumperUnknown as StrDumperUnknown
    from psycopg_pool import ConnectionPool as ConnectionPool
    from pypdf import PdfReader as PdfReader
    from pypdf.errors import LimitReachedError as LimitReachedError
    from pypdf.errors import PyPdfError as PyPdfError
    from redis.asyncio import Redis as Redis
    from redis.exceptions import RedisError as RedisError
    from redis.exceptions import ResponseError as ResponseError

    # Two classes named Document: python-docx's factory keeps its name, the class it makes gets
    # another (an assignment: an import under a new name is not exported to the type checker).
    DocxDocument = _DocxDocument
    McpClient = _McpClient  # the SDK's `Client`, by a name that says whose
    # The MCP SDK's HTTP library (httpx 2), by names apart from the httpx the web tools use.
    Httpx2AsyncBaseTransport = _Httpx2AsyncBaseTransport
    Httpx2AsyncClient = _Httpx2AsyncClient
    Httpx2AsyncHTTPTransport = _Httpx2AsyncHTTPTransport
    Httpx2Request = _Httpx2Request
    Httpx2Response = _Httpx2Response
    Httpx2Timeout = _Httpx2Timeout
    McpContext = _McpContext  # the SDK server's per-request `Context`
    McpResource = _McpResource  # a resource as `resources/list` lists it
    McpToolError = _McpToolError  # what a tool raises for an error result the model reads

log = logging.getLogger(__name__)

# Where each name above comes from: "module" for the module itself, "module:attribute" for one of
# its names. tests/unit/test_heavy.py checks this table against the declarations above.
WHERE: dict[str, str] = {
    "litellm": "litellm",
    "CustomLLM": "litellm.llms.custom_llm:CustomLLM",
    "ChatCompletionToolCallChunk": "litellm.types.llms.openai:ChatCompletionToolCallChunk",
    "ChatCompletionUsageBlock": "litellm.types.llms.openai:ChatCompletionUsageBlock",
    "GenericStreamingChunk": "litellm.types.utils:GenericStreamingChunk",
    "custom_llm_setup": "litellm.utils:custom_llm_setup",
    "tiktoken": "tiktoken",
    "BeautifulSoup": "bs4:BeautifulSoup",
    "Comment": "bs4.element:Comment",
    "NavigableString": "bs4.element:NavigableString",
    "PageElement": "bs4.element:PageElement",
    "PreformattedString": "bs4.element:PreformattedString",
    "Tag": "bs4.element:Tag",
    "PdfReader": "pypdf:PdfReader",
    "LimitReachedError": "pypdf.errors:LimitReachedError",
    "PyPdfError": "pypdf.errors:PyPdfError",
    "Draft202012Validator": "jsonschema:Draft202012Validator",
    "SchemaError": "jsonschema.exceptions:SchemaError",
    "MarkdownIt": "markdown_it:MarkdownIt",
    "StateCore": "markdown_it.rules_core:StateCore",
    "Token": "markdown_it.token:Token",
    "FPDF": "fpdf:FPDF",
    "FontFace": "fpdf.fonts:FontFace",
    "HTML2FPDF": "fpdf.html:HTML2FPDF",
    "TextLine": "fpdf.line_break:TextLine",
    "Document": "docx:Document",
    "DocxDocument": "docx.document:Document",
    "RELATIONSHIP_TYPE": "docx.opc.constants:RELATIONSHIP_TYPE",
    "OxmlElement": "docx.oxml:OxmlElement",
    "qn": "docx.oxml.ns:qn",
    "Pt": "docx.shared:Pt",
    "Paragraph": "docx.text.paragraph:Paragraph",
    "psycopg": "psycopg",
    "Buffer": "psycopg.abc:Buffer",
    "conninfo_to_dict": "psycopg.conninfo:conninfo_to_dict",
    "RowMaker": "psycopg.rows:RowMaker",
    "StrDumperUnknown": "psycopg.types.string:StrDumperUnknown",
    "ConnectionPool": "psycopg_pool:ConnectionPool",
    "procrastinate": "procrastinate",
    "SchemaManager": "procrastinate.schema:SchemaManager",
    "redis": "redis",
    "Redis": "redis.asyncio:Redis",
    "RedisError": "redis.exceptions:RedisError",
    "ResponseError": "redis.exceptions:ResponseError",
    "DDGS": "ddgs:DDGS",
    "DDGSException": "ddgs.exceptions:DDGSException",
    "RatelimitException": "ddgs.exceptions:RatelimitException",
    "TimeoutException": "ddgs.exceptions:TimeoutException",
    "McpClient": "mcp.client.client:Client",
    "StdioServerParameters": "mcp.client.stdio:StdioServerParameters",
    "MCPServer": "mcp.server.mcpserver:MCPServer",
    "McpContext": "mcp.server.mcpserver:Context",
    "ResourceNotFoundError": "mcp.server.mcpserver.exceptions:ResourceNotFoundError",
    "McpToolError": "mcp.server.mcpserver.exceptions:ToolError",
    "stdio_client": "mcp.client.stdio:stdio_client",
    "streamable_http_client": "mcp.client.streamable_http:streamable_http_client",
    "MCP_DEFAULT_TIMEOUT": "mcp.shared._httpx_utils:MCP_DEFAULT_TIMEOUT",
    "MCP_DEFAULT_SSE_READ_TIMEOUT": "mcp.shared._httpx_utils:MCP_DEFAULT_SSE_READ_TIMEOUT",
    "Httpx2AsyncBaseTransport": "httpx2:AsyncBaseTransport",
    "Httpx2AsyncClient": "httpx2:AsyncClient",
    "Httpx2AsyncHTTPTransport": "httpx2:AsyncHTTPTransport",
    "Httpx2Request": "httpx2:Request",
    "Httpx2Response": "httpx2:Response",
    "Httpx2Timeout": "httpx2:Timeout",
    "MCPError": "mcp.shared.exceptions:MCPError",
    "CONNECTION_CLOSED": "mcp_types:CONNECTION_CLOSED",
    "CallToolResult": "mcp_types:CallToolResult",
    "EmbeddedResource": "mcp_types:EmbeddedResource",
    "McpResource": "mcp_types:Resource",
    "ResourceLink": "mcp_types:ResourceLink",
    "TextContent": "mcp_types:TextContent",
    "TextResourceContents": "mcp_types:TextResourceContents",
}

# The libraries, by the name `preload`, `ready` and `on_load` take: each one's top-level package.
LIBRARIES = frozenset(where.split(":")[0].split(".")[0] for where in WHERE.values())


def _bundled_tiktoken_files() -> str | None:
    spec = PathFinder.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = os.path.join(next(iter(spec.submodule_search_locations)), "litellm_core_utils", "tokenizers")
    return path if os.path.isdir(path) else None


def _use_local_files() -> None:
    """litellm's bundled cost map and tiktoken encodings (cl100k, o200k): the machine may be
    offline, and neither library may download them."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    tiktoken_dir = _bundled_tiktoken_files()
    if tiktoken_dir:
        os.environ.setdefault("TIKTOKEN_CACHE_DIR", tiktoken_dir)


_BEFORE_IMPORT: dict[str, Callable[[], None]] = {"litellm": _use_local_files, "tiktoken": _use_local_files}

_state = threading.Lock()  # guards the tables below; never held while anything imports
_import_locks: dict[str, threading.RLock] = {}  # one per library, held while it imports and its hooks run
_imported: set[str] = set()  # imported; its `on_load` steps may still be running
_loaded: set[str] = set()  # imported, and its `on_load` steps done
_hooks: dict[str, list[Callable[[], None]]] = {}


def _library(name: str) -> str:
    if name not in LIBRARIES:
        raise ValueError(f"{name!r} is not one of heavy's libraries: {sorted(LIBRARIES)}")
    return name


def load(*libraries: str) -> None:
    """Import `libraries` on this thread, each once per process and with its `on_load` steps; a
    library another thread is loading is waited for."""
    for library in map(_library, libraries):
        with _state:
            if library in _loaded:
                continue
            lock = _import_locks.setdefault(library, threading.RLock())
        with lock:
            with _state:
                if library in _imported:  # done, or this very thread is running its steps
                    continue
            prepare = _BEFORE_IMPORT.get(library)
            if prepare is not None:
                prepare()
            import_module(library)
            with _state:
                _imported.add(library)
            while True:
                with _state:
                    hooks = _hooks.pop(library, [])
                    if not hooks:
                        _loaded.add(library)
                        break
                for hook in hooks:
                    hook()


def on_load(library: str, hook: Callable[[], None]) -> None:
    """Run `hook` once `library` has loaded: at once if it has, else on the thread that loads it,
    before `load` returns there."""
    with _state:
        if _library(library) not in _loaded:
            _hooks.setdefault(library, []).append(hook)
            return
    hook()


if not TYPE_CHECKING:  # the type checker knows only the declared names

    def __getattr__(name: str) -> Any:
        """A declared name, imported on its first use and kept as a plain attribute after that."""
        where = WHERE.get(name)
        if where is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        module_name, _, attribute = where.partition(":")
        load(module_name.split(".")[0])
        module = import_module(module_name)
        value = getattr(module, attribute) if attribute else module
        globals()[name] = value
        return value


class _Job:
    __slots__ = ("libraries", "then", "done", "waiters")

    def __init__(self, libraries: tuple[str, ...], then: Callable[[], object] | None) -> None:
        self.libraries = libraries
        self.then = then
        self.done = False
        self.waiters: list[Callable[[], None]] = []  # called once it is done


_pending: list[_Job] = []  # queued or running, in order
_queued: list[_Job] = []  # not started yet, in order
_job_queued = threading.Condition(_state)
_worker: threading.Thread | None = None


def preload(*libraries: str, then: Callable[[], object] | None = None) -> None:
    """Import `libraries`, then call `then`, on the preload thread, after what was asked before;
    returns at once. Until that is done, `ready` for any of `libraries` waits for it.

    A preload is an optimisation: a failure is logged, and the first real use meets it again.
    """
    global _worker
    job = _Job(tuple(map(_library, libraries)), then)
    with _state:
        if then is None and all(library in _loaded for library in job.libraries):
            return
        unprepared = [library for library in job.libraries if library not in _imported]
    # The environment is set here, on the caller's thread: from the preload thread it would change
    # `os.environ` while another thread may be iterating it (a subprocess, a test's teardown).
    for prepare in dict.fromkeys(_BEFORE_IMPORT[library] for library in unprepared if library in _BEFORE_IMPORT):
        prepare()
    with _state:
        _pending.append(job)
        _queued.append(job)
        _job_queued.notify()
        if _worker is None:
            _worker = threading.Thread(target=_work, name="sleuth-preload", daemon=True)
            _worker.start()


def _work() -> None:
    while True:
        with _job_queued:
            _job_queued.wait_for(lambda: _queued)
            job = _queued.pop(0)
        try:
            load(*job.libraries)
            if job.then is not None:
                job.then()
        except Exception as exc:
            log.warning(
                "preloading %s failed: %s: %s", ", ".join(job.libraries) or "a warm-up", type(exc).__name__, exc
            )
        finally:  # whatever happened, nobody waits for this job any longer
            with _state:
                job.done = True
                _pending.remove(job)
                waiters, job.waiters = job.waiters, []
            for wake in waiters:
                wake()


def busy() -> bool:
    """Whether the preload thread has work queued or under way: a clock that advances only when
    nothing else can move a run on (the test kit's virtual clock) must wait for it too."""
    with _state:
        return bool(_pending)


async def ready(*libraries: str) -> None:
    """Wait, without blocking the event loop, until `libraries` have loaded and every preload asked
    for them so far has finished (its warm-up included); a library nobody preloaded is loaded on the
    preload thread now."""
    for library in map(_library, libraries):
        asked = False
        while True:
            with _state:
                last = next((job for job in reversed(_pending) if library in job.libraries), None)
                loaded = library in _loaded
            if last is not None:
                await _finished(last)  # and then look again: another preload may have been asked for meanwhile
            elif loaded or asked:  # asked, and failed: the first real use meets the error
                break
            else:
                preload(library)
                asked = True


async def _finished(job: _Job) -> None:
    # Not at the top: `sleuth --help` imports this module, and asyncio (which loads ssl, sockets and
    # subprocesses) would be a third of its start-up. A coroutine runs on a loop: it is loaded by now.
    import asyncio

    loop = asyncio.get_running_loop()
    done: asyncio.Future[None] = loop.create_future()

    def settle() -> None:
        if not done.done():
            done.set_result(None)

    def wake() -> None:
        try:
            loop.call_soon_threadsafe(settle)
        except RuntimeError:
            pass  # the loop has closed: nobody is waiting any more

    with _state:
        if job.done:
            return
        job.waiters.append(wake)
    await done
