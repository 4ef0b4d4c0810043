"""An MCP server as a source (the test kit's fixture server, over stdio): the source picker shows it
with its tools, the default offline model's agents call it, and its result opens in the viewer."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from support.mcp import stdio_entry, write_servers

from .servers import Server, start_server, stop_server
from .ui import ask, current_run, report, sources_panel


@pytest.fixture(scope="module")
def mcp_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("mcp-server")
    servers = write_servers(root / "mcp.json", {"fixture": stdio_entry()})
    server = start_server("mcp", root, {"SLEUTH_MCP_CONFIG": str(servers)})
    yield server
    stop_server(server)


@pytest.mark.e2e
def test_an_mcp_result_is_a_source_that_opens_in_the_viewer(
    page: Page, mcp_server: Server, shot: Callable[..., Path]
) -> None:
    page.goto(mcp_server.base_url)
    picker = page.locator("details.source-picker")
    picker.locator("summary").click()
    fixture = page.get_by_role("group", name="Sources to search").locator("label", has_text="fixture")
    expect(fixture).to_contain_text("MCP: 7 tools")  # the engine has started it; the picker asks again on opening
    expect(fixture.get_by_role("checkbox")).to_be_checked()
    shot("source-picker")
    picker.locator("summary").click()

    ask(page, "How do Python descriptors and __getattr__ interact?", clarify=False, mode="Light")
    run = current_run(page)
    expect(report(run).get_by_text("Verified report")).to_be_visible(timeout=120_000)
    cited = sources_panel(run).locator("li", has_text="fixture · lookup_notes").first
    expect(cited).to_be_visible()
    shot("sources-panel")

    cited.get_by_role("button", name=re.compile("^Open")).click()
    viewer = page.get_by_role("dialog", name=re.compile("fixture · lookup_notes"))
    expect(viewer).to_be_visible()
    expect(viewer).to_contain_text("MCP server fixture")
    expect(viewer).to_contain_text("Fixture notes on")
    expect(viewer).to_contain_text("data descriptors define __get__ and __set__")
    expect(viewer.get_by_role("alert")).to_have_count(0)
    expect(viewer.locator("mark").first).to_contain_text("data descriptors define __get__")  # the cited passage
    shot("document-viewer")
    viewer.get_by_role("button", name="Close the document").click()
    expect(viewer).to_be_hidden()
