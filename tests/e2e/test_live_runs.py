"""Runs observed mid-flight: reload carries on, Stop cancels, an old session replays.

Mid-flight tests use the scripted model (`scripted_server`) with its agents held
(`held_agents`), so three lanes stay running until the test lets them go.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from .ui import (
    ask,
    citation_chips,
    current_run,
    lane,
    lanes_region,
    open_timeline,
    question_box,
    report,
    research_button,
    sources_panel,
    stop_button,
)

CLEAR_QUESTION = "How do Python descriptors and __getattr__ interact during attribute lookup?"


def _session_id(page: Page) -> str:
    match = re.search(r"#/s/([^/?#]+)", page.url)
    assert match, f"no session in the URL {page.url}"
    return match.group(1)


def _three_lanes_running(page: Page) -> None:
    run = current_run(page)
    lanes = lanes_region(run)
    expect(lanes).to_have_count(1)
    expect(lanes.get_by_role("heading")).to_contain_text("3 research agents in parallel · 3 running")
    for n in (1, 2, 3):
        expect(lane(lanes, n)).to_be_visible()
        expect(lane(lanes, n)).to_contain_text("running")


@pytest.mark.e2e
def test_reload_mid_run_rebuilds_the_timeline_and_carries_on(
    page: Page, scripted_server, held_agents: Callable[[], None], shot: Callable[..., Path], dialogs: list[str]
) -> None:
    page.goto(scripted_server.base_url)
    ask(page, CLEAR_QUESTION, clarify=False)
    _three_lanes_running(page)
    expect(stop_button(page)).to_be_visible()
    run = current_run(page)
    tasks = [lane(run, n).locator(".lane-task").inner_text() for n in (1, 2, 3)]
    shot("three-lanes-running")
    url = page.url
    session = _session_id(page)

    page.reload()

    # Same session; the timeline is rebuilt from the server while the run is still going.
    assert page.url == url
    run = current_run(page)
    expect(run.get_by_role("region", name="Research plan")).to_have_count(1)
    expect(lanes_region(run)).to_have_count(1)
    expect(lanes_region(run).get_by_role("heading")).to_contain_text("running")
    for n, task in zip((1, 2, 3), tasks, strict=False):
        expect(lane(run, n).locator(".lane-task")).to_have_text(task)
    expect(stop_button(page)).to_be_visible()
    expect(question_box(page)).to_be_disabled()
    shot("after-reload-still-running")
    held_agents()  # let the agents go on

    # ...and carries on live to the verified report, without duplicated lanes or steps.
    rep = report(run)
    expect(rep.get_by_text("Verified report")).to_be_visible()
    expect(page.get_by_role("status").filter(has_text="Done")).to_have_count(1)
    open_timeline(run)
    expect(lanes_region(run)).to_have_count(1)
    expect(run.get_by_role("article", name=re.compile(r"^Agent \d"))).to_have_count(3)
    for n in (1, 2, 3):
        expect(lane(run, n)).to_contain_text("done")
        # One search, one page opening per agent: a replay that doubled packets would show two.
        expect(lane(run, n).get_by_text(re.compile(r"^Searched"))).to_have_count(1)
    expect(citation_chips(run).first).to_be_visible()
    expect(sources_panel(run)).to_be_visible()
    expect(question_box(page)).to_be_enabled()
    assert _session_id(page) == session
    shot("report-after-reload", whole_thread=True)
    assert dialogs == []


@pytest.mark.e2e
def test_stop_cancels_the_run_and_frees_the_composer(
    page: Page, scripted_server, held_agents: Callable[[], None], shot: Callable[..., Path], dialogs: list[str]
) -> None:
    page.goto(scripted_server.base_url)
    ask(page, CLEAR_QUESTION, clarify=False)
    _three_lanes_running(page)
    expect(question_box(page)).to_be_disabled()
    shot("running-before-stop")

    stop_button(page).click()

    run = current_run(page)
    expect(run.get_by_text("Stopped.")).to_be_visible()
    expect(page.get_by_role("status").filter(has_text="Stopped")).to_have_count(1)
    expect(stop_button(page)).to_have_count(0)
    expect(question_box(page)).to_be_enabled()
    expect(research_button(page)).to_be_visible()
    for n in (1, 2, 3):
        expect(lane(run, n)).not_to_contain_text("running")
    expect(report(run)).to_have_count(0)
    shot("stopped")

    # The server agrees: the run ended as cancelled.
    detail = page.request.get(f"{scripted_server.base_url}/api/sessions/{_session_id(page)}")
    assert detail.ok
    runs = detail.json()["runs"]
    assert runs[-1]["status"] == "cancelled", runs

    # The composer works again: a new question can be typed and sent.
    question_box(page).fill("A follow-up question")
    expect(research_button(page)).to_be_enabled()
    assert dialogs == []


@pytest.mark.e2e
def test_an_old_session_replays_from_the_sidebar(
    page: Page, offline_server, shot: Callable[..., Path], dialogs: list[str]
) -> None:
    question = "How do Python descriptors and __getattr__ interact during attribute lookup?"
    page.goto(offline_server.base_url)
    ask(page, question, clarify=False)
    run = current_run(page)
    rep = report(run)
    expect(rep.get_by_text("Verified report")).to_be_visible()
    expect(run.get_by_label("Run summary")).to_be_visible()
    open_timeline(run)
    report_text = rep.locator(".report-body > .md").inner_text()
    header_text = rep.locator(".report-header").text_content()
    lane_count = run.get_by_role("article", name=re.compile(r"^Agent \d")).count()
    chip_count = citation_chips(run).count()
    assert lane_count >= 3 and chip_count >= 1
    shot("first-session-report")

    # A new chat clears the thread...
    page.get_by_role("navigation", name="Research sessions").get_by_role("button", name="New research").click()
    expect(page.get_by_role("heading", name="What should Sleuth research?")).to_be_visible()
    expect(page.get_by_role("region", name="Research report")).to_have_count(0)
    shot("new-chat")

    # ...and the old session replays from the history list.
    history = page.get_by_role("navigation", name="Research sessions")
    history.get_by_role("link", name=re.compile(re.escape(question[:40]))).first.click()
    run = current_run(page)
    rep = report(run)
    expect(rep.get_by_text("Verified report")).to_be_visible()
    expect(rep.locator(".report-body > .md")).to_have_text(report_text)
    expect(rep.locator(".report-header")).to_have_text(header_text or "")
    open_timeline(run)
    expect(run.get_by_role("article", name=re.compile(r"^Agent \d"))).to_have_count(lane_count)
    expect(citation_chips(run)).to_have_count(chip_count)
    expect(run.get_by_role("region", name="Research plan")).to_be_visible()
    expect(run.get_by_label("Run summary")).to_be_visible()
    expect(history.get_by_role("link", name=re.compile(re.escape(question[:40]))).first).to_have_attribute(
        "aria-current", "page"
    )
    expect(question_box(page)).to_be_enabled()
    shot("replayed", whole_thread=True)

    # The replayed chips still work.
    chip = citation_chips(run).first
    number = chip.inner_text().strip()
    chip.click()
    expect(sources_panel(run).locator(f'li[data-source="{number}"]')).to_have_attribute("aria-current", "true")
    assert dialogs == []
