"""Reading in the UI (issue #26, point 7): the Search in popover closes like a popover, new research
and a follow-up each have one clear place, the document viewer shows a document's structure as
text, and the history's titles are distinct with rename and delete reachable from the keyboard.

One server for the module, with one finished run over an uploaded guide that every test but the
first opens (the offline model: a run costs tens of seconds on a loaded machine).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

from .servers import Server, start_server, stop_server
from .ui import citation_chips, composer, current_run, followup_form, question_box, report

# A guide written as pydoc writes its topics: underlined headings, lines hard-wrapped at 70 columns,
# a list, an indented example, a grid table, and markup that is only text.
GUIDE = """\
Quokka field guide
******************

Quokkas feed mostly at night on grasses, leaves and stems of
shrubs, and they rest in dense vegetation during the day.

Feeding at night
================

Quokkas leave their shelter at dusk.  During dry summers quokkas
chew succulent plants to get water from their food.

What quokkas eat:

* grasses and sedges that grow in open areas

* leaves and stems of shrubs

* succulent plants in the dry summer

A keeper's feeding log is written like this:

   def feed(quokka):
       quokka.eat("grass")
       return quokka.weight

+--------------+-----------------+
| Food         | Season          |
|==============|=================|
| grasses      | all year        |
+--------------+-----------------+
| succulents   | dry summer      |
+--------------+-----------------+

Markup in a guide is only text: <b>not bold</b> <img src=x onerror="window.__pwned=1">.
"""
QUESTION = "What do quokkas eat at night, and when do they feed?"
LOOKUP = "How does Python decide where an attribute lookup like obj.x finds its value?"


@dataclass(frozen=True)
class Reading:
    server: Server
    session_id: str


def _finish(client: httpx.Client, run_id: str) -> None:
    """Read the run's events to its `stop` packet (the stream replays and closes once it has ended)."""
    with client.stream("GET", f"/api/runs/{run_id}/events", timeout=None) as events:
        for line in events.iter_lines():
            if line.startswith("data:") and json.loads(line[5:])["obj"]["type"] == "stop":
                assert json.loads(line[5:])["obj"]["reason"] == "completed", line
                return
    pytest.fail(f"run {run_id} ended without a stop packet")


@pytest.fixture(scope="module")
def reading(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Reading]:
    server = start_server("reading", tmp_path_factory.mktemp("reading-server"), {})
    try:
        with httpx.Client(base_url=server.base_url, timeout=60) as client:
            files = [("files", ("quokka-guide.txt", GUIDE.encode(), "text/plain"))]
            assert client.post("/api/collections/guide/documents", files=files).status_code == 201
            started = client.post(
                "/api/research", json={"question": QUESTION, "mode": "light", "clarify": False, "sources": ["guide"]}
            )
            assert started.status_code in (200, 201, 202), started.text
            _finish(client, started.json()["run_id"])
            # Sessions named as many are: the same question twice, and one that parts from it late.
            for title in (LOOKUP, LOOKUP, LOOKUP.replace("?", " when a class defines __getattr__?")):
                assert client.post("/api/sessions", json={"title": title}).status_code == 201
        yield Reading(server, started.json()["session_id"])
    finally:
        stop_server(server)


@pytest.mark.e2e
def test_the_search_in_popover_closes_on_escape_and_on_a_click_outside(
    page: Page, reading: Reading, shot: Callable[..., Path]
) -> None:
    page.goto(reading.server.base_url)
    opener = composer(page).locator("details.source-picker > summary")
    menu = page.get_by_role("group", name="Sources to search")
    opener.click()
    expect(menu).to_be_visible()
    menu.get_by_role("checkbox").first.focus()
    shot("search-in-open")
    page.keyboard.press("Escape")
    expect(menu).to_be_hidden()
    expect(opener).to_be_focused()  # the keyboard is back where it was
    opener.click()
    expect(menu).to_be_visible()
    menu.dispatch_event("pointerdown")  # a press inside keeps it open
    expect(menu).to_be_visible()
    page.get_by_role("heading", name="What should Sleuth research?").click()
    expect(menu).to_be_hidden()


@pytest.mark.e2e
def test_new_research_and_a_follow_up_each_have_one_clear_place(
    page: Page, reading: Reading, shot: Callable[..., Path]
) -> None:
    page.goto(f"{reading.server.base_url}/#/s/{reading.session_id}")
    run = current_run(page)
    expect(report(run)).to_be_visible()
    box = question_box(page)
    expect(box).to_have_attribute("placeholder", "Ask a new research question…")
    expect(composer(page)).to_contain_text("This box starts new research.")
    expect(composer(page).get_by_role("button", name="Research")).to_be_visible()

    asking = followup_form(run)
    expect(asking).to_contain_text("Follow-up")
    expect(asking).to_contain_text("no new research")
    follow_up = asking.get_by_role("textbox", name="Follow-up question about this report")
    composer(page).get_by_role("button", name="Ask a follow-up about the report").click()
    expect(follow_up).to_be_focused()
    expect(follow_up).to_be_in_viewport()
    shot("follow-up-box")

    follow_up.fill("When do quokkas leave their shelter?")
    follow_up.press("Enter")
    answer = page.get_by_role("region", name="Answer from the report")
    expect(answer).to_be_visible()
    expect(answer).to_contain_text("no new research")
    expect(current_run(page).get_by_role("region", name="Research plan")).to_have_count(0)
    shot("follow-up-answer", whole_thread=True)


@pytest.mark.e2e
def test_the_viewer_shows_a_documents_structure_as_text(
    page: Page, reading: Reading, shot: Callable[..., Path], dialogs: list[str]
) -> None:
    page.goto(f"{reading.server.base_url}/#/s/{reading.session_id}")
    research = page.get_by_role("article", name=f"Question: {QUESTION}")  # a follow-up may come after it
    chips = citation_chips(research)
    expect(chips.first).to_be_visible()
    chips.first.click()
    viewer = page.get_by_role("dialog", name="Quokka field guide")
    expect(viewer).to_be_visible()
    body = viewer.locator(".doc-viewer-body")
    expect(body.locator("mark").first).to_be_visible()

    # The underlines are headings; the title, shown above the text, is not repeated in it.
    expect(body.get_by_role("heading", name="Feeding at night")).to_be_visible()
    expect(body.get_by_role("heading", name="Quokka field guide")).to_have_count(0)
    expect(body).not_to_contain_text("****")
    expect(body).not_to_contain_text("====")
    # Paragraphs flow: a sentence the file breaks over two lines is one line of one paragraph.
    opening = body.locator("p.doc-p").first
    expect(opening).to_have_text(
        "Quokkas feed mostly at night on grasses, leaves and stems of shrubs, and they rest in dense"
        " vegetation during the day."
    )
    # A list, code line for line, a table of cells.
    items = body.locator(".doc-item")
    expect(items).to_have_count(3)
    expect(items.nth(1)).to_have_text(re.compile(r"^•\s*leaves and stems of shrubs$"))
    code = body.locator("pre.doc-code")
    expect(code).to_have_text('def feed(quokka):\n    quokka.eat("grass")\n    return quokka.weight')
    table = body.get_by_role("table")
    expect(table.get_by_role("columnheader")).to_have_text(["Food", "Season"])
    expect(table.get_by_role("row").nth(2)).to_contain_text("dry summer")
    # The document's markup is its text: no element, no handler, nothing ran.
    expect(body).to_contain_text("<b>not bold</b>")
    expect(body.locator("b, img")).to_have_count(0)
    assert page.evaluate("() => window.__pwned") is None and dialogs == []
    shot("document-viewer")


@pytest.mark.e2e
def test_history_titles_are_distinct_and_rename_and_delete_are_reachable_by_keyboard(
    page: Page, reading: Reading, shot: Callable[..., Path]
) -> None:
    page.goto(reading.server.base_url)
    nav = page.get_by_role("navigation", name="Research sessions")
    links = nav.get_by_role("link")
    expect(links).to_have_count(4)
    texts = [t.strip() for t in links.all_inner_texts()]
    assert len(set(texts)) == 4, texts
    titles = [t.split("\n")[0] for t in nav.locator(".session-title").all_inner_texts()]
    assert sorted(Counter(titles).values()) == [1, 1, 2], titles  # the twice-asked one is numbered
    expect(nav.get_by_text("#2")).to_have_count(1)

    # From the search box, Tab reaches the first entry, then its rename button, shown while focused.
    first = nav.get_by_role("listitem").first
    actions = first.locator(".session-actions")
    expect(actions).to_have_css("opacity", "0")
    nav.get_by_role("searchbox", name="Search history by title").focus()
    page.keyboard.press("Tab")
    expect(links.first).to_be_focused()
    page.keyboard.press("Tab")
    rename = first.get_by_role("button", name=re.compile("^Rename "))
    expect(rename).to_be_focused()
    expect(actions).to_have_css("opacity", "1")
    shot("history-keyboard")

    page.keyboard.press("Enter")
    field = nav.get_by_role("textbox", name="Session title")
    expect(field).to_be_focused()
    page.keyboard.press("Escape")
    expect(field).to_have_count(0)
    expect(rename).to_be_focused()
    page.keyboard.press("Enter")
    field.fill("Quokkas at night")
    page.keyboard.press("Enter")
    expect(nav.get_by_role("link", name=re.compile("^Quokkas at night"))).to_be_visible()
    expect(nav.get_by_role("button", name="Rename Quokkas at night")).to_be_focused()

    page.keyboard.press("Tab")
    delete = nav.get_by_role("button", name="Delete Quokkas at night")
    expect(delete).to_be_focused()
    page.keyboard.press("Enter")
    confirm = nav.get_by_role("group", name="Delete Quokkas at night?")
    expect(confirm.get_by_role("button", name="Keep")).to_be_focused()
    shot("history-delete-confirm")
    page.keyboard.press("Escape")
    expect(confirm).to_have_count(0)
    expect(delete).to_be_focused()
    expect(links).to_have_count(4)
