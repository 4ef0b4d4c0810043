"""Whether a report's checked, cited passages are about the question asked and about each plan step.

Counts of sources and verified citations say a report is well sourced, not that it answers: a
corpus without the answer still yields a report whose every citation checks out, about something
else. This measures what the confidence needs instead: the share of a text's subject words (the
question's, or a plan step's) that the report's cited sentences contain, counting only sentences the
claim check did not flag, and whether the names the question asks about (`functools.lru_cache`)
appear in them at all. Same words and stemming as the claim check.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sleuth.core.markdown import blocks
from sleuth.core.words import QUESTION_WORDS, STEP_WORDS
from sleuth.research.report.sentences import CitedSentence, cited_sentences, key_words
from sleuth.stream.results import ClaimVerdict

# A question word that is an identifier: dotted, snake_case or dunder. Such a name is what the
# question is about; prose that never names it answers some other question.
_NAME = re.compile(r"[a-z_]\w*(?:\.\w+)+|\w*_\w*")
# A question word in at least this share of the titles a run saw ("SQLite" across SQLite's
# documentation) tells no page apart: a title that holds it is not thereby about the question.
COMMON_TITLE_SHARE = 0.25
# A page is titled for the question when at least this share of its title's subject words are the
# question's.
TITLED_FOR_SHARE = 0.75
# Both spellings: the scaffolding lists are written as words, the matcher compares stems.
_QUESTION_SCAFFOLD = QUESTION_WORDS | frozenset(key_words(" ".join(QUESTION_WORDS)))
_STEP_SCAFFOLD = _QUESTION_SCAFFOLD | STEP_WORDS | frozenset(key_words(" ".join(STEP_WORDS)))


@dataclass(frozen=True)
class Coverage:
    share: float  # of the text's subject words found in the checked cited sentences (0..1)
    names_asked: int  # identifiers the text names
    names_found: int  # of those, how many the cited sentences name
    words_asked: int = 0  # subject words the share is taken of


def _variants(word: str) -> set[str]:
    """A word and, for a dotted name, its last part: `functools.lru_cache` is named by `lru_cache`."""
    return {word, word.rsplit(".", 1)[-1]} if "." in word else {word}


def checked_claims(markdown: str, verdicts: Sequence[ClaimVerdict] = ()) -> list[CitedSentence]:
    """The cited sentences of `markdown` that the claim check did not flag, with their markers,
    every sentence of a passage included: the first is often the one that names the subject."""
    flagged = {verdict.sentence for verdict in verdicts if not verdict.supported}
    return [claim for claim in cited_sentences(markdown) if claim.sentence not in flagged]


def checked_sentences(markdown: str, verdicts: Sequence[ClaimVerdict] = ()) -> list[str]:
    """The cited sentences of `markdown` that the claim check did not flag."""
    return [claim.sentence for claim in checked_claims(markdown, verdicts)]


def opens_with_a_cited_answer(markdown: str, verdicts: Sequence[ClaimVerdict] = ()) -> bool | None:
    """Whether the report's first paragraph (headings aside) holds a cited sentence the claim check
    did not flag; None for a report with no paragraph. A report that opens on anything else (a note
    that the sources do not answer the question directly, a restatement of the question) leaves the
    reader to assemble the answer from pages that only touch it."""
    first = next((text for kind, text in blocks(markdown) if kind != "heading"), None)
    if first is None:
        return None
    return bool(checked_claims(first, verdicts))


def _title_words(title: str) -> set[str]:
    """A title's words, stemmed and as written: "Datatypes" holds "type" only before stemming."""
    return set(key_words(title)) | set(re.findall(r"[a-z][a-z0-9_]+", title.lower()))


def _subject_variants(word: str) -> set[str]:
    """A question word and, for a dotted name, its parts: `functools.lru_cache` is about `functools`."""
    return {word, *(stem for part in word.split(".") for stem in key_words(part))} if "." in word else {word}


def _names(title: set[str], word: str) -> bool:
    """Whether a title names `word`: the same word, or one holding the other ("datatypes", "type")."""
    return any(word == t or (len(word) >= 4 and word in t) or (len(t) >= 4 and t in word) for t in title)


def on_subject_share(
    question: str, claims: Sequence[CitedSentence], titles: Mapping[int, str], seen_titles: Sequence[str]
) -> float | None:
    """Share of `claims` that cite a source whose title names a subject word of `question` that few
    of `seen_titles` name. A report drawn from pages titled for something else ("Compound
    statements" for a question on closing generators) may answer another question. None when no
    claim or no question word tells pages apart."""
    distinctive = _distinctive(question, [_title_words(title) for title in seen_titles])
    if not claims or not distinctive:
        return None
    on = {n for n, title in titles.items() if any(_names(_title_words(title), word) for word in distinctive)}
    return sum(1 for claim in claims if set(claim.numbers) & on) / len(claims)


def _asked(question: str) -> set[str]:
    """The question's subject words, and a dotted name's parts."""
    return {
        variant
        for word in dict.fromkeys(key_words(question))
        if word not in _QUESTION_SCAFFOLD
        for variant in _subject_variants(word)
    }


def _distinctive(question: str, seen: list[set[str]]) -> set[str]:
    """The question's subject words that fewer than COMMON_TITLE_SHARE of the titles the run saw
    name: the words that tell a page on the question from the rest."""
    asked = _asked(question)
    return {word for word in asked if sum(_names(t, word) for t in seen) < COMMON_TITLE_SHARE * len(seen)}


def uncited_subject_title(question: str, cited_titles: Sequence[str], seen_titles: Sequence[str]) -> str | None:
    """The title of a page the run found but did not cite that names more of what the question asks
    about than any cited page's title ('The "del" statement' for a question on the del statement,
    while the report cites "Special method names"); None when a cited page is titled as closely.
    The page written on the subject went unused: the report may answer from pages that only touch it."""
    seen = [_title_words(title) for title in seen_titles]
    distinctive = _distinctive(question, seen)
    if not distinctive:
        return None

    asked = _asked(question)

    def named(title: str) -> int:
        words = _title_words(title)
        return sum(1 for word in distinctive if _names(words, word))

    def titled_for_it(title: str) -> bool:
        # most of the title's own words are the question's: "The del statement", not "Determine The
        # Number Of Foreign Key Constraint Violations", a page on something else that shares words
        own = [word for word in dict.fromkeys(key_words(title)) if word not in _QUESTION_SCAFFOLD]
        return bool(own) and sum(1 for word in own if _names(set(asked), word)) >= TITLED_FOR_SHARE * len(own)

    best_cited = max((named(title) for title in cited_titles), default=0)
    cited = set(cited_titles)
    closer = [
        (named(title), -i, title) for i, title in enumerate(seen_titles) if title not in cited and titled_for_it(title)
    ]
    best = max(closer, default=None)
    return best[2] if best is not None and best[0] > best_cited else None


def coverage(text: str, sentences: Sequence[str], *, scaffold: frozenset[str] = _QUESTION_SCAFFOLD) -> Coverage | None:
    """How well `sentences` cover the subject words of `text`; None when `text` has none this can
    read (a question in a script other than Latin, a step that only names its kind)."""
    asked = [word for word in dict.fromkeys(key_words(text)) if word not in scaffold]
    if not asked:
        return None
    cited: set[str] = set()
    for sentence in sentences:
        for word in key_words(sentence):
            cited |= _variants(word)
    found = [word for word in asked if _variants(word) & cited]
    names = [word for word in asked if _NAME.fullmatch(word)]
    return Coverage(
        share=len(found) / len(asked),
        names_asked=len(names),
        names_found=sum(1 for name in names if name in found),
        words_asked=len(asked),
    )


def question_coverage(question: str, markdown: str, verdicts: Sequence[ClaimVerdict] = ()) -> Coverage | None:
    """How well the checked cited sentences of `markdown` cover `question`."""
    return coverage(question, checked_sentences(markdown, verdicts))


def step_coverage(step: str, sentences: Sequence[str]) -> Coverage | None:
    """How well `sentences` cover a plan step's subject, its scaffolding ("Concrete examples of")
    aside."""
    return coverage(step, sentences, scaffold=_STEP_SCAFFOLD)
