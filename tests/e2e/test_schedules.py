"""Schedules in the browser: make one over a local folder corpus (offline model), run it now, edit
a file of the corpus, run it again, and read what changed in the history and in the second report."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from support.widgets import LIMIT, QUESTION, write_corpus

from .servers import Server, start_server, stop_server


@pytest.fixture(scope="module")
def corpus_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Path]]:
    """The offline model over a folder the test edits; every run checks the folder for changed files."""
    root = tmp_path_factory.mktemp("schedules-server")
    corpus = root / "corpus"
    write_corpus(corpus, 5)
    server = start_server(
        "schedules", root, {"SLEUTH_CORPUS": str(corpus), "SLEUTH_CORPUS_CHECK_S": "0", "SLEUTH_SCHEDULER": "false"}
    )
    yield server, corpus
    stop_server(server)


@pytest.mark.e2e
def test_a_schedule_made_in_the_ui_runs_twice_and_shows_what_changed(
    page: Page, corpus_server: tuple[Server, Path], shot: Callable[..., Path]
) -> None:
    server, corpus = corpus_server
    page.goto(server.base_url)
    page.get_by_role("link", name="Schedules").click()
    expect(page.get_by_role("heading", name="Schedules", level=1)).to_be_visible()

    page.get_by_role("button", name="+ New schedule").click()
    form = page.get_by_role("form", name="New schedule")
    form.get_by_label("Question").fill(QUESTION)
    form.get_by_role("textbox", name="Cron expression").fill("0 7 * *")  # four fields: the server refuses it
    form.get_by_label("Mode").select_option("light")
    form.get_by_role("button", name="Create schedule").click()
    cron_error = form.locator("#schedule-cron-error")
    expect(cron_error).to_contain_text("is not a cron expression")
    expect(form.get_by_role("textbox", name="Cron expression")).to_have_attribute("aria-invalid", "true")
    shot("form-refused")

    form.get_by_role("radio", name="Every…").check()
    form.get_by_role("textbox", name="Interval").fill("6h")
    expect(form.get_by_text("Every 6 hours")).to_be_visible()
    form.get_by_role("button", name="Create schedule").click()
    expect(form).to_be_hidden()

    card = page.locator(".schedule-card").filter(has_text=QUESTION)
    expect(card).to_contain_text("Every 6 hours")
    # The schedule's session, where its runs go, is in the history at once.
    expect(page.get_by_role("navigation", name="Research sessions")).to_contain_text(QUESTION[:30])
    expect(card.locator(".result")).to_have_text(re.compile("Not run yet"))
    card.get_by_role("button", name="Run now").click()
    expect(card.locator(".result")).to_have_text(re.compile("First run"))

    write_corpus(corpus, 7)
    card.get_by_role("button", name="Run now").click()
    expect(card.locator(".result")).to_have_text(re.compile("Changed"))
    shot("schedules-page")

    card.get_by_role("link", name="History").click()
    runs = page.get_by_role("list", name="Runs of this schedule, newest first").locator("li.firing")
    expect(runs).to_have_count(2)
    expect(runs.nth(0).locator(".result")).to_have_text(re.compile("Changed"))
    expect(runs.nth(0)).to_contain_text(re.compile(r"Claims: 1 changed.*Sources: 1 changed"))
    expect(runs.nth(1).locator(".result")).to_have_text(re.compile("First run"))
    expect(page.locator(".schedule-card .result")).to_have_text(re.compile("Changed"))  # its last result
    shot("history")

    runs.nth(0).get_by_role("link", name="Open the report").click()
    banner = page.get_by_role("note").filter(has_text="made by a schedule")
    expect(banner).to_contain_text("Every 6 hours")
    expect(banner.get_by_role("link", name="Its history and what changed")).to_have_attribute(
        "href", re.compile(r"^#/schedules/sch_")
    )
    changes = page.get_by_role("region", name="What changed")
    expect(changes).to_have_count(1)  # only the second run's report has something to compare with
    expect(changes.get_by_role("heading", name=re.compile("^What changed since"))).to_be_visible()
    claim = changes.locator(".change-changed").first
    expect(claim.locator(".change-tag")).to_have_text(re.compile("Changed"))
    expect(claim.locator(".change-before")).to_have_text(f"Before: {LIMIT.format(5)}")
    expect(claim.locator(".change-before del")).to_have_text("5")
    expect(claim.locator(".change-after ins")).to_have_text("7")
    passage = changes.locator(".change-changed .passage-edited")  # the source's edited paragraph
    expect(passage.locator(".change-before")).to_have_text(f"Said: {LIMIT.format(5)}")
    expect(passage.locator(".change-before del")).to_have_text("5")
    expect(passage.locator(".change-after")).to_have_text(f"Now says: {LIMIT.format(7)}")
    expect(passage.locator(".change-after ins")).to_have_text("7")
    # The server's markdown section is replaced by the structured view, not shown twice.
    report_body = changes.locator("xpath=ancestor::div[contains(@class, 'report-body')]")
    expect(report_body.get_by_text(re.compile(r"^What changed since"))).to_have_count(1)
    changes.scroll_into_view_if_needed()
    shot("report-diff")
