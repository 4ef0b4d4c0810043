"""Whether a report's cited passages are about the question asked.

Counts of sources and verified citations say a report is well sourced, not that it answers: a
corpus without the answer still yields a report whose every citation checks out, about something
else. This measures what the confidence needs instead: the share of the question's subject words
that the report's cited sentences contain, and whether the names the question asks about
(`functools.lru_cache`) appear in them at all. Same words and stemming as the claim check.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sleuth.core.words import QUESTION_WORDS
from sleuth.research.report.sentences import cited_sentences, key_words

# A question word that is an identifier: dotted, snake_case or dunder. Such a name is what the
# question is about; prose that never names it answers some other question.
_NAME = re.compile(r"[a-z_]\w*(?:\.\w+)+|\w*_\w*")


@dataclass(frozen=True)
class QuestionCoverage:
    share: float  # of the question's subject words found in the cited sentences (0..1)
    names_asked: int  # identifiers the question names
    names_found: int  # of those, how many the cited sentences name


def _variants(word: str) -> set[str]:
    """A word and, for a dotted name, its last part: `functools.lru_cache` is named by `lru_cache`."""
    return {word, word.rsplit(".", 1)[-1]} if "." in word else {word}


def question_coverage(question: str, markdown: str) -> QuestionCoverage | None:
    """How well the cited sentences of `markdown` cover `question`; None when the question has no
    subject words this can read (a question in a script other than Latin, say)."""
    asked = [word for word in dict.fromkeys(key_words(question)) if word not in QUESTION_WORDS]
    if not asked:
        return None
    cited: set[str] = set()
    for claim in cited_sentences(markdown):
        for word in key_words(claim.sentence):
            cited |= _variants(word)
    found = [word for word in asked if _variants(word) & cited]
    names = [word for word in asked if _NAME.fullmatch(word)]
    return QuestionCoverage(
        share=len(found) / len(asked),
        names_asked=len(names),
        names_found=sum(1 for name in names if name in found),
    )
