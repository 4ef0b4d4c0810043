"""What a store write can refuse, in the store's own words rather than a driver's.

A write that depends on a row checks for it in its own transaction, so a request racing another
(a message to a session being deleted) gets one of these instead of an integrity error. The API
answers `NotFound` with 404 and `Conflict` with 409 (api/errors.py).
"""

from __future__ import annotations


class NotFound(LookupError):
    """The row a write refers to is not there (any more)."""

    def __init__(self, kind: str, item_id: str) -> None:
        super().__init__(f"{kind} {item_id!r} not found")
        self.kind = kind
        self.item_id = item_id


class Conflict(Exception):
    """The current state refuses the write; the message says why, and it may succeed later."""


class RunInProgress(Conflict):
    """The session has a run that has not ended."""

    def __init__(self) -> None:
        super().__init__("this session has a run in progress; cancel it first")
