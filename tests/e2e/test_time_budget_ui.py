"""The composer's time budget: chosen beside Light/Heavy, sent with the question, counted down live."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from .ui import ask, composer, current_run, stop_button

QUESTION = "How do Python descriptors and __getattr__ interact during attribute lookup?"


@pytest.mark.e2e
def test_the_chosen_budget_reaches_the_run_and_the_progress_line_counts_it_down(
    page: Page, scripted_server, held_agents: Callable[[], None], shot: Callable[..., Path]
) -> None:
    page.goto(scripted_server.base_url)
    budget = composer(page).get_by_role("combobox", name="Time budget")
    budget.select_option(label="2 min")
    ask(page, QUESTION, clarify=False)

    left = current_run(page).get_by_text(re.compile(r"^\d+:\d\d left$"))
    expect(left).to_be_visible()
    first = left.inner_text()
    minutes, seconds = (int(x) for x in first.removesuffix(" left").split(":"))
    assert 0 < minutes * 60 + seconds <= 120
    shot("budget-counting-down")

    stop_button(page).click()
    expect(left).to_have_count(0)  # a finished run shows no countdown

    session = re.search(r"#/s/([^/?#]+)", page.url)
    assert session, page.url
    runs = page.request.get(f"{scripted_server.base_url}/api/sessions/{session.group(1)}").json()["runs"]
    events = page.request.get(f"{scripted_server.base_url}/api/runs/{runs[-1]['id']}/events", timeout=30_000)
    first_packet = next(line for line in events.text().splitlines() if line.startswith("data: "))
    assert json.loads(first_packet.removeprefix("data: "))["obj"]["time_budget_s"] == 120

    # the choice is remembered for the next question
    page.reload()
    expect(composer(page).get_by_role("combobox", name="Time budget")).to_have_value("120")
