"""Choosing sources, uploading files, and opening a cited passage in the document viewer (offline model)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from .servers import Server, start_server, stop_server
from .ui import ask, citation_chips, current_run, report

NOTES = {
    "quokka-food.md": (
        "# Quokka feeding\n\nQuokkas feed mostly at night on grasses, leaves and stems of shrubs.\n\n"
        "During dry summers quokkas chew succulent plants to get water from their food.\n"
    ),
    "quokka-habitat.md": (
        "# Quokka habitat\n\nQuokkas live on Rottnest Island and in swampy forests of south-western Australia.\n\n"
        "Quokkas shelter in dense vegetation during the day and feed at night in open areas.\n"
    ),
}


@pytest.fixture(scope="module")
def sources_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    server = start_server("sources", tmp_path_factory.mktemp("sources-server"), {})
    yield server
    stop_server(server)


@pytest.mark.e2e
def test_upload_choose_sources_and_open_a_cited_passage(
    page: Page, sources_server: Server, shot: Callable[..., Path], tmp_path: Path
) -> None:
    files = []
    for name, text in NOTES.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
        files.append(str(tmp_path / name))
    (tmp_path / "photo.png").write_bytes(b"\x89PNG not really")
    files.append(str(tmp_path / "photo.png"))

    page.goto(sources_server.base_url)
    picker = page.locator("details.source-picker")
    picker.locator("summary").click()
    page.get_by_role("button", name="Add files…").click()
    dialog = page.get_by_role("dialog", name="Add files to a collection")
    expect(dialog).to_be_visible()
    dialog.get_by_label("Collection").fill("wildlife")
    dialog.locator("input[type=file]").set_input_files(files)
    dialog.get_by_role("button", name="Upload").click()
    items = dialog.locator(".upload-item")
    expect(items.filter(has_text="quokka-food.md")).to_contain_text("added")
    expect(items.filter(has_text="quokka-habitat.md")).to_contain_text("added")
    expect(items.filter(has_text="photo.png")).to_contain_text("file type not supported")
    shot("uploads")
    dialog.get_by_role("button", name="Close").click()
    expect(dialog).to_be_hidden()

    # Search only the new collection.
    picker.locator("summary").click()
    menu = page.get_by_role("group", name="Sources to search")
    expect(menu.get_by_text("wildlife")).to_be_visible()
    wildlife = menu.locator("label", has_text="wildlife").get_by_role("checkbox")
    wildlife.check()
    for label in menu.locator("label").all():
        if "wildlife" not in label.inner_text():
            label.get_by_role("checkbox").set_checked(False)
    # The last chosen source cannot be unchecked: a run searches something.
    wildlife.click()
    expect(wildlife).to_be_checked()
    expect(picker.locator("summary")).to_contain_text("wildlife")
    shot("source-picker")
    picker.locator("summary").click()

    ask(page, "Where do quokkas live and what do they eat at night?", clarify=False, mode="Light")
    run = current_run(page)
    expect(run.get_by_text("Searched: wildlife")).to_be_visible()
    expect(report(run).get_by_text("Verified report")).to_be_visible(timeout=120_000)
    chips = citation_chips(run)
    expect(chips.first).to_be_visible()

    chips.first.click()
    viewer = page.get_by_role("dialog", name=re.compile("Quokka"))
    expect(viewer).to_be_visible()
    mark = viewer.locator("mark").first
    expect(mark).to_be_visible()
    expect(mark).to_contain_text(re.compile("[Qq]uokkas"))
    expect(viewer).to_contain_text("Local collection wildlife")
    expect(viewer).to_contain_text(re.compile(r"\d+ cited passages? highlighted"))
    shot("document-viewer")
    viewer.get_by_role("button", name="Close the document").click()
    expect(viewer).to_be_hidden()

    # The choice is remembered for this session after a reload.
    page.reload()
    expect(page.locator("details.source-picker summary")).to_contain_text("wildlife")
