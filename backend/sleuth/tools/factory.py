"""Builds the toolbox a run uses from the settings' `search` list."""

from __future__ import annotations

from sleuth.config import Settings
from sleuth.tools.base import PageReader, SearchProvider
from sleuth.tools.local.factory import build_local_tools
from sleuth.tools.toolbox import Toolbox
from sleuth.tools.web.factory import build_web_tools


def build_toolbox(settings: Settings) -> Toolbox:
    """Local corpus and/or web providers. Both readers are always there, so any cited document opens.

    Raises ValueError for an unknown provider name in `SLEUTH_SEARCH`.
    """
    web_providers, web_reader = build_web_tools(settings)
    local_search, local_reader = build_local_tools(settings)
    providers: list[SearchProvider] = [local_search] if "local" in settings.search_providers else []
    providers.extend(web_providers)
    if not providers:
        raise ValueError("SLEUTH_SEARCH names no search provider.")
    readers: list[PageReader] = [local_reader, web_reader]
    return Toolbox(providers=providers, readers=readers)
