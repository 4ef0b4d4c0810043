"""Accounts on their own: users and passwords, sign-ins and their expiry, API keys, the login limit."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from sleuth.accounts.limits import LoginLimiter
from sleuth.accounts.passwords import WeakPassword
from sleuth.accounts.service import Accounts, BadName
from sleuth.accounts.tokens import API_KEY_PREFIX, csrf_token
from sleuth.store.accounts import NameTaken
from sleuth.store.store import Store
from sleuth_testkit.clock import ManualClock
from support.accounts import quick_passwords

PASSWORD = "correct horse battery"


class Wall:
    def __init__(self) -> None:
        self.t = 1_700_000_000.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store(tmp_path)
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture
def wall() -> Wall:
    return Wall()


@pytest.fixture
def accounts(store: Store, wall: Wall) -> Accounts:
    return Accounts(store.accounts, quick_passwords(), sign_in_s=3600, wall=wall)


def test_a_user_signs_in_with_the_right_password_only(accounts: Accounts, store: Store) -> None:
    alice, first_admin = accounts.add_user("alice", PASSWORD, admin=True)
    assert first_admin and alice.is_admin
    signed = accounts.sign_in("alice", PASSWORD)
    assert signed is not None and signed.user.id == alice.id and signed.csrf == csrf_token(signed.token)
    assert accounts.sign_in("alice", PASSWORD + "!") is None
    assert accounts.sign_in("nobody", PASSWORD) is None  # the same answer as a wrong password
    assert accounts.sign_in("no such/name", PASSWORD) is None
    caller = accounts.by_sign_in(signed.token)
    assert caller is not None and caller.user.name == "alice"
    dump = "\n".join(
        str(row)
        for table in ("users", "auth_sessions")
        for row in store.database.fetch_all(f"SELECT * FROM {table}", ())
    )
    assert PASSWORD not in dump and signed.token not in dump  # only hashes are kept


def test_names_and_passwords_are_checked(accounts: Accounts) -> None:
    with pytest.raises(BadName):
        accounts.add_user("a b", PASSWORD, admin=False)
    with pytest.raises(BadName):
        accounts.add_user("", PASSWORD, admin=False)
    with pytest.raises(WeakPassword, match="at least 8"):
        accounts.add_user("bob", "short", admin=False)
    accounts.add_user("bob", PASSWORD, admin=False)
    with pytest.raises(NameTaken):
        accounts.add_user("bob", PASSWORD, admin=False)


def test_a_sign_in_ends_when_it_expires_is_signed_out_or_its_user_disabled(accounts: Accounts, wall: Wall) -> None:
    accounts.add_user("alice", PASSWORD, admin=False)
    accounts.add_user("bob", PASSWORD, admin=False)
    first, second, third = (accounts.sign_in("alice", PASSWORD) for _ in range(3))
    bobs = accounts.sign_in("bob", PASSWORD)
    assert first is not None and second is not None and third is not None and bobs is not None
    wall.t += 3599
    assert accounts.by_sign_in(first.token) is not None
    wall.t += 1
    assert accounts.by_sign_in(first.token) is None  # expired
    assert accounts.by_sign_in(second.token) is None
    wall.t -= 10
    accounts.sign_out(second.token)  # ends every sign-in of alice's, and nobody else's
    assert accounts.by_sign_in(second.token) is None and accounts.by_sign_in(third.token) is None
    assert accounts.by_sign_in(bobs.token) is not None
    third = accounts.sign_in("alice", PASSWORD)
    assert third is not None and accounts.by_sign_in(third.token) is not None
    accounts.disable("alice")
    assert accounts.by_sign_in(third.token) is None
    assert accounts.sign_in("alice", PASSWORD) is None
    accounts.enable("alice")
    assert accounts.by_sign_in(third.token) is None  # ended for good
    assert accounts.sign_in("alice", PASSWORD) is not None


def test_a_new_password_ends_the_other_sign_ins(accounts: Accounts) -> None:
    alice, _ = accounts.add_user("alice", PASSWORD, admin=False)
    here, elsewhere = accounts.sign_in("alice", PASSWORD), accounts.sign_in("alice", PASSWORD)
    assert here is not None and elsewhere is not None
    keep = accounts.by_sign_in(here.token)
    assert keep is not None
    accounts.set_password(alice.id, "another password", keep_sign_in=keep.sign_in_hash)
    assert accounts.by_sign_in(here.token) is not None and accounts.by_sign_in(elsewhere.token) is None
    assert accounts.sign_in("alice", PASSWORD) is None and accounts.sign_in("alice", "another password")


def test_api_keys_work_until_they_expire_are_deleted_or_their_user_is_disabled(
    accounts: Accounts, wall: Wall, store: Store
) -> None:
    alice, _ = accounts.add_user("alice", PASSWORD, admin=False)
    bob, _ = accounts.add_user("bob", PASSWORD, admin=False)
    lasting = accounts.new_key(alice.id, "laptop", expires_in_days=None)
    brief = accounts.new_key(alice.id, "ci", expires_in_days=1)
    assert lasting.key.startswith(API_KEY_PREFIX) and len(lasting.key) > len(API_KEY_PREFIX) + 40
    caller = accounts.by_api_key(lasting.key)
    assert caller is not None and caller.user.id == alice.id and caller.sign_in_hash is None
    assert [k.last_used_at for k in accounts.keys(alice.id)] == [wall.t, None]
    assert accounts.by_api_key(lasting.key + "x") is None
    wall.t += 86_400
    assert accounts.by_api_key(brief.key) is None and accounts.by_api_key(lasting.key) is not None
    assert not accounts.delete_key(bob.id, lasting.record.id)
    keys = "\n".join(str(row) for row in store.database.fetch_all("SELECT * FROM api_keys", ()))
    assert lasting.key not in keys and brief.key not in keys
    accounts.disable("alice")
    assert accounts.by_api_key(lasting.key) is None
    accounts.enable("alice")
    assert accounts.delete_key(alice.id, lasting.record.id)
    assert accounts.by_api_key(lasting.key) is None


def test_failed_sign_ins_are_limited_per_key_within_the_window() -> None:
    clock = ManualClock()
    limiter = LoginLimiter(clock, max_failures=3, window_s=60)
    for _ in range(3):
        assert limiter.retry_after("name:alice", "ip:1") is None
        limiter.failed("name:alice", "ip:1")
        clock.t += 10
    assert limiter.retry_after("name:alice") == pytest.approx(30)  # the first failure leaves at t=60
    assert limiter.retry_after("name:bob", "ip:1") == pytest.approx(30)  # the address is held back too
    assert limiter.retry_after("name:bob", "ip:2") is None
    clock.t = 60
    assert limiter.retry_after("name:alice", "ip:1") is None
    limiter.failed("name:alice")
    assert limiter.retry_after("name:alice") is not None
    limiter.succeeded("name:alice")
    assert limiter.retry_after("name:alice") is None
