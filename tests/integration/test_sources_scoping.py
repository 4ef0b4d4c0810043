"""Sources chosen per request: only those are ever searched, in the engine and the CLI; unknown names are refused."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from sleuth.cli.main import main
from sleuth.stream.documents import document_id
from sleuth.stream.results import ResearchRequest
from sleuth_testkit.engine import run_engine, scripted_settings
from sleuth_testkit.model import ScriptedLLM
from sleuth_testkit.scenarios import ResearchModel

# Both collections answer the scripted agents' searches (descriptor, __getattr__, property, __slots__).
SHARED = "The descriptor protocol: __get__ and __set__, __getattr__ fallback, __getattribute__, property, __slots__."


def make_collections(root: Path) -> None:
    for name in ("alpha", "beta"):
        folder = root / name
        folder.mkdir(parents=True)
        for i in range(3):
            (folder / f"{name}{i}.md").write_text(f"# {name} note {i}\n\n{SHARED} Only in {name}.\n", encoding="utf-8")
        result = CliRunner().invoke(main, ["index", str(folder), "--name", name])
        assert result.exit_code == 0, result.output


@pytest.fixture
def llm() -> Iterator[ScriptedLLM]:
    with ScriptedLLM(ResearchModel()) as scripted:
        yield scripted


def searched_urls(packets: list[dict]) -> list[str]:  # type: ignore[type-arg]
    return [
        doc["url"]
        for packet in packets
        if packet["obj"]["type"] in ("search_documents", "open_url_documents")
        for doc in packet["obj"]["documents"]
    ]


async def test_engine_searches_only_the_chosen_collection(llm: ScriptedLLM, tmp_path: Path) -> None:
    make_collections(tmp_path)
    settings = scripted_settings(llm)
    run = await run_engine(settings, ResearchRequest(question="How do descriptors work?", sources=["beta"]))
    assert run.stop_reason == "completed"
    assert run.of("run_start")[0].obj.sources == ["beta"]
    urls = searched_urls([p.model_dump() for p in run.packets])
    assert urls and all(url.startswith("corpus://beta/") for url in urls), urls
    assert all(s.url.startswith("corpus://beta/") for s in run.result.sources)


async def test_engine_without_sources_searches_every_collection(llm: ScriptedLLM, tmp_path: Path) -> None:
    make_collections(tmp_path)
    run = await run_engine(scripted_settings(llm), ResearchRequest(question="How do descriptors work?"))
    assert run.of("run_start")[0].obj.sources == ["python-reference", "alpha", "beta"]
    hosts = {url.split("/")[2] for url in searched_urls([p.model_dump() for p in run.packets])}
    assert {"alpha", "beta"} <= hosts


async def test_sleuth_corpus_really_restricts(
    llm: ScriptedLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_collections(tmp_path)
    monkeypatch.setenv("SLEUTH_CORPUS", "alpha")
    run = await run_engine(scripted_settings(llm), ResearchRequest(question="How do descriptors work?"))
    assert run.of("run_start")[0].obj.sources == ["alpha"]
    urls = searched_urls([p.model_dump() for p in run.packets])
    assert urls and all(url.startswith("corpus://alpha/") for url in urls), urls


def test_cli_source_option_scopes_the_run(llm: ScriptedLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_collections(tmp_path)
    for key, value in scripted_settings(llm).model_dump(include={"model", "api_base"}).items():
        monkeypatch.setenv(f"SLEUTH_{key.upper()}", str(value))
    monkeypatch.setenv("SLEUTH_API_KEY", "sk-test")
    result = CliRunner().invoke(
        main, ["research", "How do descriptors work?", "--no-clarify", "--json", "--source", "alpha"]
    )
    assert result.exit_code == 0, result.output
    packets = [json.loads(line) for line in result.stdout.splitlines()]
    assert packets[0]["obj"]["sources"] == ["alpha"]
    urls = searched_urls(packets)
    assert urls and all(url.startswith("corpus://alpha/") for url in urls), urls


def test_cli_unknown_source_is_one_line(tmp_path: Path) -> None:
    make_collections(tmp_path)
    result = CliRunner().invoke(main, ["research", "How do descriptors work?", "--source", "gamma"])
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        "Error: unknown source 'gamma' (known sources: alpha, beta, python-reference)"
    ]


def test_cli_sources_lists_collections_with_counts(tmp_path: Path) -> None:
    make_collections(tmp_path)
    result = CliRunner().invoke(main, ["sources"])
    assert result.exit_code == 0
    rows = {line.split()[0]: line.split()[1:] for line in result.stdout.splitlines()[1:]}
    assert rows["alpha"] == ["local", "3", "yes"] and rows["beta"] == ["local", "3", "yes"]
    assert rows["python-reference"][0] == "local"


def test_cli_show_prints_a_document(tmp_path: Path) -> None:
    make_collections(tmp_path)
    shown = CliRunner().invoke(main, ["show", "corpus://beta/beta1.md"])
    assert shown.exit_code == 0
    assert shown.stdout.splitlines()[0] == "beta note 1"
    assert "Only in beta." in shown.stdout

    by_id = CliRunner().invoke(main, ["show", document_id("corpus://beta/beta1.md")])
    assert by_id.exit_code == 0 and by_id.stdout == shown.stdout
    missing = CliRunner().invoke(main, ["show", "d_000000000000"])
    assert missing.exit_code == 1 and "no document 'd_000000000000'" in missing.output
