"""Free text (from an LLM or a person) to a safe FTS5 query.

Every term is quoted, so FTS5 syntax in the input (quotes, AND/OR/NOT/NEAR, `*`, `^`, `:`,
parentheses, `-`) is never interpreted; terms are OR-ed so a long question still matches
passages that contain only some of its words, and bm25 ranks passages with more (and rarer)
terms first. An identifier such as `subprocess.run` or `lru_cache` also counts as a phrase of its
parts: the tokenizer splits it, and without the phrase a page that says "run" and "subprocess"
far apart (IDLE's "run ... without a subprocess") ranks with the page that documents it. So does
each pair of adjacent words: a passage on the "global interpreter lock" outranks one on a "global
import lock", so the page that names the question's words together comes before pages that only
share them one by one.
"""

from __future__ import annotations

import re

from sleuth.core.words import FUNCTION_WORDS

MAX_TERMS = 32
_MAX_TERM_CHARS = 64

# Split exactly where the unicode61 tokenizer splits (letters and digits are kept; `_` separates),
# so a quoted term is always a single token.
_TERM = re.compile(r"[^\W_]+")

# Dotted or snake_case names: the tokenizer splits them at `.` and `_`.
_IDENTIFIER = re.compile(r"[^\W_]+(?:[._]+[^\W_]+)+")

# Function words match almost every passage: they add work and noise, not ranking signal.
STOPWORDS = FUNCTION_WORDS


def terms(text: str) -> list[str]:
    """The distinct search terms of `text`, in order; stopwords dropped unless nothing else is left."""
    words = [w.lower() for w in _TERM.findall(text) if len(w) <= _MAX_TERM_CHARS]
    kept = [w for w in words if w not in STOPWORDS] or words
    return list(dict.fromkeys(kept))[:MAX_TERMS]


def phrases(text: str) -> list[str]:
    """The identifiers of `text` as phrases of their tokens ("subprocess.run" -> "subprocess run"),
    then each pair of adjacent content words ("global interpreter", "interpreter lock")."""
    found = [" ".join(_TERM.findall(name.lower())) for name in _IDENTIFIER.findall(text)]
    words = [w.lower() for w in _TERM.findall(text) if len(w) <= _MAX_TERM_CHARS]
    content = [(a, b) for a, b in zip(words, words[1:], strict=False) if a not in STOPWORDS and b not in STOPWORDS]
    pairs = [f"{a} {b}" for a, b in content if a != b]
    return list(dict.fromkeys(p for p in [*found, *pairs] if len(p) <= _MAX_TERM_CHARS))


def fts_query(text: str) -> str | None:
    """An FTS5 MATCH expression for `text`, or None when it has no searchable term."""
    found = terms(text)
    if not found:
        return None
    return " OR ".join(f'"{term}"' for term in [*found, *phrases(text)][:MAX_TERMS])
