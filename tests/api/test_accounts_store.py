"""Accounts in the store: the migration from the schema before them (with data in it), each user's
view of the store, and sign-ins and keys kept by hash.

Run against SQLite, and against PostgreSQL when SLEUTH_TEST_DATABASE_URL is set (scripts/test)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from sleuth.config import Settings
from sleuth.core.urls import database_target
from sleuth.store.accounts import ApiKeyRecord, NameTaken, Usage, UserRecord
from sleuth.store.backends import open_database
from sleuth.store.errors import NotFound
from sleuth.store.migrations import MIGRATIONS, current_version, migrate
from sleuth.store.records import RunRecord, now_iso
from sleuth.store.store import Store
from sleuth.stream.results import ResearchResult, ToolDocument
from support.reports import store_report

BEFORE_ACCOUNTS = next(n for n, m in enumerate(MIGRATIONS, 1) if m.name == "accounts") - 1


def _open() -> Store:
    return Store.from_settings(Settings())


@pytest.fixture
def store() -> Iterator[Store]:
    opened = _open()
    try:
        yield opened
    finally:
        opened.close()


def _user(user_id: str, *, admin: bool = False) -> UserRecord:
    return UserRecord(id=user_id, name=user_id.removeprefix("u_"), is_admin=admin, disabled=False, created_at=1.0)


def _data_before_accounts() -> None:
    """A database at the schema before accounts, with a session, its run, report, audio and tool document."""
    settings = Settings()
    url = settings.database_url.get_secret_value() if settings.database_url else None
    database = open_database(database_target(url, settings.data_dir), pool_size=2)
    try:
        assert migrate(database, upto=BEFORE_ACCOUNTS) == BEFORE_ACCOUNTS
        now = now_iso()
        sources = json.dumps([{"id": "d_web", "url": "https://example.org/a", "title": "A", "number": 1}])
        for sql, params in [
            ("INSERT INTO sessions (id, title, created_at, updated_at) VALUES (?, ?, ?, ?)", ("s_old", "t", now, now)),
            (
                "INSERT INTO runs (id, session_id, question, kind, status, owner_host, owner_pid, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                ("r_old", "s_old", "q", "question", "completed", "h", 1, now),
            ),
            (
                "INSERT INTO reports (id, run_id, session_id, status, stop_reason, question, title, summary,"
                " markdown, sources, removed_citations, clarification_questions, plan, elapsed_s, input_tokens,"
                " output_tokens, cost_usd, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    "rep_old",
                    "r_old",
                    "s_old",
                    "completed",
                    "completed",
                    "q",
                    "T",
                    "S",
                    "# R",
                    sources,
                    "[]",
                    "[]",
                    "[]",
                    1.0,
                    1,
                    1,
                    0.0,
                    now,
                ),
            ),
            (
                "INSERT INTO audio (id, report_id, session_id, style, status, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                ("a_old", "rep_old", "s_old", "narration", "done", now),
            ),
            (
                "INSERT INTO tool_documents (run_id, session_id, url, doc_id, title, text, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                ("r_old", "s_old", "mcp://notes/read", "d_notes", "notes", "text", now),
            ),
        ]:
            database.execute(sql, params)
    finally:
        database.close()


def _sees_the_old_session(store: Store) -> bool:
    seen = [
        store.get_session("s_old") is not None,
        store.get_run("r_old") is not None,
        store.get_report("rep_old") is not None,
        store.get_audio("a_old") is not None,
        store.tool_document("s_old", doc_id="d_notes") is not None,
        [s.id for s in store.list_sessions(10)] == ["s_old"],
        store.cited_url("d_web") == "https://example.org/a",
        [r[0] for r in store.recent_reports(10)] == ["rep_old"],
    ]
    assert len(set(seen)) == 1, seen  # all or nothing
    return seen[0]


def test_the_first_administrator_takes_over_what_was_stored_before_accounts() -> None:
    _data_before_accounts()
    store = _open()
    try:
        assert current_version(store.database) == len(MIGRATIONS)
        assert _sees_the_old_session(store)  # the single-user modes see everything, as before
        assert store.accounts.add_user(_user("u_bob")) is False
        assert not _sees_the_old_session(store.owned_by("u_bob"))
        assert store.accounts.add_user(_user("u_alice", admin=True)) is True
        assert _sees_the_old_session(store.owned_by("u_alice"))
        assert not _sees_the_old_session(store.owned_by("u_bob"))
        assert store.accounts.add_user(_user("u_carol", admin=True)) is False  # only the first takes over
        assert not _sees_the_old_session(store.owned_by("u_carol"))
        with pytest.raises(NameTaken):
            store.accounts.add_user(_user("u_bob"))
    finally:
        store.close()


def test_a_user_sees_and_changes_only_their_own_sessions(store: Store) -> None:
    alice, bob = store.owned_by("u_alice"), store.owned_by("u_bob")
    result = ResearchResult(
        status="completed",
        stop_reason="completed",
        question="q",
        report_id="rep_a",
        markdown="# R",
        tool_documents=[ToolDocument(id="d_n", url="mcp://n/r", title="n", text="t")],
    )
    session_id = store_report(alice, result)
    run = RunRecord("r_new", "s_new", "q", "question", "waiting_for_input", "h", 1, now_iso())
    store.create_run(run, new_session_title="asked", owner_id="u_alice")  # as the runs' owner starts one

    assert {s.id for s in alice.list_sessions(10)} == {session_id, "s_new"}
    assert bob.list_sessions(10) == [] and bob.list_sessions(10, title_contains="asked") == []
    assert alice.list_sessions(10, title_contains="ASK")[0].id == "s_new"
    assert [w[0] for w in alice.waiting_for_answers(10)] == ["s_new"] and bob.waiting_for_answers(10) == []
    for view, mine in ((alice, True), (bob, False)):
        assert (view.get_session(session_id) is not None) is mine
        assert bool(view.list_runs(session_id)) is mine and bool(view.list_messages("s_new")) is False
        assert (view.get_run("r_new") is not None) is mine
        assert (view.get_report("rep_a") is not None) is mine
        assert (view.latest_report_id(session_id) is not None) is mine
        assert bool(view.completed_reports(session_id)) is mine
        assert (view.tool_document(session_id, url="mcp://n/r") is not None) is mine
    assert bob.rename_session(session_id, "mine now") is None
    with pytest.raises(NotFound):
        bob.delete_session(session_id)
    bob.create_session("s_bob", "b")
    assert [s.id for s in bob.list_sessions(10)] == ["s_bob"]
    assert alice.get_session("s_bob") is None
    assert store.get_session("s_bob") is not None  # unscoped: the runs' owner, recovery
    alice.delete_session(session_id)
    assert store.get_session(session_id) is None


def test_sign_ins_end_with_a_sign_out_a_disabled_user_or_a_new_password(store: Store) -> None:
    accounts = store.accounts
    accounts.add_user(_user("u_alice"))
    accounts.add_user(_user("u_bob"))
    accounts.add_sign_in("h1", "u_alice", created_at=10.0, expires_at=100.0)
    accounts.add_sign_in("h2", "u_alice", created_at=10.0, expires_at=100.0)
    accounts.add_sign_in("hb", "u_bob", created_at=10.0, expires_at=100.0)
    found = accounts.sign_in("h1")
    assert found is not None and found.user.name == "alice" and found.expires_at == 100.0
    accounts.set_password_hash("u_alice", "$argon2id$new", keep_session="h1")
    assert accounts.sign_in("h1") is not None and accounts.sign_in("h2") is None
    accounts.add_sign_in("h4", "u_alice", created_at=10.0, expires_at=100.0)
    accounts.end_sign_ins("h1")  # signing out ends every sign-in of the user, and only theirs
    assert accounts.sign_in("h1") is None and accounts.sign_in("h4") is None
    assert accounts.sign_in("hb") is not None
    accounts.set_disabled("u_bob", True)
    assert accounts.sign_in("hb") is None
    accounts.add_sign_in("h3", "u_alice", created_at=200.0, expires_at=300.0)  # clears the expired ones
    assert store.database.fetch_all("SELECT token_hash FROM auth_sessions", ()) == [{"token_hash": "h3"}]


def test_api_keys_are_found_by_hash_and_deleted_only_by_their_user(store: Store) -> None:
    accounts = store.accounts
    accounts.add_user(_user("u_alice"))
    accounts.add_user(_user("u_bob"))
    key = ApiKeyRecord("k_1", "u_alice", "laptop", created_at=1.0, expires_at=None, last_used_at=None)
    accounts.add_api_key(key, "hash-of-key")
    found = accounts.api_key("hash-of-key")
    assert found is not None and found.user.id == "u_alice" and found.key_id == "k_1" and found.expires_at is None
    accounts.key_used("k_1", 5.0)
    assert accounts.api_keys("u_alice")[0].last_used_at == 5.0 and accounts.api_keys("u_bob") == []
    assert accounts.delete_api_key("u_bob", "k_1") is False
    assert accounts.delete_api_key("u_alice", "k_1") is True
    assert accounts.api_key("hash-of-key") is None


def test_an_older_schema_is_reached_by_migrating_only_so_far(tmp_path: Path) -> None:
    database = open_database(database_target(None, tmp_path), pool_size=1)
    try:
        assert migrate(database, upto=BEFORE_ACCOUNTS) == BEFORE_ACCOUNTS
        assert migrate(database) == len(MIGRATIONS)
    finally:
        database.close()


def test_usage_is_counted_per_owner(store: Store) -> None:
    store.accounts.add_user(_user("u_alice"))
    result = ResearchResult(
        status="completed",
        stop_reason="completed",
        question="q",
        report_id="rep_1",
        input_tokens=100,
        output_tokens=20,
        cost_usd=0.5,
    )
    session_id = store_report(store.owned_by("u_alice"), result)
    store_report(store.owned_by("u_alice"), result.model_copy(update={"report_id": "rep_2"}), session_id)
    store.create_session("s_local", "built-in")
    usage = store.accounts.usage()
    assert usage["u_alice"] == Usage(sessions=1, runs=2, input_tokens=200, output_tokens=40, cost_usd=1.0)
    assert usage[None] == Usage(sessions=1)
    assert "u_bob" not in usage
