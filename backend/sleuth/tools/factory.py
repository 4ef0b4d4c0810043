"""Builds the toolbox a run uses from the settings' `search` list, or the sources a request chose."""

from __future__ import annotations

from collections.abc import Sequence

from sleuth.config import Settings
from sleuth.tools.base import PageReader, SearchProvider
from sleuth.tools.local.access import Viewer
from sleuth.tools.local.providers import build_local_tools
from sleuth.tools.mcp.hub import loop_hub
from sleuth.tools.sources import default_names, select
from sleuth.tools.toolbox import Toolbox
from sleuth.tools.web.factory import build_web_tools


def build_toolbox(settings: Settings, sources: Sequence[str] | None, *, owner_id: str | None) -> Toolbox:
    """Local corpus and/or web providers. Both readers are always there, so any cited document opens.

    `sources` (names from `sleuth.tools.sources.list_sources`, checked by the caller) restricts the
    search to exactly those; None searches what the settings configure. `owner_id`: whose run this
    is; its local search and reading see only the collections that user sees (their own uploads and
    the shared ones). None: the built-in user's, which sees every collection.
    The MCP servers are this event loop's (`tools/mcp/hub.py`), started on first use and shared.
    Raises ValueError for an unknown provider name in `SLEUTH_SEARCH`.
    """
    chosen = select(settings, sources)
    web_settings = settings.model_copy(update={"search": ",".join(chosen.web)})
    web_providers, web_reader = build_web_tools(web_settings if sources is not None else settings)
    viewer = Viewer(owner_id)
    local_search, local_reader = build_local_tools(settings, chosen.collections, viewer=viewer)
    providers: list[SearchProvider] = [local_search] if chosen.local else []
    providers.extend(web_providers)
    if not providers and not chosen.mcp:
        raise ValueError("SLEUTH_SEARCH names no search provider.")
    readers: list[PageReader] = [local_reader, web_reader]
    names = list(sources) if sources is not None else default_names(settings, viewer=viewer)
    return Toolbox(providers=providers, readers=readers, sources=names, mcp=loop_hub(settings), mcp_servers=chosen.mcp)
