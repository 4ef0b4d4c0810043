"""SLEUTH_AUTH=accounts in the browser: two users made with `sleuth user add`, each signed in by the
sign-in page, each seeing only their own research; API keys shown once; a sign-in that ends
mid-session asks again without losing the page; a password changed on the API keys page."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from .servers import SLEUTH, Server, start_server, stop_server
from .ui import ask, composer, question_box, report

PASSWORDS = {"ada": "ada's long password", "bob": "bob's long password"}
QUESTION = "How does Python's descriptor protocol choose between __get__ and the instance __dict__ lookup?"
MARK = "instance __dict__ lookup"  # in the question and the session's title, in no starter question


@pytest.fixture(scope="module")
def accounts_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("accounts-server")
    server = start_server("accounts", root, {"SLEUTH_AUTH": "accounts"})
    try:
        for name, password in PASSWORDS.items():
            added = subprocess.run(
                [str(SLEUTH), "user", "add", name, "--password-stdin"],
                input=password + "\n",
                env=server.env,
                cwd=root,
                capture_output=True,
                text=True,
                check=False,
            )
            assert added.returncode == 0, added.stderr
        yield server
    finally:
        stop_server(server)


def sign_in(page: Page, name: str, password: str | None = None) -> None:
    form = page.get_by_role("form", name="Sign in").or_(page.get_by_role("dialog", name="Sign in"))
    expect(form).to_be_visible()
    form.get_by_label("User name").fill(name)
    form.get_by_label("Password").fill(PASSWORDS[name] if password is None else password)
    form.get_by_role("button", name="Sign in").click()


def account_bar(page: Page):  # type: ignore[no-untyped-def]
    return page.get_by_role("group", name="Your account")


def history(page: Page):  # type: ignore[no-untyped-def]
    return page.get_by_role("navigation", name="Research sessions")


@pytest.mark.e2e
def test_two_users_each_see_only_their_own_research(
    page: Page, accounts_server: Server, shot: Callable[..., Path], tmp_path: Path
) -> None:
    page.goto(accounts_server.base_url)
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    expect(history(page)).to_have_count(0)
    shot("sign-in")

    sign_in(page, "ada", "not ada's password")
    expect(page.get_by_role("alert")).to_have_text("Wrong user name or password.")
    shot("sign-in-refused")

    sign_in(page, "ada")
    expect(account_bar(page)).to_contain_text("ada")
    expect(account_bar(page).get_by_role("button", name="Sign out")).to_be_visible()
    ask(page, QUESTION, clarify=False)
    expect(report(page)).to_be_visible()
    expect(page).to_have_url(re.compile(r"#/s/[^/]+$"))
    ada_session = page.url
    expect(history(page).get_by_role("listitem")).to_have_count(1)
    shot("ada-report")

    account_bar(page).get_by_role("button", name="Sign out").click()
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    expect(history(page)).to_have_count(0)
    assert MARK not in page.content()
    assert not re.search(r"#/s/", page.url), "the next user starts on the welcome page"

    sign_in(page, "bob")
    expect(account_bar(page)).to_contain_text("bob")
    expect(history(page)).to_contain_text("No sessions yet.")
    expect(page.get_by_role("heading", name="What should Sleuth research?")).to_be_visible()
    assert MARK not in page.content()
    shot("bob-top-bar")
    # Every user uploads into collections of their own, administrator or not.
    composer(page).locator("details.source-picker > summary").click()
    menu = page.get_by_role("group", name="Sources to search")
    expect(menu.get_by_role("button", name="Use defaults")).to_be_visible()
    menu.get_by_role("button", name="Add files…").click()
    dialog = page.get_by_role("dialog", name="Add files to a collection")
    dialog.get_by_label("Collection").fill("bob-notes")
    (tmp_path / "gaur.md").write_text("# Gaurs\n\nGaurs browse at dusk.\n", encoding="utf-8")
    dialog.locator("input[type=file]").set_input_files(str(tmp_path / "gaur.md"))
    dialog.get_by_role("button", name="Upload").click()
    expect(dialog.locator(".upload-item")).to_contain_text("added")
    dialog.get_by_role("button", name="Close").click()
    composer(page).locator("details.source-picker > summary").click()
    expect(menu.locator("label", has_text="bob-notes").locator(".source-access")).to_have_text("private")
    shot("bob-private-upload")
    page.keyboard.press("Escape")

    page.goto(ada_session)
    expect(page.get_by_role("alert")).to_contain_text(re.compile(r"Could not open this session: .*not found"))
    expect(report(page)).to_have_count(0)
    shot("bob-opens-adas-session")


@pytest.mark.e2e
def test_an_api_key_is_shown_once_copied_and_deleted_after_a_confirmation(
    page: Page, accounts_server: Server, shot: Callable[..., Path]
) -> None:
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=accounts_server.base_url)
    page.goto(accounts_server.base_url)
    sign_in(page, "bob")
    account_bar(page).get_by_role("link", name="API keys").click()
    expect(page.get_by_role("heading", name="API keys", level=1)).to_be_visible()
    expect(page.get_by_text("No API keys yet.")).to_be_visible()

    # Keyboard only: the name, the expiry, then Enter creates it.
    form = page.get_by_role("form", name="New API key")
    form.get_by_label("Name").fill("laptop script")
    form.get_by_label("Expires after").select_option(label="30 days")
    form.get_by_label("Name").press("Enter")
    new_key = page.get_by_role("region", name=re.compile("^Your new key"))
    expect(new_key).to_contain_text("shown only this once")
    field = new_key.get_by_label("The new API key")
    expect(field).to_be_focused()
    key = field.input_value()
    assert key.startswith("sk_sleuth_")
    new_key.get_by_role("button", name="Copy").click()
    expect(new_key.get_by_role("status")).to_have_text("Copied to the clipboard.")
    assert page.evaluate("navigator.clipboard.readText()") == key
    table = page.get_by_role("table")
    expect(table.get_by_role("row")).to_have_count(2)
    expect(table).to_contain_text("laptop script")
    expect(table).to_contain_text("Never used")
    shot("api-key-created")

    new_key.get_by_role("button", name="Done").click()
    expect(new_key).to_have_count(0)
    page.reload()
    expect(page.get_by_role("table")).to_contain_text("laptop script")
    assert key not in page.content(), "the key is shown once only"
    shot("api-keys")

    # The key works as a bearer token for scripts, and is this user's.
    sessions = page.request.get(f"{accounts_server.base_url}/api/sessions", headers={"Authorization": f"Bearer {key}"})
    assert sessions.status == 200 and sessions.json() == []

    page.get_by_role("button", name="Delete the key laptop script").click()
    confirm = page.get_by_role("group", name="Delete the key laptop script?")
    expect(confirm.get_by_role("button", name="Keep")).to_be_focused()
    page.keyboard.press("Escape")
    expect(confirm).to_have_count(0)
    expect(page.get_by_role("button", name="Delete the key laptop script")).to_be_focused()
    page.keyboard.press("Enter")
    page.get_by_role("group", name="Delete the key laptop script?").get_by_role("button", name="Delete").click()
    expect(page.get_by_text("No API keys yet.")).to_be_visible()
    gone = page.request.get(f"{accounts_server.base_url}/api/sessions", headers={"Authorization": f"Bearer {key}"})
    assert gone.status == 401

    # The password, on the same page: a wrong current one is refused; then changed, and back again
    # (the new one is the current one by then, so the server took it).
    password = page.get_by_role("form", name="Password")
    new_password = "bob's brand new password"
    for current, new, said in [
        ("not bob's password", new_password, "The current password is wrong."),
        (PASSWORDS["bob"], new_password, "Password changed."),
        (new_password, PASSWORDS["bob"], "Password changed."),
    ]:
        password.get_by_label("Current password").fill(current)
        password.get_by_label("New password", exact=True).fill(new)
        password.get_by_label("New password again").fill(new)
        password.get_by_role("button", name="Change password").click()
        expect(password.get_by_role("alert" if "wrong" in said else "status")).to_contain_text(said)
    shot("password-changed")


@pytest.mark.e2e
def test_a_sign_in_that_ends_mid_session_asks_again_and_keeps_the_page(
    page: Page, accounts_server: Server, shot: Callable[..., Path]
) -> None:
    page.goto(accounts_server.base_url)
    sign_in(page, "bob")
    expect(account_bar(page)).to_contain_text("bob")
    question_box(page).fill("a question typed before the sign-in ended")

    page.context.clear_cookies()  # as a sign-out elsewhere, or an expired sign-in, would
    history(page).get_by_role("searchbox").fill("anything")
    dialog = page.get_by_role("dialog", name="Sign in")
    expect(dialog).to_contain_text("Your sign-in has ended")
    expect(dialog.get_by_label("User name")).to_have_value("bob")
    expect(dialog.get_by_label("Password")).to_be_focused()
    shot("sign-in-again")

    page.keyboard.type(PASSWORDS["bob"])
    page.keyboard.press("Enter")
    expect(dialog).to_have_count(0)
    expect(question_box(page)).to_have_value("a question typed before the sign-in ended")
    expect(history(page)).to_contain_text("No session title matches.")
