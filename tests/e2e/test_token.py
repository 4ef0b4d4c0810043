"""A server started with SLEUTH_API_TOKEN: the UI asks for the token once, then works with it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from .servers import Server, start_server, stop_server
from .ui import ask, report

TOKEN = "e2e-token-123"


@pytest.fixture(scope="module")
def token_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    server = start_server("token", tmp_path_factory.mktemp("token-server"), {"SLEUTH_API_TOKEN": TOKEN})
    yield server
    stop_server(server)


@pytest.mark.e2e
def test_the_ui_asks_for_the_api_token_then_researches_with_it(
    page: Page, token_server: Server, shot: Callable[..., Path]
) -> None:
    page.goto(token_server.base_url)
    dialog = page.get_by_role("dialog", name="This Sleuth server needs an API token")
    expect(dialog).to_be_visible()
    shot("token-dialog")

    dialog.get_by_label("API token").fill("wrong")
    dialog.get_by_role("button", name="Save and continue").click()
    expect(page.get_by_role("dialog", name="That API token was not accepted")).to_be_visible()

    retry = page.get_by_role("dialog", name="That API token was not accepted")
    retry.get_by_label("API token").fill(TOKEN)
    retry.get_by_role("button", name="Save and continue").click()
    expect(page.get_by_role("dialog")).to_have_count(0)

    ask(page, "How do Python descriptors and __getattr__ interact during attribute lookup?", clarify=False)
    expect(report(page)).to_be_visible(timeout=60_000)
    assert page.evaluate("localStorage.getItem('sleuth.apiToken')") == TOKEN
    shot("report-with-token")
