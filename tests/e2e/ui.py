"""Page helpers shared by the browser tests: how a person finds things, by role and label."""

from __future__ import annotations

import re

from playwright.sync_api import Locator, Page, expect


def question_box(page: Page) -> Locator:
    """The box at the bottom: a new research question (or the answer to clarifying questions)."""
    return page.get_by_role("textbox", name="Research question")


def composer(page: Page) -> Locator:
    return page.get_by_role("form", name="New research")


def followup_form(run: Locator) -> Locator:
    """The box under a finished report: a follow-up answered from the report, without new research."""
    return run.get_by_role("form", name="Follow-up about this report")


def ask(page: Page, question: str, *, clarify: bool, mode: str = "Heavy") -> None:
    """Type a question in the composer and send it with Enter (heavy mode: three lanes a cycle)."""
    box = question_box(page)
    expect(box).to_be_enabled()
    composer(page).get_by_role("radio", name=mode).check()
    toggle = composer(page).get_by_role("checkbox", name="Ask clarifying questions")
    toggle.set_checked(clarify)
    box.fill(question)
    box.press("Enter")


def current_run(page: Page) -> Locator:
    """The latest run's timeline (the last question-and-answer block in the thread)."""
    return page.get_by_role("article", name=re.compile(r"^Question")).last


def lanes_region(scope: Page | Locator) -> Locator:
    return scope.get_by_role("region", name=re.compile(r"parallel research agents$"))


def lane(scope: Page | Locator, n: int) -> Locator:
    return scope.get_by_role("article", name=re.compile(rf"^Agent {n}:"))


def report(scope: Page | Locator) -> Locator:
    return scope.get_by_role("region", name="Research report")


def sources_panel(scope: Page | Locator) -> Locator:
    return scope.get_by_role("complementary", name="Sources")


def citation_chips(scope: Page | Locator) -> Locator:
    return report(scope).get_by_role("button", name=re.compile(r"^Source \d+"))


def stop_button(page: Page) -> Locator:
    return composer(page).get_by_role("button", name=re.compile("Stop"))


def research_button(page: Page) -> Locator:
    return composer(page).get_by_role("button", name=re.compile("Research|Sending"))


def open_timeline(run: Locator) -> None:
    """A finished run folds its timeline under the report; open it to look at the plan and lanes."""
    summary = run.locator("details.timeline-fold > summary")
    expect(summary).to_be_visible()
    if run.locator("details.timeline-fold[open]").count() == 0:
        summary.click()
    expect(run.locator("details.timeline-fold[open]")).to_have_count(1)
