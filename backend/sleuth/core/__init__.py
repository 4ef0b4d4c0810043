"""Small plumbing every layer may import: clock, durations, ids, words, redaction, URLs."""
