"""Whether a question holds anything searchable: words the model knows, or names it can look up.

The offline model's "knowledge of English" is the vocabulary of the Python language reference
that ships with CPython (a few thousand common English words). A question is unsearchable when
none of its content words is a known word, a name (capitalised, or with digits or `_ . -`), or
at least pronounceable; keyboard mashes like "asdkjh qwoeiu zxcmnb" fail all three.
"""

from __future__ import annotations

import re
from functools import cache

from sleuth.core.words import stem
from sleuth.llm.offline.text import STOPWORDS, content_words

try:
    from pydoc_data import topics as pydoc_topics

    _TOPICS: dict[str, str] = pydoc_topics.topics
except ImportError:  # a Python built without its docs: every word counts as unknown
    _TOPICS = {}

_VOWELS = "aeiouy"
_CONSONANT_RUN = re.compile(r"[b-df-hj-np-tv-z]{5,}")
_VOWEL_RUN = re.compile(r"[aeiou]{3,}")


@cache
def known_words() -> frozenset[str]:
    return frozenset(stem(word) for text in _TOPICS.values() for word in re.findall(r"[a-z]{3,}", text.lower()))


def _looks_like_name(word: str) -> bool:
    return word[:1].isupper() or any(ch.isdigit() or ch in "_.-" for ch in word)


def _pronounceable(word: str) -> bool:
    low = word.lower()
    return any(ch in _VOWELS for ch in low) and not _CONSONANT_RUN.search(low) and not _VOWEL_RUN.search(low)


def is_searchable_word(word: str) -> bool:
    if _looks_like_name(word) or stem(word.lower()) in known_words():
        return True
    # an unknown lowercase word may still be a real term ("kubernetes") if it reads like one
    return len(word) > 3 and _pronounceable(word) and not _keyboard_run(word.lower())


def _keyboard_run(word: str) -> bool:
    """Four letters in a row along one keyboard row ("asdf", "poiu"): typing, not a word."""
    rows = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
    for row in rows:
        for both in (row, row[::-1]):
            if any(both[i : i + 4] in word for i in range(len(both) - 3)):
                return True
    return False


def has_searchable_content(question: str) -> bool:
    if re.search(r"[^\W\d_a-zA-Z]", question):
        return True  # letters beyond ASCII: a language this model cannot judge, so it does not
    return any(is_searchable_word(word) for word in content_words(question))


def looks_english(question: str) -> bool:
    """Whether this English-only model may rephrase the question: ASCII letters, mostly known words."""
    words = re.findall(r"[^\W\d_]+", question)
    if any(not word.isascii() for word in words):
        return False
    plain = [w.lower() for w in words if len(w) > 1 and not w[:1].isupper()]
    known = [w for w in plain if w in STOPWORDS or stem(w) in known_words()]
    return not plain or len(known) >= len(plain) / 2
