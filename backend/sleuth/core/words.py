"""The English function words every text matcher in Sleuth ignores: the local search's query
builder, the claim-support check and the offline model, so a word counts (or not) the same way
everywhere; and the words of a question's scaffolding, which say what is asked, not about what."""

from __future__ import annotations

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
)

# Question scaffolding: "explain", "works", "difference" frame a question without naming its
# subject. The offline model ignores them when it reads a question; the report's confidence
# ignores them when it asks whether the cited passages are about the question.
QUESTION_WORDS: frozenset[str] = frozenset(
    """
    actually best care compare compared curious describe difference different e.g especially etc
    exactly explain find get gets give good got happen happens i.e interested kind know let lets
    like look mainly make makes many mean means mostly much need needs one particularly please
    question really research show sort tell thing two use used uses using versus vs want way ways
    wondering work works
    """.split()
)

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
