"""Which account a single sign-on is, in the store (SQLite, and PostgreSQL with
SLEUTH_TEST_DATABASE_URL): names made from the provider's claims, and a second sign-in of the same
new identity that loses the race to make its account."""

from __future__ import annotations

import pytest

from sleuth.accounts.oidc import Identity
from sleuth.accounts.service import Accounts, accounts_for
from sleuth.accounts.sso import SingleSignOn, SsoPolicy
from sleuth.config import Settings
from sleuth.store.accounts import AccountStore, UserRecord
from sleuth.store.store import Store
from support.accounts import quick_passwords

ISSUER = "https://id.example.org"


def identity(subject: str, username: str | None = None, email: str | None = None) -> Identity:
    return Identity(ISSUER, subject, email, email_verified=email is not None, username=username)


def sso(store: Store) -> tuple[SingleSignOn, Accounts]:
    accounts = accounts_for(store.accounts, Settings(), quick_passwords())
    return SingleSignOn(store.accounts, accounts, SsoPolicy()), accounts


@pytest.mark.parametrize(
    ("username", "email", "name"),
    [
        ("ada", None, "ada"),
        (None, "grace.hopper@example.org", "grace.hopper@example.org"),
        ("José García", None, "Jos-Garc-a"),
        ("--x", None, "x"),
        ("ÿÿÿ", None, "user"),
        ("a" * 100, None, "a" * 64),
    ],
)
def test_a_new_account_is_named_after_the_provider_s_claims(
    store: Store, username: str | None, email: str | None, name: str
) -> None:
    single_sign_on, _ = sso(store)
    assert single_sign_on.sign_in(identity("s", username, email)).user.name == name


def test_a_taken_name_gets_a_number(store: Store) -> None:
    single_sign_on, accounts = sso(store)
    accounts.add_user("ada", "a long enough password", admin=False)
    names = [single_sign_on.sign_in(identity(f"s{n}", "ada")).user.name for n in range(3)]
    assert names == ["ada-2", "ada-3", "ada-4"]


class LateStore(AccountStore):
    """Another sign-in of the same identity makes its account between this one's look-up and insert."""

    def user_by_oidc(self, issuer: str, subject: str) -> UserRecord | None:
        found = super().user_by_oidc(issuer, subject)
        if found is None and not getattr(self, "raced", False):
            self.raced = True
            SingleSignOn(AccountStore(self.database), accounts_for(self, Settings()), SsoPolicy()).sign_in(
                identity(subject, "ada-elsewhere")
            )
        return found


def test_the_identity_s_account_made_meanwhile_is_the_one_signed_in(store: Store) -> None:
    late = LateStore(store.database)
    signed = SingleSignOn(late, accounts_for(late, Settings(), quick_passwords()), SsoPolicy()).sign_in(
        identity("s", "ada")
    )
    assert signed.user.name == "ada-elsewhere"
    assert [user.name for user in late.users()] == ["ada-elsewhere"]
