"""Users, sign-ins and API keys: what the CLI's `sleuth user` and the API's sign-in and key routes do.

Nothing here says whether a name exists: a wrong name and a wrong password fail the same way, in
the same time (`Passwords.verify`).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass

from sleuth.accounts.passwords import Passwords
from sleuth.accounts.tokens import csrf_token, new_api_key, new_token, token_hash
from sleuth.config import Settings
from sleuth.core.ids import new_id
from sleuth.store.accounts import AccountStore, ApiKeyRecord, Usage, UserRecord

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,63}")
EMAIL = re.compile(r"[^@\s]{1,64}@[^@\s.]+(\.[^@\s.]+)+")


class BadName(ValueError):
    """A user name that cannot be used; the message says why."""


class BadEmail(ValueError):
    """Not an e-mail address."""


class UnknownUser(LookupError):
    """No user has this name."""


def check_name(name: str) -> str:
    if not NAME.fullmatch(name):
        raise BadName("a user name is 1 to 64 letters, digits and . _ @ - (starting with a letter or digit)")
    return name


def _checked_email(email: str | None) -> str | None:
    if email is None:
        return None
    if len(email) > 254 or not EMAIL.fullmatch(email.strip()):
        raise BadEmail(f"{email!r} is not an e-mail address")
    return email.strip()


@dataclass(frozen=True)
class SignedIn:
    """A new browser sign-in: the token for the cookie (only its hash is kept) and its CSRF token."""

    user: UserRecord
    token: str
    csrf: str
    expires_at: float


@dataclass(frozen=True)
class Caller:
    """Who a request's sign-in or key belongs to."""

    user: UserRecord
    sign_in_hash: str | None = None  # the browser sign-in's, when it came with a cookie


@dataclass(frozen=True)
class NewKey:
    record: ApiKeyRecord
    key: str  # shown once


class Accounts:
    def __init__(
        self,
        store: AccountStore,
        passwords: Passwords,
        *,
        sign_in_s: float,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self._store = store
        self._passwords = passwords
        self._sign_in_s = sign_in_s
        self._wall = wall  # epoch seconds: expiries are stored, and compared across servers

    # -- users ----------------------------------------------------------------------------------

    def add_user(self, name: str, password: str, *, admin: bool, email: str | None = None) -> tuple[UserRecord, bool]:
        """The new user, and whether they are the first administrator (who takes over the data
        stored without an account). `email` links single sign-on with a verified e-mail to them.
        BadName, WeakPassword, NameTaken."""
        user = UserRecord(
            id=new_id("u"),
            name=check_name(name),
            is_admin=admin,
            disabled=False,
            created_at=self._wall(),
            password_hash=self._passwords.hash(password),
            email=_checked_email(email),
        )
        return user, self._store.add_user(user)

    def users(self) -> list[UserRecord]:
        return self._store.users()

    def usage(self) -> list[tuple[UserRecord, Usage]]:
        """Every user with what their research has used, in the order they were added."""
        used = self._store.usage()
        return [(user, used.get(user.id, Usage())) for user in self._store.users()]

    def named(self, name: str) -> UserRecord:
        user = self._store.user_named(name)
        if user is None:
            raise UnknownUser(name)
        return user

    def disable(self, name: str) -> None:
        """From now on the user's sign-ins and keys are refused."""
        self._store.set_disabled(self.named(name).id, True)

    def enable(self, name: str) -> None:
        self._store.set_disabled(self.named(name).id, False)

    def verify_password(self, user_id: str, password: str) -> bool:
        user = self._store.user(user_id)
        return self._passwords.verify(password, user.password_hash if user else None)

    def set_password(self, user_id: str, password: str, *, keep_sign_in: str | None = None) -> None:
        """The user's other sign-ins end (all of them, but `keep_sign_in`'s hash). WeakPassword."""
        self._store.set_password_hash(user_id, self._passwords.hash(password), keep_session=keep_sign_in)

    # -- sign-ins -------------------------------------------------------------------------------

    def sign_in(self, name: str, password: str) -> SignedIn | None:
        """None for a wrong name, a wrong password or a disabled user alike."""
        user = self._store.user_named(name) if NAME.fullmatch(name) else None
        right = self._passwords.verify(password, user.password_hash if user else None)
        if user is None or not right or user.disabled:
            return None
        return self.start_sign_in(user)

    def start_sign_in(self, user: UserRecord) -> SignedIn:
        """A new browser sign-in of a user whose identity is proven (a password, single sign-on)."""
        token, now = new_token(), self._wall()
        expires_at = now + self._sign_in_s
        self._store.add_sign_in(token_hash(token), user.id, created_at=now, expires_at=expires_at)
        return SignedIn(user, token, csrf_token(token), expires_at)

    def by_sign_in(self, token: str) -> Caller | None:
        """The caller of a sign-in cookie; None if it is unknown, ended, expired or its user disabled."""
        hashed = token_hash(token)
        found = self._store.sign_in(hashed)
        if found is None or found.user.disabled or (found.expires_at is not None and found.expires_at <= self._wall()):
            return None
        return Caller(found.user, hashed)

    def sign_out(self, token: str) -> None:
        self._store.end_sign_ins(token_hash(token))

    # -- API keys -------------------------------------------------------------------------------

    def by_api_key(self, key: str) -> Caller | None:
        found = self._store.api_key(token_hash(key))
        now = self._wall()
        if found is None or found.user.disabled or (found.expires_at is not None and found.expires_at <= now):
            return None
        assert found.key_id is not None
        self._store.key_used(found.key_id, now)
        return Caller(found.user)

    def new_key(self, user_id: str, name: str, *, expires_in_days: float | None) -> NewKey:
        now = self._wall()
        expires_at = None if expires_in_days is None else now + expires_in_days * 86_400
        record = ApiKeyRecord(new_id("k"), user_id, name, created_at=now, expires_at=expires_at, last_used_at=None)
        key = new_api_key()
        self._store.add_api_key(record, token_hash(key))
        return NewKey(record, key)

    def keys(self, user_id: str) -> list[ApiKeyRecord]:
        return self._store.api_keys(user_id)

    def delete_key(self, user_id: str, key_id: str) -> bool:
        return self._store.delete_api_key(user_id, key_id)


def accounts_for(store: AccountStore, settings: Settings, passwords: Passwords | None = None) -> Accounts:
    """The accounts of a store, with the settings' sign-in lifetime."""
    return Accounts(store, passwords or Passwords(), sign_in_s=settings.auth_session_hours * 3600)
