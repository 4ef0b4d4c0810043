"""The English function words every text matcher in Sleuth ignores: the local search's query
builder, the claim-support check and the offline model, so a word counts (or not) the same way
everywhere; the words of a question's scaffolding, which say what is asked, not about what; and
the two stemmers, side by side so a third is not written.

Two stemmers, because their users want different things: the offline model (`stem`) matches a
question's words to a page's as loosely as it can, British spellings and a final "e" included; the
claim-support check (`light_stem`) folds less: with `stem` it finds fewer of the unsupported
claims in eval/claim_labels.jsonl.
"""

from __future__ import annotations

import re
from functools import lru_cache

# Function words: they say nothing about a subject. Matchers that also drop a question's
# scaffolding ("explain", "works") add those words to these.
FUNCTION_WORDS: frozenset[str] = frozenset(
    """
    a about above after again against all also am an and any are as at be because been before being
    below between both but by can could did do does doing down during each either else few for from
    further had has have having he her here hers him his how i if in into is it it's its itself just
    may me might more most must my no nor not now of off on once only or other our ours out over own
    per same shall she should so some such than that the their theirs them then there these they
    this those through to too under until up very via was we were what when where which while who
    whom why will with would you your yours yourself
    """.split()
    # what is left of a negated auxiliary once the apostrophe splits it ("shouldn't" -> "shouldn", "t")
    + "aren couldn didn doesn don hadn hasn haven isn mustn needn shan shouldn t wasn weren won wouldn".split()
)

# Question scaffolding: "explain", "works", "difference" frame a question without naming its
# subject. The offline model ignores them when it reads a question; the report's confidence
# ignores them when it asks whether the cited passages are about the question.
QUESTION_WORDS: frozenset[str] = frozenset(
    """
    actually best care compare compared curious describe difference different e.g especially etc
    exactly explain find get gets give good got happen happens i.e interested kind know let lets
    like look mainly make makes many mean means mostly much need needs one particularly please
    question really research show sort tell thing two use used useful uses using versus vs want way ways
    wondering work works
    """.split()
)

_BRITISH_ISE = re.compile(r"(?<=[a-z]{3})is(e|ed|es|ing|ation|ations)$")


def stem(word: str) -> str:
    """A light suffix stripper so `descriptors`/`descriptor` and `lookups`/`lookup` meet."""
    word = word.lower()
    if word.startswith("__") or len(word) <= 3 or "_" in word or "." in word:
        return word  # identifiers (dunder, snake_case, dotted) and short words are exact
    word = _BRITISH_ISE.sub(r"iz\1", word)  # "serialise" meets "serialize"
    if word.endswith(("tions", "sions", "tion", "sion")) and len(word.rstrip("s")) >= 8:
        return word.rstrip("s")[:-3]  # "deletion" meets "delete", "insertions" meets "insert"
    for suffix, replacement in (("ies", "y"), ("sses", "ss"), ("ing", ""), ("ed", ""), ("es", "e"), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
            word = word[: len(word) - len(suffix)] + replacement
            break
    # "serialize", "serialized" and "serializes" all end up as "serializ"
    return word[:-1] if word.endswith("e") and len(word) > 4 else word


@lru_cache(maxsize=65536)  # documents repeat their vocabulary; stemming dominated the claim check's time
def light_stem(word: str) -> str:
    """Plural, -ing, -ed and -ly endings off an already lower-cased word; short words, numbers and
    `_names` stay as they are."""
    if word.startswith("_") or word[0].isdigit() or len(word) <= 4:
        return word
    for suffix in ("ies", "ing", "ed", "es", "s", "ly"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
            return word[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return word


# A plan step's scaffolding: "Concrete examples of X in use" and "Pitfalls, edge cases and
# limitations of X" name the kind of step, not its subject. The report's confidence ignores them
# when it asks whether the cited passages cover a step.
STEP_WORDS: frozenset[str] = frozenset(
    """
    aspect aspects background behind case cases concrete definition differences edge example examples
    internally limitation limitations mechanism overview pitfall pitfalls practice purpose role step
    steps trade trade-off trade-offs tradeoffs offs
    """.split()
)
