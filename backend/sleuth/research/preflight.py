"""Checks that can be made before a run starts, so a bad setup is refused with one clear message.

`run_checks` runs every checker in `CHECKS` (doctor shows them all); `preflight` refuses a run on
the first failure. A new check is a function `(settings, request) -> Iterable[Check]` added to
`CHECKS`; `request` is None when no particular run is being started (`sleuth doctor`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path

from sleuth.config import Role, Settings
from sleuth.llm.access import model_access_problem
from sleuth.stream.results import ResearchRequest
from sleuth.tools import sources
from sleuth.tools.local.access import BUILT_IN, Viewer
from sleuth.tools.local.corpus import db_path_for
from sleuth.tools.local.retrieval import has_collection
from sleuth.tools.local.schema import connect
from sleuth.tools.web.brave import BraveProvider
from sleuth.tools.web.factory import NOT_WEB, PROVIDERS, provider_names
from sleuth.tools.web.tavily import TavilyProvider

ROLES: tuple[Role, ...] = ("planner", "orchestrator", "researcher", "report")


@dataclass(frozen=True)
class Check:
    name: str  # what was checked, e.g. "model (orchestrator, researcher)"
    ok: bool
    detail: str  # what was found, or what is wrong and how to fix it


class PreflightError(Exception):
    """A run cannot start; the message says why in one line."""


Checker = Callable[[Settings, ResearchRequest | None], Iterable[Check]]


def check_models(settings: Settings, request: ResearchRequest | None) -> Iterable[Check]:
    """Every configured model is known to litellm and has the key its provider needs."""
    roles_of: dict[str, list[str]] = {}
    for role in ROLES:
        roles_of.setdefault(settings.model_for(role), []).append(role)
    api_key = settings.api_key.get_secret_value() if settings.api_key else None
    for model, roles in roles_of.items():
        problem = model_access_problem(model, api_key, settings.api_base)
        yield Check(f"model {model} ({', '.join(roles)})", problem is None, problem or "configured")


def _web_provider_problem(name: str, settings: Settings) -> str | None:
    if name not in PROVIDERS:
        known = ", ".join(sorted([*PROVIDERS, *NOT_WEB]))
        return f"unknown search provider {name!r} in SLEUTH_SEARCH (known: {known})"
    keyed = {"tavily": (settings.tavily_api_key, TavilyProvider), "brave": (settings.brave_api_key, BraveProvider)}
    if name in keyed:
        key, provider = keyed[name]
        return None if key else f"search provider {name} is not configured: set {provider.key_setting}"
    if name == "searxng":
        url = (settings.searxng_url or "").strip()
        if not url.lower().startswith(("http://", "https://")):
            return "search provider searxng is not configured: set SLEUTH_SEARXNG_URL to http(s)://your-instance"
    if name == "duckduckgo" and find_spec("ddgs") is None:
        return "search provider duckduckgo needs the ddgs package (pip install ddgs)"
    return None


def check_search(settings: Settings, request: ResearchRequest | None) -> Iterable[Check]:
    """Every provider in SLEUTH_SEARCH exists and has what it needs (a key, a URL, a package)."""
    names = list(dict.fromkeys(provider_names(settings)))
    if not names:
        yield Check("search", False, "SLEUTH_SEARCH names no search provider")
    for name in names:
        if name == "local":
            yield Check("search local", True, "the local corpus")
            continue
        problem = _web_provider_problem(name, settings)
        yield Check(f"search {name}", problem is None, problem or "configured")


def _collection_exists(data_dir: Path, name: str) -> bool:
    db = db_path_for(data_dir)
    if not db.is_file():  # not even created yet: nothing has been indexed
        return False
    conn = connect(db)
    try:
        return has_collection(conn, name, BUILT_IN)  # SLEUTH_CORPUS: the operator's, for every run
    except sqlite3.Error:
        return False
    finally:
        conn.close()


def check_corpus(settings: Settings, request: ResearchRequest | None) -> Iterable[Check]:
    """SLEUTH_CORPUS, when local search uses it, is a folder or an indexed collection."""
    if "local" not in provider_names(settings):
        return
    corpus = settings.corpus
    if corpus is None:
        yield Check("corpus", True, "the built-in Python language reference")
    elif Path(corpus).expanduser().is_dir():
        yield Check("corpus", True, f"folder {corpus}")
    elif _collection_exists(settings.data_dir, corpus):
        yield Check("corpus", True, f"collection {corpus}")
    else:
        yield Check(
            "corpus", False, f"SLEUTH_CORPUS={corpus!r} is neither a folder nor the name of an indexed collection"
        )


def check_sources(settings: Settings, request: ResearchRequest | None) -> Iterable[Check]:
    """The sources a request chose exist (`GET /api/sources`, `sleuth sources`)."""
    if request is None or request.sources is None:
        return
    try:
        names = sources.check_sources(settings, request.sources, viewer=Viewer(request.owner_id))
    except sources.UnknownSource as exc:
        yield Check("sources", False, str(exc))
    else:
        yield Check("sources", True, ", ".join(names))


# The checks that need no model client: the CLI makes them before `run_start`, the model check after;
# the server asks where runs execute for the model check (`runs/admission.py`) and makes these for each request.
LOCAL_CHECKS: list[Checker] = [check_search, check_corpus, check_sources]
CHECKS: list[Checker] = [check_models, *LOCAL_CHECKS]


def run_checks(
    settings: Settings, request: ResearchRequest | None = None, checks: list[Checker] = CHECKS
) -> list[Check]:
    return [check for checker in checks for check in checker(settings, request)]


def preflight(settings: Settings, request: ResearchRequest | None = None, checks: list[Checker] = CHECKS) -> None:
    """Raise PreflightError with the first problem that would make this run fail; before any packet."""
    for check in (check for checker in checks for check in checker(settings, request)):
        if not check.ok:
            raise PreflightError(check.detail)


def model_problem(settings: Settings) -> str | None:
    """The first configured model that cannot be called, and why; None when all can."""
    return next((check.detail for check in check_models(settings, None) if not check.ok), None)
