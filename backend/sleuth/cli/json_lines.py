"""`sleuth research --json`'s output: one packet per line on a stream, flushed once per event-loop turn."""

from __future__ import annotations

import asyncio
from typing import TextIO

from sleuth.stream.packets import Packet


class JsonLines:
    """Writes each packet as a JSON line and flushes once per event-loop turn, not once per packet:
    packets emitted together (a burst of the report's deltas, the packets after its last token) cost
    the run one write to the pipe, and a reader one wake-up. A run's `stop` is flushed at once."""

    def __init__(self, out: TextIO) -> None:
        self._out = out
        self._flush_due = False

    def __call__(self, packet: Packet) -> None:
        self._out.write(packet.model_dump_json() + "\n")
        if packet.obj.type == "stop":
            self._flush()
            return
        if self._flush_due:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # emitted outside a loop: nothing would flush it later
            self._flush()
            return
        self._flush_due = True
        loop.call_soon(self._flush)

    def _flush(self) -> None:
        self._flush_due = False
        self._out.flush()
