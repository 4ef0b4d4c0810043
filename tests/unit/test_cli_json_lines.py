"""`sleuth research --json` writes every packet in order and flushes per event-loop turn, `stop` at once."""

from __future__ import annotations

import asyncio
import io
import json

from sleuth.cli.json_lines import JsonLines
from sleuth.stream.packets import MessageDelta, Packet, Placement, Stop


class CountingOut(io.StringIO):
    def __init__(self) -> None:
        super().__init__()
        self.flushed: list[str] = []  # what had been written at each flush

    def flush(self) -> None:
        self.flushed.append(self.getvalue())


def _packet(seq: int, obj: MessageDelta | Stop) -> Packet:
    return Packet(seq=seq, run_id="r", placement=Placement(turn_index=0), obj=obj)


async def test_a_burst_of_packets_is_flushed_once_and_stop_at_once() -> None:
    out = CountingOut()
    sink = JsonLines(out)
    for seq in range(5):
        sink(_packet(seq, MessageDelta(content=f"part {seq} ")))
    assert out.flushed == []  # not one flush per packet
    await asyncio.sleep(0)  # the loop's next turn
    assert len(out.flushed) == 1 and out.flushed[0].count("\n") == 5
    sink(_packet(5, MessageDelta(content="last")))
    sink(_packet(6, Stop(reason="completed")))
    assert len(out.flushed) == 2 and out.flushed[-1].endswith('"reason":"completed"}}\n')
    await asyncio.sleep(0)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [line["seq"] for line in lines] == list(range(7))


def test_outside_an_event_loop_each_packet_is_flushed() -> None:
    out = CountingOut()
    JsonLines(out)(_packet(0, Stop(reason="completed")))
    JsonLines(out)(_packet(1, MessageDelta(content="x")))
    assert len(out.flushed) == 2
