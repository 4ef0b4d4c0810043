"""Local document corpus: a persistent SQLite FTS5 index, the built-in Python reference, `sleuth index`."""
