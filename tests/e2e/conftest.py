"""Browser end-to-end fixtures: a real `sleuth serve` subprocess, Debian's Chromium, screenshots.

Servers (session-scoped, one subprocess each, free 127.0.0.1 port, temp SLEUTH_DATA_DIR; the
hostile-corpus one in test_xss.py is module-scoped):
* `offline_server`: the embedded defaults (offline extractive model, built-in corpus).
* `scripted_server`: the same server pointed at sleuth_testkit.model with a research
  model whose agents a test can hold (`held_agents`), so a run stays in flight for as long as
  the test watches three lanes run, reloads mid-run or presses Stop.

The UI must be built first (`cd frontend && npm ci && npm run build`); CI does that before
the tests. A missing or stale build fails the session with that instruction.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright

from sleuth_testkit.model import ScriptedLLM

from .scripted import BrowserResearchModel
from .servers import Server, start_server, stop_server

SCREENS_COPY = Path("/tmp/sleuth-screens")
CHROMIUM = os.environ.get("SLEUTH_E2E_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]

# Generous ceilings: expect() returns as soon as the condition holds, so a ceiling costs nothing
# when the UI is right; a whole offline research run on a loaded two-core machine can take a minute.
expect.set_options(timeout=90_000)


# --------------------------------------------------------------------------- browser
#
# Our own fixtures rather than pytest-playwright's session-scoped ones: the sync Playwright API
# keeps an event loop running in the main thread while it is started, which would break every
# later (non-browser) test that calls asyncio.run(). Package scope stops it when the browser
# tests are done.


@pytest.fixture(scope="package")
def e2e_browser() -> Iterator[Browser]:
    if not Path(CHROMIUM).is_file():
        pytest.fail(
            f"Chromium not found at {CHROMIUM} (apt-get install chromium, or set SLEUTH_E2E_CHROMIUM)", pytrace=False
        )
    playwright = sync_playwright().start()
    try:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()
    finally:
        playwright.stop()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"e2e_rep_{report.when}", report)


@pytest.fixture
def page(e2e_browser: Browser, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Page]:
    """A fresh context per test (no shared storage), wide enough for three lanes and the sources panel."""
    context = e2e_browser.new_context(viewport={"width": 1440, "height": 1000})
    page = context.new_page()
    try:
        yield page
    finally:
        failed = getattr(request.node, "e2e_rep_call", None)
        if failed is not None and failed.failed:
            with contextlib.suppress(Exception):
                path = tmp_path / "FAILED.png"
                page.screenshot(path=str(path))
                copy = SCREENS_COPY / _test_dir(request) / path.name
                copy.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, copy)
        context.close()


def _test_dir(request: pytest.FixtureRequest) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", request.node.name)


@pytest.fixture
def dialogs(page: Page) -> list[str]:
    """Every browser dialog (alert/confirm/prompt) the page opens, recorded and dismissed."""
    seen: list[str] = []

    def on_dialog(dialog: Any) -> None:
        seen.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    page.on("dialog", on_dialog)
    return seen


@pytest.fixture(scope="session")
def offline_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The embedded defaults: offline extractive model, built-in corpus, SQLite in a temp dir, and
    the engine in a process of its own, as deployed."""
    server = start_server("offline", tmp_path_factory.mktemp("offline-server"), {"SLEUTH_ENGINE_PROCESSES": "1"})
    yield server
    stop_server(server)


@pytest.fixture(scope="session")
def scripted_llm() -> Iterator[Any]:
    """The scripted OpenAI-compatible model server, in this process."""

    with ScriptedLLM(BrowserResearchModel()) as llm:
        yield llm


@pytest.fixture
def held_agents(scripted_llm: Any) -> Iterator[Callable[[], None]]:
    """The scripted server's agents wait until the returned function is called (or the test ends)."""
    go = scripted_llm.respond.agents_go
    go.clear()
    try:
        yield go.set
    finally:
        go.set()


@pytest.fixture(scope="session")
def scripted_server(tmp_path_factory: pytest.TempPathFactory, scripted_llm: Any) -> Iterator[Server]:
    """A server whose model is the scripted one; with `held_agents` its runs stay in flight."""
    server = start_server(
        "scripted",
        tmp_path_factory.mktemp("scripted-server"),
        {
            "SLEUTH_MODEL": "openai/scripted",
            "SLEUTH_API_BASE": scripted_llm.base_url,
            "SLEUTH_API_KEY": "sk-test",
            "SLEUTH_LLM_RETRIES": "0",
        },
    )
    yield server
    stop_server(server)


# --------------------------------------------------------------------------- screenshots


def pytest_configure(config: pytest.Config) -> None:
    """A fresh copy of the screenshots per test session. Under pytest-xdist only the controller
    clears it (`workerinput` marks a worker), before any worker starts: a worker clearing it could
    remove what another worker is copying there."""
    if not hasattr(config, "workerinput"):
        shutil.rmtree(SCREENS_COPY, ignore_errors=True)


@pytest.fixture
def shot(page: Page, tmp_path: Path, request: pytest.FixtureRequest) -> Callable[..., Path]:
    """`shot("stage")` saves a full-page PNG under tmp_path/screens and copies it to /tmp/sleuth-screens/<test>/."""
    counter = [0]
    folder = tmp_path / "screens"
    folder.mkdir()
    test_name = _test_dir(request)

    def take(stage: str, *, whole_thread: bool = False) -> Path:
        counter[0] += 1
        path = folder / f"{counter[0]:02d}-{stage}.png"
        viewport = page.viewport_size
        if whole_thread and viewport:
            # The thread scrolls inside the app: grow the window to show all of it at once.
            height = page.evaluate(
                "() => { const t = document.querySelector('.thread');"
                " return t ? t.scrollHeight - t.clientHeight + innerHeight : innerHeight; }"
            )
            page.set_viewport_size({"width": viewport["width"], "height": min(int(height), 8000)})
        try:
            page.screenshot(path=str(path), full_page=True)
        finally:
            if whole_thread and viewport:
                page.set_viewport_size(viewport)
        copy = SCREENS_COPY / test_name / path.name
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, copy)
        return path

    return take
