"""Rows of accounts: users, their sign-ins (browser sessions) and their API keys.

Only hashes of sign-in tokens and keys are stored; what they hash and how is `sleuth.accounts`'.
Times are epoch seconds, given by the caller (its clock decides what "now" is).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sleuth.store.database import Database


@dataclass(frozen=True)
class UserRecord:
    id: str
    name: str
    is_admin: bool
    disabled: bool
    created_at: float
    password_hash: str | None = None
    email: str | None = None
    oidc_issuer: str | None = None  # with oidc_subject: the identity provider's account it is linked to
    oidc_subject: str | None = None

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> UserRecord:
        return cls(
            id=row["id"],
            name=row["name"],
            is_admin=bool(row["is_admin"]),
            disabled=bool(row["disabled"]),
            created_at=float(row["created_at"]),
            password_hash=row["password_hash"],
            email=row["email"],
            oidc_issuer=row["oidc_issuer"],
            oidc_subject=row["oidc_subject"],
        )


@dataclass(frozen=True)
class ApiKeyRecord:
    id: str
    user_id: str
    name: str
    created_at: float
    expires_at: float | None
    last_used_at: float | None

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> ApiKeyRecord:
        return cls(
            id=row["id"],
            user_id=row["user_id"],
            name=row["name"],
            created_at=float(row["created_at"]),
            expires_at=None if row["expires_at"] is None else float(row["expires_at"]),
            last_used_at=None if row["last_used_at"] is None else float(row["last_used_at"]),
        )


@dataclass(frozen=True)
class Credential:
    """Who a sign-in token or key belongs to, and until when it holds (None: no expiry)."""

    user: UserRecord
    expires_at: float | None
    key_id: str | None = None  # an API key's id; None for a browser sign-in


@dataclass(frozen=True)
class Usage:
    """What a user's research has used: sessions, runs, and their reports' tokens and cost."""

    sessions: int = 0
    runs: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0


class NameTaken(Exception):
    """A user with this name exists."""


class IdentityTaken(Exception):
    """A user is linked to this single sign-on identity (issuer, subject) already."""


class AccountStore:
    def __init__(self, database: Database) -> None:
        self.database = database

    # -- users --------------------------------------------------------------------------------

    def add_user(self, user: UserRecord) -> bool:
        """Insert the user; NameTaken if the name is in use, IdentityTaken if another user is linked to
        its single sign-on identity. True when this is the first administrator: the sessions of the
        built-in user (no owner) become theirs, in the same transaction, so switching from
        SLEUTH_AUTH=none to accounts keeps them."""
        with self.database.transaction() as tx:
            if tx.fetch_one("SELECT id FROM users WHERE name = ?", (user.name,)) is not None:
                raise NameTaken(user.name)
            if user.oidc_subject is not None and tx.fetch_one(
                "SELECT id FROM users WHERE oidc_issuer = ? AND oidc_subject = ?", (user.oidc_issuer, user.oidc_subject)
            ):
                raise IdentityTaken(user.oidc_subject)
            first_admin = user.is_admin and tx.fetch_one("SELECT id FROM users WHERE is_admin = 1", ()) is None
            tx.execute(
                "INSERT INTO users (id, name, password_hash, is_admin, disabled, created_at, email, oidc_issuer,"
                " oidc_subject) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    user.id,
                    user.name,
                    user.password_hash,
                    int(user.is_admin),
                    int(user.disabled),
                    user.created_at,
                    user.email,
                    user.oidc_issuer,
                    user.oidc_subject,
                ),
            )
            if first_admin:
                tx.execute("UPDATE sessions SET owner_id = ? WHERE owner_id IS NULL", (user.id,))
        return first_admin

    def user_by_oidc(self, issuer: str, subject: str) -> UserRecord | None:
        row = self.database.fetch_one(
            "SELECT * FROM users WHERE oidc_issuer = ? AND oidc_subject = ?", (issuer, subject)
        )
        return UserRecord.from_row(row) if row else None

    def users_with_email(self, email: str) -> list[UserRecord]:
        """Users whose e-mail is `email`, whatever its case."""
        rows = self.database.fetch_all("SELECT * FROM users WHERE LOWER(email) = ? ORDER BY rowid", (email.lower(),))
        return [UserRecord.from_row(row) for row in rows]

    def link_oidc(self, user_id: str, issuer: str, subject: str) -> bool:
        """Link the user to a provider's account, unless they are linked to one already (False)."""
        with self.database.transaction() as tx:
            found = tx.fetch_one("SELECT oidc_subject FROM users WHERE id = ?", (user_id,))
            if found is None or found["oidc_subject"] is not None:
                return False
            tx.execute("UPDATE users SET oidc_issuer = ?, oidc_subject = ? WHERE id = ?", (issuer, subject, user_id))
        return True

    def make_admin(self, user_id: str) -> None:
        """The user becomes an administrator; the first one takes over what was stored without an
        account, as in `add_user`."""
        with self.database.transaction() as tx:
            first_admin = tx.fetch_one("SELECT id FROM users WHERE is_admin = 1", ()) is None
            tx.execute("UPDATE users SET is_admin = 1 WHERE id = ?", (user_id,))
            if first_admin:
                tx.execute("UPDATE sessions SET owner_id = ? WHERE owner_id IS NULL", (user_id,))

    def user_named(self, name: str) -> UserRecord | None:
        row = self.database.fetch_one("SELECT * FROM users WHERE name = ?", (name,))
        return UserRecord.from_row(row) if row else None

    def user(self, user_id: str) -> UserRecord | None:
        row = self.database.fetch_one("SELECT * FROM users WHERE id = ?", (user_id,))
        return UserRecord.from_row(row) if row else None

    def users(self) -> list[UserRecord]:
        return [UserRecord.from_row(row) for row in self.database.fetch_all("SELECT * FROM users ORDER BY rowid", ())]

    def set_disabled(self, user_id: str, disabled: bool) -> None:
        """A disabled user's sign-ins end with it (their keys stop at the next request: they are
        checked against the user each time)."""
        with self.database.transaction() as tx:
            tx.execute("UPDATE users SET disabled = ? WHERE id = ?", (int(disabled), user_id))
            if disabled:
                tx.execute("UPDATE auth_sessions SET revoked = 1 WHERE user_id = ?", (user_id,))

    def set_password_hash(self, user_id: str, password_hash: str, *, keep_session: str | None = None) -> None:
        """The new password ends every sign-in of the user but `keep_session` (a token hash: the one
        that changed it)."""
        with self.database.transaction() as tx:
            tx.execute("UPDATE users SET password_hash = ? WHERE id = ?", (password_hash, user_id))
            tx.execute(
                "UPDATE auth_sessions SET revoked = 1 WHERE user_id = ? AND token_hash != ?",
                (user_id, keep_session or ""),
            )

    def usage(self) -> dict[str | None, Usage]:
        """Each owner's usage (None: the built-in user's, stored without an account)."""
        sessions = self.database.fetch_all("SELECT owner_id, COUNT(*) AS n FROM sessions GROUP BY owner_id", ())
        runs = self.database.fetch_all(
            "SELECT sessions.owner_id, COUNT(*) AS n FROM runs JOIN sessions ON sessions.id = runs.session_id"
            " GROUP BY sessions.owner_id",
            (),
        )
        spent = self.database.fetch_all(
            "SELECT sessions.owner_id, SUM(reports.input_tokens) AS input_tokens,"
            " SUM(reports.output_tokens) AS output_tokens, SUM(reports.cost_usd) AS cost_usd"
            " FROM reports JOIN sessions ON sessions.id = reports.session_id GROUP BY sessions.owner_id",
            (),
        )
        found: dict[str | None, dict[str, Any]] = {}
        for row in sessions:
            found.setdefault(row["owner_id"], {})["sessions"] = int(row["n"])
        for row in runs:
            found.setdefault(row["owner_id"], {})["runs"] = int(row["n"])
        for row in spent:
            found.setdefault(row["owner_id"], {}).update(
                input_tokens=int(row["input_tokens"] or 0),
                output_tokens=int(row["output_tokens"] or 0),
                cost_usd=float(row["cost_usd"] or 0.0),
            )
        return {owner: Usage(**values) for owner, values in found.items()}

    # -- browser sign-ins -----------------------------------------------------------------------

    def add_sign_in(self, token_hash: str, user_id: str, *, created_at: float, expires_at: float) -> None:
        """Store a sign-in; those that have expired go meanwhile (they would never be valid again)."""
        with self.database.transaction() as tx:
            tx.execute("DELETE FROM auth_sessions WHERE expires_at < ?", (created_at,))
            tx.execute(
                "INSERT INTO auth_sessions (token_hash, user_id, created_at, expires_at) VALUES (?, ?, ?, ?)",
                (token_hash, user_id, created_at, expires_at),
            )

    def sign_in(self, token_hash: str) -> Credential | None:
        """The sign-in's user and expiry; None if there is none or it was ended."""
        row = self.database.fetch_one(
            "SELECT users.*, auth_sessions.expires_at AS until FROM auth_sessions"
            " JOIN users ON users.id = auth_sessions.user_id"
            " WHERE auth_sessions.token_hash = ? AND auth_sessions.revoked = 0",
            (token_hash,),
        )
        return Credential(UserRecord.from_row(row), float(row["until"])) if row else None

    def end_sign_ins(self, token_hash: str) -> None:
        """Signing out ends every browser sign-in of the user, not only this one: whoever signs out
        because a device was lost or shared must not have to find that device first."""
        self.database.execute(
            "UPDATE auth_sessions SET revoked = 1"
            " WHERE user_id = (SELECT user_id FROM auth_sessions WHERE token_hash = ?)",
            (token_hash,),
        )

    # -- API keys -------------------------------------------------------------------------------

    def add_api_key(self, key: ApiKeyRecord, key_hash: str) -> None:
        self.database.execute(
            "INSERT INTO api_keys (id, user_id, name, key_hash, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)",
            (key.id, key.user_id, key.name, key_hash, key.created_at, key.expires_at),
        )

    def api_keys(self, user_id: str) -> list[ApiKeyRecord]:
        rows = self.database.fetch_all("SELECT * FROM api_keys WHERE user_id = ? ORDER BY rowid", (user_id,))
        return [ApiKeyRecord.from_row(row) for row in rows]

    def delete_api_key(self, user_id: str, key_id: str) -> bool:
        """False when the user has no key with this id (another user's included)."""
        with self.database.transaction() as tx:
            found = tx.fetch_one("SELECT id FROM api_keys WHERE id = ? AND user_id = ?", (key_id, user_id))
            if found is not None:
                tx.execute("DELETE FROM api_keys WHERE id = ?", (key_id,))
        return found is not None

    def api_key(self, key_hash: str) -> Credential | None:
        row = self.database.fetch_one(
            "SELECT users.*, api_keys.expires_at AS until, api_keys.id AS key_id FROM api_keys"
            " JOIN users ON users.id = api_keys.user_id WHERE api_keys.key_hash = ?",
            (key_hash,),
        )
        if row is None:
            return None
        until = None if row["until"] is None else float(row["until"])
        return Credential(UserRecord.from_row(row), until, key_id=row["key_id"])

    def key_used(self, key_id: str, when: float) -> None:
        self.database.execute("UPDATE api_keys SET last_used_at = ? WHERE id = ?", (when, key_id))
