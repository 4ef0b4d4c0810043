"""The notice by the ask box while the server warms up. The browser's `/api/health` is held at
`ready: false` (the server itself is warm), so the test decides when the warm-up ends: a question
asked meanwhile still runs, and the notice goes once health says ready."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.sync_api import Page, Route, expect

from .servers import Server
from .ui import ask, composer, report

WARMING = {
    "status": "ok",
    "ready": False,
    "version": "0",
    "active_runs": 0,
    "max_runs": 4,
    "engines": 2,
    "engines_ready": 1,
}


@pytest.mark.e2e
def test_the_ui_says_it_warms_up_and_a_question_asked_meanwhile_runs(
    page: Page, offline_server: Server, shot: Callable[..., Path]
) -> None:
    def warming(route: Route) -> None:
        route.fulfill(status=200, content_type="application/json", body=json.dumps(WARMING))

    page.route("**/api/health", warming)
    page.goto(offline_server.base_url)
    notice = composer(page).get_by_role("status")
    expect(notice).to_contain_text("Sleuth is warming up (1 of 2 research engines ready)")
    shot("warming-up")

    ask(page, "How do Python descriptors and __getattr__ interact during attribute lookup?", clarify=False)
    expect(report(page)).to_be_visible()

    page.unroute("**/api/health")  # the next poll reaches the server, which is ready
    expect(notice).to_have_count(0)
    shot("ready")
