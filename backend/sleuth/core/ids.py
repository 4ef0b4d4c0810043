"""Readable, prefixed random ids (`s_` session, `r_` run, `m_` message; reports use the engine's `rep_`)."""

from __future__ import annotations

import uuid


def new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:16]}"
