"""Small plumbing every layer may import: clock, durations, ids, words, text rules, redaction, URLs."""
