"""Preflight: what a run checks before its first packet, and the one message it refuses with."""

from __future__ import annotations

from pathlib import Path

import pytest

from sleuth.config import Settings
from sleuth.research.preflight import PreflightError, preflight, run_checks
from sleuth.tools.local.corpus import db_path_for
from sleuth.tools.local.folders import index_folder
from sleuth.tools.local.schema import connect
from sleuth.tools.local.store import CorpusStore


def failures(settings: Settings) -> list[str]:
    return [check.detail for check in run_checks(settings) if not check.ok]


def test_the_offline_defaults_pass_every_check() -> None:
    checks = run_checks(Settings())
    assert checks and all(check.ok for check in checks)
    assert {check.name for check in checks} >= {"search local", "corpus"}
    preflight(Settings())  # does not raise


def test_a_hosted_model_without_its_key_is_refused_and_a_key_satisfies_it() -> None:
    with pytest.raises(PreflightError, match="OPENAI_API_KEY"):
        preflight(Settings(model="openai/gpt-4o-mini"))
    with pytest.raises(PreflightError, match="ANTHROPIC_API_KEY"):
        preflight(Settings(researcher_model="anthropic/claude-sonnet-4-5"))
    preflight(Settings(model="openai/gpt-4o-mini", api_key="sk-x"))
    preflight(Settings(model="ollama_chat/llama3.1"))  # a local model with a default endpoint needs nothing


def test_an_unknown_model_is_refused() -> None:
    with pytest.raises(PreflightError, match="unknown model 'gpt-nonsense-9'"):
        preflight(Settings(model="gpt-nonsense-9"))


def test_search_providers_must_exist_and_be_configured() -> None:
    problems = failures(Settings(search="local,altavista,tavily,brave,searxng"))
    assert any("unknown search provider 'altavista'" in p for p in problems)
    assert any("SLEUTH_TAVILY_API_KEY" in p for p in problems)
    assert any("SLEUTH_BRAVE_API_KEY" in p for p in problems)
    assert any("SLEUTH_SEARXNG_URL" in p for p in problems)
    configured = Settings(search="tavily,searxng", tavily_api_key="tvly-x", searxng_url="http://search.example")
    assert failures(configured) == []
    assert failures(Settings(search=" , ")) == ["SLEUTH_SEARCH names no search provider"]


def test_the_corpus_must_be_a_folder_or_an_indexed_collection(tmp_path: Path) -> None:
    with pytest.raises(PreflightError, match="SLEUTH_CORPUS='/nonexistent'"):
        preflight(Settings(corpus="/nonexistent"))
    preflight(Settings(corpus=str(tmp_path)))
    data = tmp_path / "data"
    with pytest.raises(PreflightError):
        preflight(Settings(corpus="notes", data_dir=data))
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# A\n\nSome text about descriptors.", encoding="utf-8")
    conn = connect(db_path_for(data))
    try:
        index_folder(CorpusStore(conn), notes, name="notes", kind="user")
    finally:
        conn.close()
    preflight(Settings(corpus="notes", data_dir=data))

    # a web-only setup does not need a corpus at all
    assert failures(Settings(corpus="/nonexistent", search="tavily", tavily_api_key="k")) == []
