"""Password hashing: argon2id through pwdlib. Passwords are never stored, logged or echoed."""

from __future__ import annotations

from functools import cached_property

from pwdlib import PasswordHash
from pwdlib.hashers.argon2 import Argon2Hasher

MIN_CHARS = 8
# argon2 hashes whatever it is given; a cap keeps a sign-in request from costing more than a password's worth.
MAX_CHARS = 1024


class WeakPassword(ValueError):
    """The password cannot be used; the message says why (never what it was)."""


def check_password(password: str) -> None:
    if len(password) < MIN_CHARS:
        raise WeakPassword(f"a password needs at least {MIN_CHARS} characters")
    if len(password) > MAX_CHARS:
        raise WeakPassword(f"a password has at most {MAX_CHARS} characters")


class Passwords:
    """Hashes and checks passwords. `verify` of a user that does not exist spends the same time on a
    stand-in hash, so how long a sign-in takes does not say whether the name exists."""

    def __init__(self, hasher: Argon2Hasher | None = None) -> None:
        self._hash = PasswordHash((hasher or Argon2Hasher(),))

    @cached_property
    def _stand_in(self) -> str:
        return self._hash.hash("a password no account has")

    def hash(self, password: str) -> str:
        check_password(password)
        return self._hash.hash(password)

    def verify(self, password: str, stored: str | None) -> bool:
        if len(password) > MAX_CHARS:
            return False
        if stored is None:
            self._hash.verify(password, self._stand_in)
            return False
        return bool(self._hash.verify(password, stored))
