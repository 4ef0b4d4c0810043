"""How a run is ended by anyone but its engine's own finish: a process that died, a start that
failed, a cancel before the engine began, an engine that raised.

Every such path appends the packets `closing` returns, so each of these runs still keeps the
protocol's promises (docs/protocol.md): it starts with `run_start` and ends with exactly one `stop`.
"""

from __future__ import annotations

from sleuth.stream.packets import Error, PacketObj, RunStart, Stop, StopReason


def unstarted_run_start(*, session_id: str, question: str, mode: str) -> RunStart:
    """The `run_start` of a run that ends before its engine started it: what was asked, and in
    which mode; no model was called and no source searched, so none is named."""
    return RunStart(session_id=session_id, question=question, mode=mode, models={}, time_budget_s=None, sources=[])


def closing(*, started: bool, run_start: RunStart, error: str | None, reason: StopReason) -> list[PacketObj]:
    """What the run still needs, in order: `run_start` unless a packet was sent already, an `error`
    (not recoverable) when there is a message, and the `stop`."""
    objs: list[PacketObj] = [] if started else [run_start]
    if error is not None:
        objs.append(Error(message=error, recoverable=False))
    objs.append(Stop(reason=reason))
    return objs
