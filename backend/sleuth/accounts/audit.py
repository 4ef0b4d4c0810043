"""An administrator's reading of another user's research: recorded, then allowed.

The routes every user has keep answering 404 for another user's ids, an administrator's too; an
administrator reads someone's research only through `AdminReads`, which first writes who read whose
research, and what, to the audit table (`GET /api/admin/audit`) and to the server log. A read is
recorded when it is asked for, whether or not the session turns out to exist.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from sleuth.accounts.service import UnknownUser
from sleuth.core.ids import new_id
from sleuth.core.logs import audit_log
from sleuth.store.audit import AdminAction, AdminRead
from sleuth.store.store import Store


class AdminReads:
    def __init__(self, store: Store, *, wall: Callable[[], float] = time.time) -> None:
        self._store = store  # the server's own, unscoped view
        self._wall = wall

    def open(
        self, admin_id: str, admin_name: str, name: str, action: AdminAction, session_id: str | None = None
    ) -> Store:
        """The store as user `name` sees it, once this read is recorded. UnknownUser."""
        user = self._store.accounts.user_named(name)
        if user is None:
            raise UnknownUser(name)
        read = AdminRead(
            id=new_id("au"),
            at=self._wall(),
            admin_id=admin_id,
            admin_name=admin_name,
            user_id=user.id,
            user_name=user.name,
            action=action,
            session_id=session_id,
        )
        self._store.audit.add(read)  # durable before anything is read: a failed write reads nothing
        audit_log.info(
            "admin read",
            extra={"fields": {"admin": admin_name, "user": user.name, "action": action, "session_id": session_id}},
        )
        return self._store.owned_by(user.id)

    def recent(self, limit: int, offset: int = 0) -> list[AdminRead]:
        return self._store.audit.recent(limit, offset)
