"""Who may see and change which collection of the library.

A collection has an owner only when a user of `SLEUTH_AUTH=accounts` uploaded it. Without an owner
(the built-in reference, `sleuth index` and `SLEUTH_CORPUS` folders, uploads made without accounts or
before collections had owners) it is shared by every user, read-only but for administrators. With
an owner it is private to that user until an administrator shares it, read-only, with every user.
The built-in user of `none` and `token` modes (`Viewer` with no user id) sees and changes every one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

Visibility = Literal["everyone", "private", "shared"]


@dataclass(frozen=True)
class Viewer:
    """Who asks: a user of accounts (their id; `admin` for an administrator), or the built-in user."""

    user_id: str | None = None
    admin: bool = False

    @property
    def sees_everything(self) -> bool:
        return self.user_id is None


BUILT_IN = Viewer()  # `none`, `token`, the CLI and the server's own work: every collection


def visible_sql(viewer: Viewer, alias: str = "c") -> tuple[str, tuple[Any, ...]]:
    """SQL (starting with AND) keeping the collections (table alias `alias`) that `viewer` sees."""
    if viewer.sees_everything:
        return "", ()
    return f" AND ({alias}.owner_id IS NULL OR {alias}.shared = 1 OR {alias}.owner_id = ?)", (viewer.user_id,)


def sees(viewer: Viewer, owner_id: str | None, shared: bool) -> bool:
    """Whether `viewer` sees a collection owned by `owner_id` (None: no owner), shared or not."""
    return viewer.sees_everything or owner_id is None or shared or owner_id == viewer.user_id


def changes(viewer: Viewer, owner_id: str | None) -> bool:
    """Whether `viewer` may add documents to a collection owned by `owner_id`, or delete from it:
    its owner; for one without an owner, an administrator; the built-in user, any."""
    if viewer.sees_everything:
        return True
    return owner_id == viewer.user_id if owner_id is not None else viewer.admin


def visibility(owner_id: str | None, shared: bool) -> Visibility:
    """Who sees a collection: every user (no owner), its owner alone, or every user, shared by an administrator."""
    if owner_id is None:
        return "everyone"
    return "shared" if shared else "private"
