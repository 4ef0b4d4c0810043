"""Persistence of sessions, messages, runs, packets and reports: SQLite under `data_dir`, or PostgreSQL."""
