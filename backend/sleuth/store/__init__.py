"""Persistence: SQLite (WAL) under `data_dir` for sessions, messages, runs, packets and reports."""

from sleuth.store.db import database_path
from sleuth.store.packet_writer import PacketWriter, StoredPacket
from sleuth.store.records import MessageRecord, PacketRow, RunRecord, SessionRecord
from sleuth.store.store import Store

__all__ = [
    "MessageRecord",
    "PacketRow",
    "PacketWriter",
    "RunRecord",
    "SessionRecord",
    "Store",
    "StoredPacket",
    "database_path",
]
