"""The planner step: 3-6 numbered steps built from the question's key phrases."""

from __future__ import annotations

import re
from dataclasses import dataclass

from sleuth.llm.offline.clarifier import is_vague
from sleuth.llm.offline.request import OfflineRequest, Reply
from sleuth.llm.offline.text import RELATION_WORDS, STOPWORDS, chunks, join_phrases
from sleuth.prompting import render

MIN_STEPS = 3
DEFAULT_MAX_STEPS = 6

# Head nouns that name an aspect of the subjects rather than a subject ("the trade-offs of X").
_ASPECT_HEADS = frozenset(
    "trade-offs tradeoffs trade-off differences difference pros cons advantages disadvantages benefits "
    "drawbacks role purpose meaning impact effect effects relationship relation interaction interactions "
    "history overview details semantics behaviour behavior".split()
)
_COMPARISON_HEADS = frozenset(
    "trade-offs tradeoffs trade-off differences difference pros cons advantages disadvantages vs versus".split()
)
# A context phrase usually follows one of these ("... interact during attribute lookup").
_CONTEXT_PREPOSITIONS = ("during", "in", "for", "when", "within", "inside", "under", "on")


@dataclass
class Topic:
    subjects: list[str]
    context: str
    relation: str
    comparison: bool
    domain: str = ""


def analyse(question: str) -> Topic:
    """Split a question into subjects, a context phrase and the relation asked about."""
    phrases = chunks(question)
    relation = ""
    comparison = bool(re.search(r"\b(vs\.?|versus|compared?|comparison|better|trade-?offs?|differen)", question, re.I))
    subjects: list[str] = []
    rest: list[str] = []
    for phrase in phrases:
        words = phrase.lower().split()
        if any(word in RELATION_WORDS for word in words):
            relation = relation or next(word for word in phrase.split() if word.lower() in RELATION_WORDS)
            kept = [word for word in phrase.split() if word.lower() not in RELATION_WORDS]
            if kept:
                rest.append(" ".join(kept))
            continue
        if words[0] in _ASPECT_HEADS:
            comparison = comparison or words[0] in _COMPARISON_HEADS
            kept = phrase.split()[1:]
            if kept:
                (subjects if len(subjects) < 2 else rest).append(" ".join(kept))
            continue
        if len(subjects) < 2 and not _follows_preposition(question, phrase):
            # "with statement" reads as "the with statement"
            subjects.append("the " + phrase if words[0] in STOPWORDS else phrase)
        else:
            rest.append(phrase)
    if not subjects and rest:
        subjects, rest = rest[:1], rest[1:]
    # A lone capitalised word left over ("in Python") names the domain, not a mechanism to explain.
    domain = [phrase for phrase in rest if " " not in phrase and phrase[:1].isupper() and phrase[1:].islower()]
    context = [phrase for phrase in rest if phrase not in domain]
    return Topic(
        subjects=subjects,
        context=join_phrases(context[:2]),
        relation=relation.lower(),
        comparison=comparison,
        domain=domain[0] if domain else "",
    )


def _follows_preposition(question: str, phrase: str) -> bool:
    """True when `phrase` comes right after a context preposition (it is a setting, not a subject)."""
    pattern = r"\b(" + "|".join(_CONTEXT_PREPOSITIONS) + r")\s+(the\s+|a\s+|an\s+)?" + re.escape(phrase)
    return re.search(pattern, question, re.I) is not None


def _max_steps(system: str) -> int:
    match = re.search(r"at most (\d+) numbered steps", system)
    return max(1, int(match.group(1))) if match else DEFAULT_MAX_STEPS


def parse_question(user: str) -> tuple[str, str]:
    """(question, clarification answer) from the planner's user message."""
    match = re.search(r"Question:\s*(.+?)(?:\n\s*\n|$)", user, re.S)
    question = (match.group(1) if match else user).strip()
    answer_match = re.search(r"The user's answer:\s*(.+)$", user, re.S)
    return question, (_answer_only(answer_match.group(1)) if answer_match else "")


def _answer_only(raw: str) -> str:
    """The user's words: clients may echo the numbered questions above each answer; drop those."""
    kept = []
    for line in raw.splitlines():
        line = line.strip()
        if not line or line.endswith("?"):
            continue
        kept.append(re.sub(r"^(?:\d+[.)]\s*|Also:\s*)", "", line))
    return " ".join(kept)


def plan_steps(
    question: str, answer: str = "", earlier_question: str = "", max_steps: int = DEFAULT_MAX_STEPS
) -> list[str]:
    topic = analyse(question)
    if not topic.subjects and earlier_question:  # a follow-up ("tell me more") inherits its subject
        topic = analyse(earlier_question + " " + question)
    if answer and (not topic.subjects or is_vague(question)):
        # a vague question made concrete by the clarification answer: the answer names the subject
        topic = analyse(answer + ". " + question)
        answer = ""
    subjects = topic.subjects or ["the topic of the question"]
    focus = join_phrases(chunks(answer)[:3]) if answer else ""
    text = render(
        "offline/plan",
        subjects=join_phrases(subjects),
        several=len(subjects) > 1,
        plural=len(subjects) > 1 or (subjects[0].endswith("s") and not subjects[0].endswith("ss")),
        context=topic.context,
        domain=topic.domain,
        relation=topic.relation,
        comparison=topic.comparison,
        focus=focus,
    )
    steps = [re.sub(r"^\d+\.\s*", "", line).strip() for line in text.splitlines() if re.match(r"^\d+\.", line.strip())]
    limit = max(1, max_steps)
    if limit >= MIN_STEPS:
        limit = min(limit, max(MIN_STEPS, len(steps)))
    return steps[:limit]


def plan(request: OfflineRequest) -> Reply:
    question, answer = parse_question(request.first_user)
    if request.answered_after_assistant():  # the user's feedback on the plan just proposed
        answer = " ".join(filter(None, [answer, request.last_user]))
    earlier = re.findall(r"--- Earlier question: (.+)", request.system)
    steps = plan_steps(question, answer, earlier[-1] if earlier else "", _max_steps(request.system))
    return Reply(text="\n".join(f"{i}. {step}" for i, step in enumerate(steps, 1)))
