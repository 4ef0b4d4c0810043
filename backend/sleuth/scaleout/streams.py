"""A run's packets on a Redis Stream, one entry per committed packet.

Entry IDs are `0-(seq + 1)`. Redis wants IDs above 0-0 and increasing; with the time part fixed
at 0 the sequence part is the packet's seq plus one, so the order of IDs is the order of seqs,
and a client's `Last-Event-ID: s` is read with `XREAD ... 0-(s+1)`, which returns exactly the
entries after seq s (seq -1, "from the start", is 0-0). Nothing in the ID pretends to be a time,
and a missing seq shows as a jump in the sequence part.

Only committed packets are added (by the worker, after its commit), and `stop` only once the
run's outcome is stored, so a reader may show whatever it finds here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sleuth.core import heavy
from sleuth.store.records import PacketRow


def entry_id(seq: int) -> str:
    return f"0-{seq + 1}"


def seq_of(entry: str) -> int:
    return int(entry.split("-", 1)[1]) - 1


@dataclass(frozen=True)
class PacketStreams:
    redis: heavy.Redis
    ttl_s: float

    async def publish(self, key: str, rows: list[PacketRow]) -> None:
        """Add packets in seq order. A seq already there (a publisher that retried) is skipped."""
        pipe = self.redis.pipeline(transaction=False)
        for row in rows:
            pipe.xadd(key, {"type": row.type, "json": row.json}, id=entry_id(row.seq))
        results = await pipe.execute(raise_on_error=False)
        for result in results:
            if isinstance(result, heavy.ResponseError) and "equal or smaller" not in str(result):
                raise result

    async def expire(self, key: str) -> None:
        """The run has ended: keep its stream a while for late readers; replay is the store's after."""
        await self.redis.expire(key, max(1, int(self.ttl_s)))

    async def last(self, key: str) -> PacketRow | None:
        rows = self.rows(await self.redis.xrevrange(key, "+", "-", count=1))
        return rows[0] if rows else None

    @staticmethod
    def rows(entries: Any) -> list[PacketRow]:
        """Stream entries (the client decodes responses to str) as packet rows."""
        return [
            PacketRow(seq=seq_of(str(entry)), type=str(fields["type"]), json=str(fields["json"]))
            for entry, fields in entries
        ]
