"""The two stemmers of core/words.py: the offline model's folds spellings together, the claim
check's only strips common endings."""

from __future__ import annotations

import pytest

from sleuth.core.ids import new_id, new_run_id
from sleuth.core.words import light_stem, stem


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("descriptors", "descriptor"),
        ("lookups", "lookup"),
        ("serialise", "serialized"),
        ("serializes", "serialize"),
        ("deletion", "deleted"),
        ("insertions", "insert"),
        ("expression", "express"),
    ],
)
def test_the_offline_stemmer_folds_forms_together(a: str, b: str) -> None:
    assert stem(a) == stem(b)


def test_the_offline_stemmer_keeps_identifiers_and_short_words_whole() -> None:
    assert [stem(w) for w in ("__getattr__", "lru_cache", "os.path", "Map")] == [
        "__getattr__",
        "lru_cache",
        "os.path",
        "map",
    ]


def test_short_words_ending_in_ion_keep_their_meaning() -> None:
    # "session" is no "sess", "version" no "vers" and "mission" no "miss"
    assert [stem(w) for w in ("session", "version", "mission", "option")] == ["session", "version", "mission", "option"]


def test_the_claim_stemmer_strips_endings_only() -> None:
    assert [light_stem(w) for w in ("descriptors", "libraries", "running", "quickly")] == [
        "descriptor",
        "library",
        "runn",
        "quick",
    ]
    # a British spelling and a final "e" are not folded: the claim check tells them apart
    assert light_stem("serialise") != light_stem("serialize")
    assert [light_stem(w) for w in ("class", "_private", "2024s", "uses")] == ["class", "_private", "2024s", "uses"]


def test_ids_have_their_prefix_and_are_unique() -> None:
    ids = {new_run_id() for _ in range(100)}
    assert len(ids) == 100 and all(i.startswith("run_") and len(i) == 20 for i in ids)
    assert new_id("s").startswith("s_")
