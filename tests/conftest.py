"""Shared fixtures: isolated settings and data dir, offline-safe litellm, the scripted LLM."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from xdist.scheduler import LoadScopeScheduling

from sleuth.core.redaction import redact_url
from sleuth.stream.results import ResearchRequest
from sleuth_testkit.engine import run_engine, scripted_settings
from sleuth_testkit.model import ScriptedLLM
from sleuth_testkit.scenarios import ResearchModel
from support.databases import TEST_DATABASE_URL, fresh_schema

# Modules whose tests share nothing costly (each starts its own processes) and take long: their tests
# go to whichever worker is free.
SPREAD_MODULES = frozenset(
    {"tests/scaleout/test_scaleout.py", "tests/api/test_restart.py", "tests/unit/test_startup.py"}
)
# Workers take modules in collection order, so the longest go first: the browser tests (one worker
# runs them all) and the tests that start processes, while the many quick modules fill the other
# worker's time and the end of the pass. By path prefix, longest first; the rest keep their order.
LONGEST_FIRST = (
    "tests/e2e/",
    "tests/scaleout/test_scaleout.py",
    "tests/api/test_restart.py",
    "tests/scaleout/",
    "tests/api/test_mcp_serve.py",
    "tests/unit/test_startup.py",
    "tests/api/test_serve_",
    "tests/api/test_engine_",
    "tests/integration/test_mcp_cli.py",
    "tests/api/test_isolation.py",
)


@contextmanager
def isolated(monkeypatch: pytest.MonkeyPatch, data_dir: Path) -> Iterator[None]:
    """No SLEUTH_* setting of the developer's, a data dir of its own, and with SLEUTH_TEST_DATABASE_URL
    a fresh PostgreSQL schema (settings and `sleuth` subprocesses alike). SLEUTH_ENGINE_PROCESSES is
    the test run's own choice (`SLEUTH_ENGINE_PROCESSES=2 scripts/test tests/api`), 0 unless it says
    otherwise: a server's engine runs on a thread of its process, so a test server starts no engine
    process (each one imports and warms litellm); the tests of process isolation (the pool, a killed
    engine or server) ask for processes themselves."""
    engines = os.environ.get("SLEUTH_ENGINE_PROCESSES", "0")
    for key in list(os.environ):
        if key.startswith("SLEUTH_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("SLEUTH_ENGINE_PROCESSES", engines)
    monkeypatch.setenv("SLEUTH_DATA_DIR", str(data_dir))
    if TEST_DATABASE_URL is None:
        yield
        return
    with fresh_schema(TEST_DATABASE_URL) as url:
        monkeypatch.setenv("SLEUTH_DATABASE_URL", url)
        yield


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """pytest-xdist (`scripts/test` runs `-n 2`): a test module runs on one worker, so its
    module-scoped fixtures (a shared server) start once, and the browser tests all run on one
    worker, so one Chromium and one set of `sleuth serve` subprocesses serve them. An explicit
    `--dist` other than the default `load` is left to xdist. (`--dist loadgroup` cannot do this:
    xdist 3.8 renames test ids through an attribute pytest 9 no longer reads.)"""
    if config.getoption("dist") != "load":
        return None
    config.option.loadscopereorder = False  # in collection order (`LONGEST_FIRST`), not by test count

    class ModulesAndBrowser(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            if path in SPREAD_MODULES:
                return nodeid
            return "tests/e2e" if path.startswith("tests/e2e/") else path

    return ModulesAndBrowser(config, log)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> int:
        path = item.nodeid.split("::", 1)[0]
        return next((i for i, prefix in enumerate(LONGEST_FIRST) if path.startswith(prefix)), len(LONGEST_FIRST))

    items.sort(key=rank)


def pytest_report_header(config: pytest.Config) -> str:
    return f"sleuth store: {redact_url(TEST_DATABASE_URL) if TEST_DATABASE_URL else 'SQLite under each test data dir'}"


@pytest.fixture(scope="module", autouse=True)
def _isolated_module_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """What a module's tests share (a server, a cluster) starts isolated too: autouse fixtures come
    first in their scope, so a module-scoped server starts in this environment."""
    monkeypatch = pytest.MonkeyPatch()
    try:
        with isolated(monkeypatch, tmp_path_factory.mktemp("module-data")):
            yield
    finally:
        monkeypatch.undo()


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No test reads the developer's .env or ~/.sleuth, nor another test's store."""
    monkeypatch.chdir(tmp_path)
    with isolated(monkeypatch, tmp_path / "data"):
        yield


@pytest.fixture(scope="session")
def warm_litellm(tmp_path_factory: pytest.TempPathFactory) -> None:
    """litellm's first calls in a process load code for seconds: warm it up once, so that a test on a
    1000x scaled clock does not see those seconds as a quarter of an hour gone."""

    async def once() -> None:
        with ScriptedLLM(ResearchModel(tasks_per_cycle=[])) as llm:
            settings = scripted_settings(llm, data_dir=tmp_path_factory.mktemp("warm"))
            await run_engine(settings, ResearchRequest(question="How do descriptors work?"))

    asyncio.run(once())
