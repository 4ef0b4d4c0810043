"""The full flow with the embedded offline model: clarify → answer → plan → three lanes → cited report."""

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
)


@pytest.mark.e2e
def test_vague_question_is_clarified_then_researched_into_a_cited_report(
    page: Page, offline_server, shot: Callable[..., Path], dialogs: list[str]
) -> None:
    page.goto(offline_server.base_url)
    expect(page.get_by_role("heading", name="What should Sleuth research?")).to_be_visible()
    shot("welcome")

    # A vague question: the offline model asks before it researches.
    ask(page, "decorators?", clarify=True)
    card = page.get_by_role("form", name="A few questions before researching")
    expect(card).to_be_visible()
    answers = card.get_by_role("textbox")
    expect(answers.first).to_be_visible()
    assert answers.count() >= 2, "one box per question plus a free-text box"
    expect(page.get_by_role("status").filter(has_text="Waiting for your answers")).to_have_count(1)
    shot("clarification-card")

    # Answer inline: the first question and the free-text box.
    answers.first.fill("How function decorators are applied when a def statement is executed")
    card.get_by_label("Anything else Sleuth should know?").fill("Only the Python language reference.")
    card.get_by_role("button", name="Answer and start research").click()

    # The card collapses to the questions asked; the answer becomes the next message.
    expect(page.get_by_role("heading", name="Sleuth asked")).to_be_visible()
    run = current_run(page)
    expect(run).to_contain_text("when a def statement is executed")
    expect(page.get_by_text("Asked for clarification")).to_be_visible()

    # Plan: streamed, then numbered steps.
    plan = run.get_by_role("region", name="Research plan")
    expect(plan.get_by_role("heading", name=re.compile(r"^Plan"))).to_be_visible()
    expect(plan.get_by_role("listitem").first).to_be_visible()

    # Three lanes of one cycle, side by side, all on screen at the same time.
    lanes = lanes_region(run).first
    expect(lanes.get_by_role("heading")).to_contain_text("3 research agents in parallel")
    lanes.scroll_into_view_if_needed()
    for n in (1, 2, 3):
        expect(lane(lanes, n)).to_be_visible()
        expect(lane(lanes, n)).to_be_in_viewport()
        expect(lane(lanes, n).get_by_role("list", name=f"Steps of agent {n}")).to_be_visible()
    shot("lanes")

    # The report.
    rep = report(run)
    expect(rep).to_be_visible()
    expect(rep.get_by_text("Verified report")).to_be_visible()
    expect(run.get_by_role("definition").first).to_be_visible()  # summary bar
    expect(research_button(page)).to_be_visible()
    expect(question_box(page)).to_be_enabled()
    shot("report", whole_thread=True)

    open_timeline(run)  # the finished run folds its timeline under the report
    box = [lane(lanes, n).bounding_box() for n in (1, 2, 3)]
    assert all(b is not None for b in box)
    assert box[0]["x"] < box[1]["x"] < box[2]["x"], "three lanes side by side on a wide screen"
    assert abs(box[0]["y"] - box[2]["y"]) < 2

    # Citation chips: click highlights the source in the panel; hover shows a card.
    chips = citation_chips(run)
    expect(chips.first).to_be_visible()
    panel = sources_panel(run)
    expect(panel).to_be_visible()
    expect(panel.get_by_role("heading", name=re.compile(r"^Cited \(\d+\)"))).to_be_visible()
    chip = chips.last
    number = chip.inner_text().strip()
    chip.click()
    highlighted = panel.locator(f'li[data-source="{number}"]')
    expect(highlighted).to_have_attribute("aria-current", "true")
    expect(highlighted).to_have_class(re.compile(r"\bactive\b"))
    expect(highlighted).to_be_in_viewport()
    # The click also opens the source in the document viewer; Escape closes it.
    viewer = page.locator("dialog.doc-viewer")
    expect(viewer).to_be_visible()
    page.keyboard.press("Escape")
    expect(viewer).to_be_hidden()
    chip.hover()
    tip = run.get_by_role("tooltip")
    expect(tip).to_be_visible()
    title = highlighted.locator(".src-title > :first-child").inner_text().strip()
    expect(tip).to_contain_text(title)
    shot("citation-highlighted")

    assert dialogs == []
