"""Accounts for tests: passwords hashed with argon2id at its lowest cost (the real cost is seconds
of CPU per test on a loaded machine, and what is tested is the same)."""

from __future__ import annotations

from pwdlib.hashers.argon2 import Argon2Hasher

from sleuth.accounts.passwords import Passwords


def quick_passwords() -> Passwords:
    return Passwords(Argon2Hasher(time_cost=1, memory_cost=1024, parallelism=1))
