"""Who a single sign-on is: the account linked to the provider's (issuer, subject); else, on the
first sign-in, the account whose e-mail the provider says is verified (linked from then on); else a
new account. The server's rules apply to every sign-in: allowed e-mail domains, administrators'
e-mails, disabled accounts.
"""

from __future__ import annotations

import re
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass

from sleuth.accounts.oidc import Identity
from sleuth.accounts.service import NAME, Accounts, SignedIn
from sleuth.config import Settings
from sleuth.core.ids import new_id
from sleuth.store.accounts import AccountStore, IdentityTaken, NameTaken, UserRecord

NOT_NAME_CHARS = re.compile(r"[^A-Za-z0-9._@-]+")
NAME_TRIES = 20


class SsoRefused(Exception):
    """This identity may not sign in here; the message says why, to the person it belongs to, and
    `code` says it in a word a browser can be sent back to the sign-in page with (no name or address
    in it)."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


@dataclass(frozen=True)
class SsoPolicy:
    allowed_domains: frozenset[str] = frozenset()  # empty: any
    admin_emails: frozenset[str] = frozenset()

    @classmethod
    def of(cls, settings: Settings) -> SsoPolicy:
        return cls(frozenset(settings.oidc_allowed_domain_list), frozenset(settings.oidc_admin_email_list))


class SingleSignOn:
    def __init__(
        self,
        store: AccountStore,
        accounts: Accounts,
        policy: SsoPolicy,
        *,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self._store = store
        self._accounts = accounts
        self._policy = policy
        self._wall = wall

    def sign_in(self, identity: Identity) -> SignedIn:
        """A browser sign-in for the identity's account (made or linked on its first sign-in); SsoRefused."""
        verified = identity.email.lower() if identity.email and identity.email_verified else None
        self._check_domain(identity, verified)
        user = self._store.user_by_oidc(identity.issuer, identity.subject) or self._by_email(identity, verified)
        if user is None:
            user = self._new_user(identity, verified)
        if user.disabled:
            raise SsoRefused("this account is disabled; ask an administrator", "disabled")
        if verified in self._policy.admin_emails and not user.is_admin:
            self._store.make_admin(user.id)
        return self._accounts.start_sign_in(user)

    def _check_domain(self, identity: Identity, verified: str | None) -> None:
        if not self._policy.allowed_domains:
            return
        if verified is None:
            raise SsoRefused(
                "this server admits only some e-mail domains, and the provider did not confirm a verified e-mail "
                "address for this account",
                "email_not_verified",
            )
        if verified.rpartition("@")[2] not in self._policy.allowed_domains:
            raise SsoRefused(
                f"e-mail addresses at {verified.rpartition('@')[2]} may not sign in to this server",
                "domain_not_allowed",
            )

    def _by_email(self, identity: Identity, verified: str | None) -> UserRecord | None:
        """The existing account with this e-mail, linked to the identity now; None when there is none.
        An address the provider does not call verified takes over nothing: whoever controls the
        provider account could have typed anyone's address."""
        if identity.email is None:
            return None
        same = self._store.users_with_email(identity.email)
        if not same:
            return None
        if verified is None:
            raise SsoRefused(
                "an account with this e-mail address exists, but the provider does not say the address is "
                "verified, so it is not linked; verify it at the provider or ask an administrator",
                "email_taken_unverified",
            )
        user = same[0]
        if not self._store.link_oidc(user.id, identity.issuer, identity.subject):
            raise SsoRefused(
                "the account with this e-mail address is linked to another single sign-on identity", "already_linked"
            )
        return user

    def _new_user(self, identity: Identity, verified: str | None) -> UserRecord:
        base = _name_base(identity)
        for attempt in range(NAME_TRIES):
            name = base if attempt == 0 else f"{base[:56]}-{attempt + 1 if attempt < 10 else secrets.token_hex(3)}"
            if self._store.user_named(name) is not None:
                continue
            user = UserRecord(
                id=new_id("u"),
                name=name,
                is_admin=verified in self._policy.admin_emails,
                disabled=False,
                created_at=self._wall(),
                email=verified,
                oidc_issuer=identity.issuer,
                oidc_subject=identity.subject,
            )
            try:
                self._store.add_user(user)
            except NameTaken:  # taken meanwhile: the next one
                continue
            except IdentityTaken:  # the same identity's other sign-in made it meanwhile
                made = self._store.user_by_oidc(identity.issuer, identity.subject)
                if made is None:
                    raise
                return made
            return user
        raise SsoRefused("no free user name was found for this account; ask an administrator", "no_free_name")


def _name_base(identity: Identity) -> str:
    """A user name from preferred_username, else the e-mail, made to fit `NAME`."""
    wanted = identity.username or identity.email or "user"
    name = NOT_NAME_CHARS.sub("-", wanted).lstrip("._@-")[:64]
    return name if NAME.fullmatch(name) else "user"
