"""Persistence of sessions, messages, runs, packets and reports: SQLite under `data_dir`, or PostgreSQL."""

from sleuth.core.urls import database_path
from sleuth.store.database import Database, DatabaseError
from sleuth.store.packet_writer import PacketWriter, StoredPacket
from sleuth.store.records import MessageRecord, PacketRow, RunRecord, SessionRecord
from sleuth.store.store import Store

__all__ = [
    "Database",
    "DatabaseError",
    "MessageRecord",
    "PacketRow",
    "PacketWriter",
    "RunRecord",
    "SessionRecord",
    "Store",
    "StoredPacket",
    "database_path",
]
