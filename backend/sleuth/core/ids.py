"""Every id format, in one place: a prefix and 16 random hex digits.

`s_` session, `r_` run started by the server, `run_` run of the engine elsewhere (CLI, eval, test
kit), `m_` message, `rep_` report, `a_` audio, `u_` user, `k_` API key, `call_offline_` a tool call of
the offline model.
"""

from __future__ import annotations

import uuid


def new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:16]}"


def new_run_id() -> str:
    """The id of a run the engine makes outside the server."""
    return new_id("run")
