"""A run without chosen sources says which collections its question was routed to: in `run_start`
and in the CLI's header; a run with chosen sources is not routed."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from sleuth.cli.main import main
from sleuth.stream.results import ResearchRequest
from sleuth_testkit.engine import run_engine, scripted_settings
from sleuth_testkit.model import ScriptedLLM
from sleuth_testkit.scenarios import ResearchModel

FIXTURES = Path(__file__).parents[1] / "fixtures" / "routing"
SQLITE_QUESTION = "How do I set the SQLite page cache size with a PRAGMA?"


def index_fixtures(root: Path) -> None:
    for name in ("sqlitedocs", "pylib"):
        shutil.copytree(FIXTURES / name, root / name)
        result = CliRunner().invoke(main, ["index", str(root / name), "--name", name])
        assert result.exit_code == 0, result.output


@pytest.fixture
def llm() -> Iterator[ScriptedLLM]:
    with ScriptedLLM(ResearchModel()) as scripted:
        yield scripted


async def test_run_start_names_the_collections_the_question_is_routed_to(llm: ScriptedLLM, tmp_path: Path) -> None:
    index_fixtures(tmp_path)
    run = await run_engine(scripted_settings(llm), ResearchRequest(question=SQLITE_QUESTION))
    start = run.of("run_start")[0].obj
    assert start.sources == ["python-reference", "pylib", "sqlitedocs"]  # the scope: everything, routed
    routes = {r.name: r for r in start.routes}
    assert [name for name, r in routes.items() if r.searched] == ["sqlitedocs"]
    assert routes["sqlitedocs"].reason.startswith("fits: ") and "sqlite" in routes["sqlitedocs"].reason
    assert routes["pylib"].reason == "does not fit the question"

    chosen = await run_engine(scripted_settings(llm), ResearchRequest(question=SQLITE_QUESTION, sources=["pylib"]))
    assert chosen.of("run_start")[0].obj.sources == ["pylib"] and chosen.of("run_start")[0].obj.routes == []


def test_cli_header_says_what_is_searched(llm: ScriptedLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    index_fixtures(tmp_path)
    for key, value in scripted_settings(llm).model_dump(include={"model", "api_base"}).items():
        monkeypatch.setenv(f"SLEUTH_{key.upper()}", str(value))
    monkeypatch.setenv("SLEUTH_API_KEY", "sk-test")
    routed = CliRunner().invoke(main, ["research", SQLITE_QUESTION, "--no-clarify"])
    assert routed.exit_code == 0, routed.output
    header = routed.stderr.splitlines()[1]
    assert header.startswith("Searching: sqlitedocs (fits: ")
    assert header.endswith(" · not searched: python-reference, pylib (they do not fit the question)")

    chosen = CliRunner().invoke(main, ["research", SQLITE_QUESTION, "--no-clarify", "--source", "pylib"])
    assert chosen.exit_code == 0, chosen.output
    assert chosen.stderr.splitlines()[1] == "Searching: pylib"
