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
from collections.abc import Sequence
from dataclasses import dataclass

from sleuth.core.words import QUESTION_WORDS, STEP_WORDS
from sleuth.research.report.sentences import cited_sentences, key_words
from sleuth.stream.results import ClaimVerdict

# A question word that is an identifier: dotted, snake_case or dunder. Such a name is what the
# question is about; prose that never names it answers some other question.
_NAME = re.compile(r"[a-z_]\w*(?:\.\w+)+|\w*_\w*")
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


def checked_sentences(markdown: str, verdicts: Sequence[ClaimVerdict] = ()) -> list[str]:
    """The cited sentences of `markdown` that the claim check did not flag."""
    flagged = {verdict.sentence for verdict in verdicts if not verdict.supported}
    return [claim.sentence for claim in cited_sentences(markdown) if claim.sentence not in flagged]


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
