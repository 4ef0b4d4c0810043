"""The user in the loop and the report as an artifact, in the browser, with the embedded offline model."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from sleuth_testkit.model import Reply, ScriptedLLM, tool_names
from sleuth_testkit.scenarios import ResearchModel

from .servers import Server, start_server, stop_server
from .ui import composer, current_run, followup_form, open_timeline, question_box, report

QUESTION = "How do Python descriptors and __getattr__ interact during attribute lookup?"


def ask_with_review(page: Page, question: str, *, review: bool = True) -> None:
    box = question_box(page)
    expect(box).to_be_enabled()
    composer(page).get_by_role("checkbox", name="Ask clarifying questions").set_checked(False)
    composer(page).get_by_role("checkbox", name="Review the plan").set_checked(review)
    box.fill(question)
    box.press("Enter")


class SlowToNarrate(ResearchModel):
    """Researches at once. The overview script never comes, so the player stays busy; the dialogue
    script is not written at all, so the player says why."""

    def audio_script(self, body: dict[str, Any]) -> Reply:
        if "record_dialogue" in tool_names(body):
            return Reply(text="No script today.")
        return Reply(hang=True)


@pytest.fixture(scope="module")
def scripted_artifacts_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The scripted model with a plan review that times out after 4 s unanswered."""
    with ScriptedLLM(SlowToNarrate()) as llm:
        server = start_server(
            "artifacts",
            tmp_path_factory.mktemp("artifacts-server"),
            {
                "SLEUTH_MODEL": "openai/scripted",
                "SLEUTH_API_BASE": llm.base_url,
                "SLEUTH_API_KEY": "sk-test",
                "SLEUTH_LLM_RETRIES": "0",
                "SLEUTH_PLAN_REVIEW_TIMEOUT_S": "4",
            },
        )
        yield server
        stop_server(server)


@pytest.mark.e2e
def test_plan_review_edit_revise_approve_then_the_report_leads_with_its_artifact(
    page: Page, offline_server, shot: Callable[..., Path]
) -> None:
    page.goto(offline_server.base_url)
    ask_with_review(page, QUESTION)
    review = page.get_by_role("region", name="Review the research plan")
    expect(review).to_be_visible(timeout=120_000)  # a fresh server builds its corpus on the first run
    steps = review.get_by_role("textbox", name=re.compile(r"^Step \d+$"))
    expect(steps.first).to_be_visible()
    planned = steps.count()
    assert planned >= 3
    shot("plan-review")

    # Ask for a revision first: the planner answers and the review comes back for round 2.
    review.get_by_role("textbox", name="Feedback on the plan").fill("also cover __slots__ and memory use")
    review.get_by_role("button", name="Revise").click()
    expect(review.get_by_text("revision 1")).to_be_visible()
    revised_step_texts = [steps.nth(i).input_value() for i in range(steps.count())]
    assert any("__slots__" in text for text in revised_step_texts), revised_step_texts

    # Edit: change step 1, move step 2 up, delete the last, add one.
    steps.nth(0).fill("How data descriptors take precedence over the instance dictionary")
    review.get_by_role("button", name="Move step 2 up").click()
    review.get_by_role("button", name=f"Delete step {steps.count()}").click()
    review.get_by_role("button", name="+ Add step").click()
    steps.last.fill("When __getattr__ is called as a fallback")
    shot("plan-edited")
    review.get_by_role("button", name="Approve plan").click()

    run = current_run(page)
    plan = run.get_by_role("region", name="Research plan").last
    expect(plan).to_contain_text("edited by you")
    expect(plan).to_contain_text("When __getattr__ is called as a fallback")
    expect(plan).to_contain_text("How data descriptors take precedence over the instance dictionary")

    verified = report(run)
    expect(verified).to_be_visible()
    expect(verified.locator(".report-title")).to_have_text(QUESTION.rstrip("?"))
    # the offline model's summary and key findings are copies of report sentences, so the report does
    # not show them again: it opens on its cited answer
    expect(verified.get_by_role("region", name="Key findings")).to_have_count(0)
    expect(verified.locator(".report-summary")).to_have_count(0)
    expect(verified.get_by_role("button", name=re.compile(r"^Source \d+")).first).to_be_visible()
    expect(verified.get_by_role("heading", name="How this report was made")).to_be_visible()
    expect(verified).to_contain_text(re.compile(r"Confidence: (high|medium|low)"))
    shot("report-with-artifact", whole_thread=True)


@pytest.mark.e2e
def test_a_finished_run_shows_the_report_first_and_sessions_can_be_renamed_searched_and_deleted(
    page: Page, offline_server, shot: Callable[..., Path]
) -> None:
    page.goto(offline_server.base_url)
    box = question_box(page)
    composer(page).get_by_role("checkbox", name="Ask clarifying questions").set_checked(False)
    composer(page).get_by_role("checkbox", name="Review the plan").set_checked(False)
    box.fill("What happens when a generator is closed?")
    box.press("Enter")
    run = current_run(page)
    verified = report(run)
    expect(verified).to_be_visible()

    # The report comes first; the timeline is one line that opens on demand.
    fold = run.locator("details.timeline-fold")
    digest = re.compile(r"^Researched \d+ steps? with \d+ agents? in \d+ cycles? · \d+:\d\d$")
    expect(fold.locator(":scope > summary")).to_have_text(digest)
    expect(run.get_by_role("region", name="Research plan")).to_be_hidden()
    report_top = verified.bounding_box()
    fold_top = fold.bounding_box()
    assert report_top and fold_top and report_top["y"] < fold_top["y"]
    assert report_top["y"] < 400, "the report starts near the top of the run, not below the timeline"
    expect(verified.locator(".report-title")).to_be_in_viewport()  # the reader lands on its title, not its end
    shot("report-first")
    fold.locator(":scope > summary").click()
    expect(run.get_by_role("region", name="Research plan")).to_be_visible()
    shot("timeline-open", whole_thread=True)

    # Download menu: md, pdf and docx come from the server's stored report; it closes like a menu.
    opener = verified.locator("summary", has_text="Download")
    menu = verified.get_by_role("menu", name="Download the report")
    opener.click()
    expect(menu.get_by_role("menuitem")).to_have_count(3)
    shot("download-menu")
    page.keyboard.press("Escape")
    expect(menu).to_be_hidden()
    opener.click()
    page.get_by_role("banner").click()
    expect(menu).to_be_hidden()
    for label, suffix, magic in (
        ("Markdown (.md)", ".md", b"# What happens when a generator is closed?"),
        ("PDF (.pdf)", ".pdf", b"%PDF"),
        ("Word (.docx)", ".docx", b"PK"),
    ):
        opener.click()
        with page.expect_download(timeout=90_000) as info:  # rendering a PDF takes seconds on a busy machine
            menu.get_by_role("menuitem", name=label).click()
        download = info.value
        assert download.suggested_filename.endswith(suffix)
        assert Path(download.path()).read_bytes().startswith(magic)
        expect(menu).to_be_hidden()  # done: the menu is out of the way

    # A follow-up is answered from the report, without new research, with the report's citations.
    asking = followup_form(run)
    question = "When is a generator's close() method called?"
    asking.get_by_role("textbox", name="Follow-up question about this report").fill(question)
    asking.get_by_role("button", name="Ask follow-up").click()
    answer = page.get_by_role("region", name="Answer from the report")
    expect(answer).to_be_visible()
    expect(answer).to_contain_text(re.compile(r"\S"))
    expect(current_run(page).get_by_role("region", name="Research plan")).to_have_count(0)
    shot("followup-answer", whole_thread=True)

    nav = page.get_by_role("navigation", name="Research sessions")
    item = nav.get_by_role("listitem").filter(has_text="What happens when a generator is closed?")
    item.hover()
    item.get_by_role("button", name=re.compile("^Rename")).click()
    title = nav.get_by_role("textbox", name="Session title")
    title.fill("Generators: close()")
    title.press("Enter")
    renamed = nav.get_by_role("link", name=re.compile("Generators: close"))
    expect(renamed).to_be_visible()
    expect(page.get_by_role("banner")).to_contain_text("Generators: close()")  # the open session's title too
    expect(page).to_have_title("Generators: close() · Sleuth")

    search = nav.get_by_role("searchbox", name="Search history by title")
    search.fill("no such title")
    expect(nav.get_by_text("No session title matches.")).to_be_visible()
    search.fill("GENERATORS")
    expect(renamed).to_be_visible()
    shot("session-search")

    item = nav.get_by_role("listitem").filter(has_text="Generators: close()")
    item.hover()
    item.get_by_role("button", name=re.compile("^Delete")).click()
    confirm = nav.get_by_role("group", name=re.compile("^Delete"))
    expect(confirm).to_be_visible()
    shot("delete-confirm")
    confirm.get_by_role("button", name="Keep").click()
    expect(renamed).to_be_visible()  # keeping it deletes nothing
    item.hover()
    item.get_by_role("button", name=re.compile("^Delete")).click()
    nav.get_by_role("group", name=re.compile("^Delete")).get_by_role("button", name="Delete").click()
    expect(renamed).to_have_count(0)
    expect(page.get_by_role("heading", name="What should Sleuth research?")).to_be_visible()


@pytest.mark.e2e
def test_the_report_can_be_listened_to(page: Page, offline_server, shot: Callable[..., Path]) -> None:
    page.goto(offline_server.base_url)
    box = question_box(page)
    composer(page).get_by_role("checkbox", name="Ask clarifying questions").set_checked(False)
    box.fill("What does the yield statement do?")
    box.press("Enter")
    run = current_run(page)
    expect(report(run)).to_be_visible(timeout=120_000)
    player = run.get_by_role("region", name="Listen to the report")
    player.get_by_role("combobox", name="Audio style").select_option("dialogue")
    player.get_by_role("button", name="Listen").click()
    audio = player.get_by_label("Report audio")
    expect(audio).to_be_visible(timeout=120_000)
    duration = page.wait_for_function(
        "() => { const a = document.querySelector('.audio-player audio'); return a && a.duration > 0 && a.duration; }",
        timeout=60_000,
    ).json_value()
    assert duration > 3  # a playable file, seconds long
    shot("audio-player")


@pytest.mark.e2e
def test_an_unanswered_plan_review_times_out_and_the_plan_runs_as_proposed(
    page: Page, scripted_artifacts_server: Server, shot: Callable[..., Path]
) -> None:
    page.goto(scripted_artifacts_server.base_url)
    ask_with_review(page, QUESTION)
    run = current_run(page)
    verified = report(run)
    expect(verified).to_be_visible(timeout=60_000)  # nobody answered: the review timed out, research went on
    expect(run.get_by_role("region", name="Review the research plan")).to_have_count(0)
    expect(verified).to_contain_text("Degradation: plan review timeout")  # named in the method note
    open_timeline(run)
    plan = run.get_by_role("region", name="Research plan").last
    expect(plan).to_contain_text("not reviewed in time")
    expect(run.get_by_role("note").filter(has_text="Plan not reviewed in time")).to_be_visible()
    shot("plan-review-timed-out", whole_thread=True)


@pytest.mark.e2e
def test_the_audio_player_shows_a_failed_style_then_a_job_in_progress(
    page: Page, scripted_artifacts_server: Server, shot: Callable[..., Path]
) -> None:
    page.goto(scripted_artifacts_server.base_url)
    ask_with_review(page, "How do descriptors take precedence over __getattr__?", review=False)
    run = current_run(page)
    expect(report(run)).to_be_visible(timeout=60_000)
    player = run.get_by_role("region", name="Listen to the report")
    style = player.get_by_role("combobox", name="Audio style")
    listen = player.get_by_role("button", name="Listen")

    style.select_option("dialogue")
    listen.click()
    expect(player.get_by_role("alert")).to_contain_text("the report model wrote no dialogue script")
    expect(listen).to_be_enabled()  # asking again is one click
    shot("audio-failed")

    style.select_option("overview")
    listen.click()
    making = player.get_by_role("button", name="Writing the script…")  # the server's progress, polled
    expect(making).to_be_disabled()
    expect(style).to_be_disabled()
    expect(player.get_by_role("alert")).to_have_count(0)  # the last failure is cleared
    expect(player.get_by_label("Report audio")).to_have_count(0)
    shot("audio-making")
