"""Which collections a search goes to when the request chose none: those that fit its question.

Deterministic, no model: each collection's profile counts, per stemmed term, the chunks it occurs in
(profile.py). The question's terms (with the search's own query) are scored against each
collection as a naive Bayes log-likelihood over those chunk frequencies (a term among a profile's
characteristic terms counting double), smoothed towards the
term's frequency over all collections (Jelinek-Mercer), so a word every collection uses alike moves none ahead
and a word only one collection uses moves it far ahead. A collection is searched when its fit is
within `GAP` of the best one's; the others are dropped. When nothing tells the collections apart
(every fit within `GAP`, no term, or a single profiled collection) every collection is searched, as
before routing existed. Collections without a profile are always searched.
"""

from __future__ import annotations

import json
import math
import sqlite3
from dataclasses import dataclass

from sleuth.core.words import QUESTION_WORDS
from sleuth.tools.local.profile import term_forms

# A collection is searched when its fit (a log-likelihood) is within this much of the best
# collection's: the question's words are then at most e**GAP times less likely in its chunks.
GAP = 2.5
# A term that makes a collection this much likelier than every other is named in its reason.
EVIDENCE = 1.5
# Linear smoothing towards the term's frequency over every collection: a collection that lacks a
# term costs the same whatever its size, so a small one (an upload) is not favoured or punished.
OWN_WEIGHT = 0.95
# A term among some collection's characteristic terms (its profile) says what the question is
# about ("SQLite" in "Is SQLite safe to use from several threads?") and counts this many times.
CHARACTERISTIC_WEIGHT = 2.0
# Terms that name a matched collection in its reason.
_REASON_TERMS = 4


@dataclass(frozen=True)
class CollectionFit:
    name: str
    fit: float
    searched: bool
    reason: str


@dataclass(frozen=True)
class Routing:
    fits: tuple[CollectionFit, ...]  # in the order of the candidates

    @property
    def searched(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fits if f.searched)

    @property
    def dropped(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fits if not f.searched)


def route_terms(text: str) -> dict[str, str]:
    """The terms of `text` routing weighs (stem -> the text's word): its content words, without a
    question's scaffolding."""
    return {term: word for term, word in term_forms(text).items() if word not in QUESTION_WORDS}


def route(conn: sqlite3.Connection, text: str, candidates: list[str]) -> Routing:
    """How well each of `candidates` (collection names) fits `text`, and which are searched."""
    sizes: dict[str, int] = {}
    ids: dict[int, str] = {}
    characteristic: set[str] = set()
    for row in conn.execute(
        "SELECT c.id, c.name, p.chunks, p.terms FROM collections c JOIN collection_profiles p ON p.collection_id = c.id"
    ):
        if row[1] in candidates and int(row[2]) > 0:
            sizes[row[1]] = int(row[2])
            ids[int(row[0])] = row[1]
            characteristic.update(term_forms(" ".join(json.loads(row[3]))))
    forms = route_terms(text)
    terms = sorted(forms)
    if len(sizes) < 2 or not terms:
        reason = "the only collection with a profile" if len(sizes) == 1 else "no profile to route by"
        return _everything(candidates, sizes, reason)
    counts: dict[str, dict[str, int]] = {}
    for start in range(0, len(terms), 500):
        batch = terms[start : start + 500]
        for term, collection_id, n in conn.execute(
            f"SELECT term, collection_id, chunks FROM collection_terms WHERE term IN ({','.join('?' * len(batch))})",
            batch,
        ):
            if collection_id in ids:
                counts.setdefault(term, {})[ids[collection_id]] = int(n)
    # Each term is evidence for the collections whose chunks use it most (a naive Bayes
    # log-likelihood over chunk frequencies, smoothed towards the term's frequency over every
    # collection); a word every collection uses alike moves no collection ahead.
    fit = dict.fromkeys(sizes, 0.0)
    evidence: dict[str, list[tuple[float, str]]] = {name: [] for name in sizes}
    everything = sum(sizes.values())
    for term, by_name in counts.items():
        weight = CHARACTERISTIC_WEIGHT if term in characteristic else 1.0
        background = sum(by_name.values()) / everything
        logs = {
            name: math.log(OWN_WEIGHT * by_name.get(name, 0) / size + (1 - OWN_WEIGHT) * background)
            for name, size in sizes.items()
        }
        for name, value in logs.items():
            fit[name] += weight * value
            lead = weight * (value - max(v for other, v in logs.items() if other != name))
            if lead >= EVIDENCE:
                evidence[name].append((-lead, forms[term]))
    best = max(fit.values())
    if all(best - value < GAP for value in fit.values()):
        return _everything(candidates, sizes, "nothing in the question tells the collections apart", fit)
    fits: list[CollectionFit] = []
    for name in candidates:
        if name not in sizes:
            fits.append(CollectionFit(name, 0.0, True, "no profile yet"))
            continue
        terms_named = ", ".join(term for _, term in sorted(evidence[name])[:_REASON_TERMS])
        if best - fit[name] < GAP:
            fits.append(
                CollectionFit(name, round(fit[name], 3), True, f"fits: {terms_named}" if terms_named else "fits")
            )
        else:
            fits.append(CollectionFit(name, round(fit[name], 3), False, "does not fit the question"))
    return Routing(tuple(fits))


def _everything(
    candidates: list[str], sizes: dict[str, int], reason: str, fit: dict[str, float] | None = None
) -> Routing:
    scores = fit or {}
    return Routing(
        tuple(
            CollectionFit(name, round(scores.get(name, 0.0), 3), True, reason if name in sizes else "no profile yet")
            for name in candidates
        )
    )
