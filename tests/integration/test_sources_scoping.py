"""Sources chosen per request: only those are ever searched, in the engine and the CLI; unknown names are refused."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from sleuth.cli.main import main
from sleuth.config import Settings
from sleuth.stream.documents import document_id
from sleuth.stream.results import ResearchRequest
from sleuth.tools.local import library
from sleuth.tools.local.access import Viewer
from sleuth.tools.local.corpus import db_path_for
from sleuth.tools.local.extract import extract
from sleuth_testkit.engine import run_engine, scripted_settings
from sleuth_testkit.model import ScriptedLLM
from sleuth_testkit.scenarios import ResearchModel

# Both collections answer the scripted agents' searches (descriptor, __getattr__, property, __slots__).
SHARED = "The descriptor protocol: __get__ and __set__, __getattr__ fallback, __getattribute__, property, __slots__."


LIMITS = library.UploadLimits(max_file_bytes=1_000_000, max_files=5)


def in_process(path: Path, name: str, text_file: Path) -> str:
    extracted = extract(Path(name), path.read_bytes())
    text_file.write_text(extracted.text, encoding="utf-8")
    return extracted.title


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
    assert rows["alpha"] == ["local", "3", "yes", "everyone"] and rows["beta"] == ["local", "3", "yes", "everyone"]
    assert rows["python-reference"][0] == "local"


def test_cli_shares_and_unshares_a_users_upload(tmp_path: Path) -> None:
    data = b"# Okapi\n\nThe okapi is shy.\n"
    upload = library.Upload("okapi.md", len(data), io.BytesIO(data))
    db = db_path_for(Settings().data_dir)
    library.add_uploads(db, "okapis", [upload], LIMITS, in_process, viewer=Viewer("u_carol"))

    def access() -> str:
        listed = CliRunner().invoke(main, ["sources"]).stdout.splitlines()
        return next(line.split()[-1] for line in listed if line.startswith("okapis "))

    assert access() == "private"
    shared = CliRunner().invoke(main, ["sources", "share", "okapis"])
    assert (shared.exit_code, shared.stdout) == (0, "okapis: shared with every user, read-only\n")
    assert access() == "shared"
    assert library.document_by_url(db, "corpus://okapis/okapi.md", viewer=Viewer("u_dave")) is not None
    unshared = CliRunner().invoke(main, ["sources", "unshare", "okapis"])
    assert (unshared.exit_code, unshared.stdout) == (0, "okapis: private to its owner\n")
    assert access() == "private"
    for name, message in [
        ("python-reference", "Error: collection 'python-reference' has no owner: every user already sees it"),
        ("nope", "Error: no collection named 'nope'"),
    ]:
        refused = CliRunner().invoke(main, ["sources", "share", name])
        assert (refused.exit_code, refused.output.strip()) == (1, message)


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
