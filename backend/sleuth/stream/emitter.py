"""The one packet emitter per run: assigns `seq`, fans packets out to sinks, ends with one `stop`;
and what the run's tools returned, handed to whoever keeps it for the document viewer."""

from __future__ import annotations

import logging
from collections.abc import Callable

from sleuth.stream.packets import Packet, PacketObj, Placement, Stop, StopReason
from sleuth.stream.results import ToolDocument

PacketSink = Callable[[Packet], None]
DocumentSink = Callable[[ToolDocument], None]

log = logging.getLogger(__name__)


class Emitter:
    """Numbers and delivers a run's packets. Sinks are called synchronously, in order.

    After `stop` nothing more is emitted: the protocol promises that `stop` is the last packet.
    """

    def __init__(
        self,
        run_id: str,
        sinks: list[PacketSink] | None = None,
        *,
        start_seq: int = 0,
        documents: DocumentSink | None = None,
    ) -> None:
        self.run_id = run_id
        self._sinks: list[PacketSink] = list(sinks or [])
        self._documents = documents
        self._seq = start_seq
        self._stop_reason: StopReason | None = None

    def add_sink(self, sink: PacketSink) -> None:
        """Also send every later packet to `sink` (the engine's own tally of what a run did)."""
        self._sinks.append(sink)

    @property
    def next_seq(self) -> int:
        return self._seq

    @property
    def stopped(self) -> bool:
        return self._stop_reason is not None

    @property
    def stop_reason(self) -> StopReason | None:
        return self._stop_reason

    def emit(self, placement: Placement, obj: PacketObj) -> Packet | None:
        """Send one packet. Returns None (and drops it) once the run has stopped."""
        if self._stop_reason is not None:
            log.debug("packet %s after stop dropped", obj.type)
            return None
        if isinstance(obj, Stop):
            self._stop_reason = obj.reason
        packet = Packet(seq=self._seq, run_id=self.run_id, placement=placement, obj=obj)
        self._seq += 1
        for sink in self._sinks:
            sink(packet)
        return packet

    def keep(self, document: ToolDocument) -> None:
        """Hand over what a tool returned as soon as it is read, so it opens in the viewer while
        the run goes on (the run's result carries it too)."""
        if self._documents is not None and self._stop_reason is None:
            self._documents(document)

    def stop(self, placement: Placement, reason: StopReason) -> Packet | None:
        """Emit the final `stop`, once; later calls are ignored."""
        return self.emit(placement, Stop(reason=reason))
