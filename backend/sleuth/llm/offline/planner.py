"""The planner step: 3-6 numbered steps that keep the question's own phrases intact.

The question's sub-questions ("How does X handle Y?", "What isolation levels exist?") become
steps word for word; supporting steps (definition, mechanism, comparison, examples, pitfalls)
name the question's subjects with the words the question used, in forms that need no grammar
agreement. A clarification answer never adds topics: it sets the order of the steps (its
purpose and aspect) and its scope is attached to every step.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from sleuth.llm.offline.agent import names_domain
from sleuth.llm.offline.clarifier import is_vague
from sleuth.llm.offline.constraints import Constraints, read_constraints
from sleuth.llm.offline.request import OfflineRequest, Reply
from sleuth.llm.offline.text import RELATION_WORDS, STOPWORDS, VAGUE_WORDS, join_phrases
from sleuth.llm.offline.vocabulary import looks_english
from sleuth.llm.prompt_facts import PlanFacts

MIN_STEPS = 3
DEFAULT_MAX_STEPS = 6
MAX_QUESTION_STEPS = 3

_QUESTION_START = re.compile(
    r"^(what|how|why|when|which|where|who|whom|whose|whether|does|do|did|is|are|was|were|can|could|should|"
    r"would|will|has|have)\b",
    re.I,
)
_TASK_VERB = re.compile(r"^how\s+(?:(?:do|can|could|should|would|might)\s+(?:i|you|we|one)|to)\s+[a-z]+\s+(?=\S)", re.I)
_CLAUSE_SPLIT = re.compile(
    r"\?\s*|;\s*|,?\s+(?:and|but|or)\s+(?=(?:what|how|why|when|which|where|who|whether|does|do|is|are|can)\b)",
    re.I,
)
# Verbs that questions put between their subject and object; a noun phrase stops at them.
_VERBS = frozenset(
    "handle handles handled work works affect affects interact interacts relate relates differ differs "
    "compare compares behave behaves implement implements support supports store stores manage manages "
    "resolve resolves perform performs scale scales improve improves change changes prevent prevents "
    "ensure ensures avoid avoids cause causes exist exists happen happens have has configure set create "
    "run runs call calls return returns mean means apply applies choose pick evaluate evaluates "
    "guarantee guarantees provide provides allow allows define defines determine determines influence "
    "influences combine combines depend depends lead leads become becomes keep keeps produce produces "
    "enable enables detect detects protect protects replace replaces optimise optimize process processes "
    "interpret interprets execute executes compile compiles load loads find finds share shares decide decides "
    "treat treats enforce enforces choose chooses".split()
)
_ASPECT_HEADS = frozenset(
    "trade-offs tradeoffs trade-off differences difference pros cons advantages disadvantages benefits "
    "drawbacks role purpose meaning impact effect effects relationship relation interaction interactions "
    "history overview details semantics behaviour behavior".split()
)
_COMPARISON = re.compile(r"\b(vs\.?|versus|compared?|comparison|better|trade-?offs?|differen\w*|between)\b", re.I)
_CONTEXT_PREPOSITIONS = ("during", "in", "for", "when", "within", "inside", "under", "on", "with")
_ARTICLES = frozenset({"the", "a", "an"})
# A possessive stays on its word: "Python's cyclic garbage collector" is one subject, not "Python" and "s".
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:[./+#-][A-Za-z0-9_]+)*(?:\(\))?(?:['’]s\b)?|\d+(?:\.\d+)*|\S")
_KEYWORD_NOUNS = frozenset("statement statements loop loops clause clauses keyword keywords block blocks".split())


@dataclass
class Topic:
    subjects: list[str] = field(default_factory=list)  # noun phrases, as the question wrote them
    context: str = ""  # a trailing phrase from the question, preposition included ("during attribute lookup")
    comparison: bool = False
    relation: str = ""  # the verb relating several subjects ("interact")


_NOT_ADVERBS = frozenset("family assembly supply reply apply anomaly italy july ally rally poly".split())


def _is_adverb(word: str) -> bool:
    low = word.lower()
    return len(low) > 4 and low.endswith("ly") and low.isalpha() and low not in _NOT_ADVERBS


def clauses(question: str) -> list[str]:
    """The question's sub-questions, each as written (first letter capitalised, '?' kept)."""
    out: list[str] = []
    for piece in _CLAUSE_SPLIT.split(question.strip()):
        piece = piece.strip(" ,.")
        if piece and _QUESTION_START.match(piece) and len(piece.split()) >= 3:
            out.append(piece[0].upper() + piece[1:] + "?")
    return out


def _is_break(word: str, following: str) -> bool:
    low = word.lower()
    if low in STOPWORDS and following.lower() not in _KEYWORD_NOUNS:  # "with statement" is a subject
        return low not in _ARTICLES
    return low in _VERBS or low in RELATION_WORDS or low in VAGUE_WORDS or not re.match(r"[\w]", word)


# Words that "of" follows without making one thing of the two: "instead of", "one of", "all of".
_NOT_OF_HEADS = frozenset(
    "instead because out ahead kind sort type lot lots number all some any each most many none one both".split()
)


def _joins(run: list[str], following: str, after: str) -> bool:
    """Whether "of" binds two nouns into one thing ("a sequence of integers", "an array of values")
    rather than starting a phrase of its own ("instead of failing", "advantages of using")."""
    if not run or run[-1].lower() in _NOT_OF_HEADS or run[-1].lower() in _ASPECT_HEADS:
        return False
    if not following or following.lower().endswith("ing") or not re.match(r"\w", following):
        return False
    return not _is_break(following, after)


# "is called", "are stored", "was given": after a form of "be", a participle is the question's verb
_PASSIVE_AUXILIARIES = frozenset("is are was were be been being gets get got".split())
_IRREGULAR_PARTICIPLES = frozenset(
    "given taken written chosen broken thrown shown known done seen made kept held".split()
)


def _is_passive(previous: str, word: str, following: str) -> bool:
    """Whether `word` is a participle that ends the subject: after a form of "be" ("is called"), or
    after the subject itself when the clause goes on with a preposition or ends ("are default argument
    values evaluated in Python"). Before a noun it describes it ("are reserved keywords")."""
    low = word.lower()
    if not word.islower():  # "BEGIN DEFERRED, IMMEDIATE": a keyword, not a verb
        return False
    if previous.lower() in _PASSIVE_AUXILIARIES:
        participle = low.endswith("ed") or low in _IRREGULAR_PARTICIPLES
    else:
        participle = len(low) > 4 and low.endswith("ed") and not low.endswith("eed") and previous.isalpha()
    if not participle:
        return False
    return not following or following.lower() in STOPWORDS or _is_adverb(following) or not re.match(r"\w", following)


def noun_phrases(text: str) -> list[str]:
    """Runs of words between function words and verbs, kept verbatim (a leading article too)."""
    words = _WORD.findall(text)
    phrases: list[list[str]] = [[]]
    for index, word in enumerate(words):
        following = words[index + 1] if index + 1 < len(words) else ""
        after = words[index + 2] if index + 2 < len(words) else ""
        if word.lower() == "of" and _joins(phrases[-1], following, after):
            phrases[-1].append(word)
        elif _is_break(word, following) or (index > 0 and _is_passive(words[index - 1], word, following)):
            phrases.append([])
        else:
            phrases[-1].append(word)
    out: list[str] = []
    for run in phrases:
        while run and run[-1].lower() in _ARTICLES:
            run.pop()
        content = [w for w in run if w.lower() not in _ARTICLES]
        if content and not all(w.lower() in STOPWORDS for w in content):
            out.append(" ".join(run))
    return out


def _split_context(clause: str) -> tuple[str, str]:
    """(clause without its trailing context phrase, the context phrase with its preposition)."""
    body = clause.rstrip("?").strip()
    words = body.split()
    for index, word in enumerate(words[2:], 2):
        if word.lower() in _CONTEXT_PREPOSITIONS and index + 1 < len(words):
            before = " ".join(words[:index])
            if noun_phrases(before) and noun_phrases(" ".join(words[index + 1 :])):
                return before, " ".join(words[index:])
    return body, ""


# "does functools.lru_cache decide …": after an auxiliary, a name, then the question's own verb in its
# bare form (never a plural: "Counter objects" goes on naming the subject)
_NAME_THEN_VERB = re.compile(
    r"^(?:does|do|did|can|could|should|would|will|might|must)\s+"
    r"(?=[\w.()]*(?:[._]|[A-Z]))[\w.()]+(?<!['’]s)\s+(?P<verb>[a-z]+)\b"
)


def _without_main_verb(body: str) -> str:
    """The body with the verb after its subject name turned into a break, so that the name stands
    alone: "SQLite treat NULL values" is the name and what it acts on, not one subject."""
    found = _NAME_THEN_VERB.match(body)
    if not found:
        return body
    verb = found.group("verb")
    if verb in STOPWORDS or (verb.endswith("s") and not verb.endswith(("ss", "us"))):
        return body
    return f"{body[: found.start('verb')]}; {body[found.end('verb') :]}"


def _is_example(phrase: str, text: str) -> bool:
    """Whether `text` gives the phrase as an example of something else ("like obj.x", "such as sqrt")."""
    return bool(re.search(rf"\b(?:like|such as|e\.g\.)\s+{re.escape(phrase)}", text))


def analyse(text: str) -> Topic:
    """Subjects, context and comparison of the first sub-question (or of `text` if it has none)."""
    first = (clauses(text) or [text])[0]
    # "How do I write an upsert": the word after "how do I" or "how to" is what the asker wants to
    # do, not what they ask about; as part of the subject it would have every answer name it
    body, context = _split_context(_TASK_VERB.sub("", first.strip()))
    body = _QUESTION_START.sub("", body.strip()).strip()
    comparison = bool(_COMPARISON.search(first))
    relation = next((w.lower() for w in body.split() if w.lower() in RELATION_WORDS), "")
    body = _without_main_verb(body)
    phrases = []
    for phrase in noun_phrases(body):
        # "use SQLite safely", "update a database incrementally": how the asker wants it done, not
        # what they ask about
        words = [word for word in phrase.split() if not _is_adverb(word)]
        if not words:
            continue
        phrase = " ".join(words)
        head = words[1] if words[0].lower() in _ARTICLES and len(words) > 1 else words[0]
        if head.lower() in _ASPECT_HEADS:  # "the trade-offs" names an aspect, not a subject
            comparison = comparison or head.lower() in ("trade-offs", "tradeoffs", "differences", "difference")
            rest = words[words.index(head) + 1 :]
            if rest:
                phrases.append(" ".join(rest))
            continue
        phrases.append(phrase)
    if context and all(phrase.isalpha() and names_domain(phrase) for phrase in phrases):
        # "use SQLite safely on a database file from an untrusted source": the context holds the subject
        # ("use OrderedDict efficiently in Python" keeps its subject: a joined name is no domain)
        phrases, context = noun_phrases(context.partition(" ")[2]), ""
    # a lone capitalised word ("Python", "SQLite") in front of other subjects names the domain; an
    # example the question gives ("like obj.x") does not take its place
    if len(phrases) > 1 and " " not in phrases[0] and names_domain(phrases[0]):
        domain = phrases.pop(0)
        context = context or f"in {domain}"
        phrases = phrases[:1] + [phrase for phrase in phrases[1:] if not _is_example(phrase, body)]
    return Topic(subjects=phrases[:2], context=context, comparison=comparison, relation=relation)


def _supporting(topic: Topic, first_clause: str) -> dict[str, str]:
    """Step text per kind; a kind the question's own first clause already asks is left out."""
    subjects = join_phrases(topic.subjects)
    where = f" {topic.context}" if topic.context else ""
    asks = first_clause.lower()
    steps = {
        "definition": f"Definition and purpose of {subjects}{where}",
        "mechanism": f"The mechanism behind {subjects}{where}, step by step",
        "comparison": f"Differences and trade-offs between {subjects}{where}",
        "relation": f"How {subjects} {topic.relation} with each other{where}" if topic.relation else "",
        "examples": f"Concrete examples of {subjects} in use{where}",
        "pitfalls": f"Pitfalls, edge cases and limitations of {subjects}{where}",
    }
    if asks.startswith(("what is", "what are")) and not topic.comparison:
        steps["definition"] = ""
    if asks.startswith("how") or topic.comparison:
        # the question asks how the subjects behave; a process it names ("during attribute lookup")
        # is still worth a step of its own
        preposition, _, setting = topic.context.partition(" ")
        mechanism = f"The mechanism of {setting}, step by step, and the role of {subjects} in it"
        steps["mechanism"] = mechanism if preposition.lower() in ("during", "for") else ""
    if topic.comparison and first_clause:
        steps["comparison"] = ""
    if not topic.comparison or len(topic.subjects) < 2:
        steps["comparison"] = ""
    if first_clause and topic.relation:
        steps["relation"] = ""
    return {kind: text for kind, text in steps.items() if text}


# The order of supporting steps for what the answer is for (purpose) or what it should focus on (aspect).
_ORDERS = {
    "": ["definition", "mechanism", "comparison", "relation", "examples", "pitfalls"],
    "learning": ["definition", "mechanism", "examples", "relation", "comparison", "pitfalls"],
    "fixing": ["pitfalls", "mechanism", "examples", "definition", "relation", "comparison"],
    "choosing": ["comparison", "pitfalls", "examples", "definition", "mechanism", "relation"],
    "definition": ["definition", "examples", "mechanism", "relation", "comparison", "pitfalls"],
    "internals": ["mechanism", "relation", "definition", "pitfalls", "examples", "comparison"],
    "practice": ["examples", "pitfalls", "definition", "mechanism", "relation", "comparison"],
}


def with_scope(step: str, scope: list[str]) -> str:
    """A step carrying the user's scope, in a form a reader (and the orchestrator) can strip again."""
    return f"{step} ({'; '.join(scope)})" if scope else step


def plan_steps(
    question: str, answer: str = "", earlier_question: str = "", max_steps: int = DEFAULT_MAX_STEPS
) -> list[str]:
    if not looks_english(question):
        # the steps must stay in the user's language, and this model writes only English:
        # the question itself, word for word, is the plan
        return [question.strip()]
    constraints = read_constraints(answer) if answer else Constraints()
    own = [] if is_vague(question) else clauses(question)
    topic = analyse(question)
    subject_from_answer = bool(constraints.subject) and (not topic.subjects or is_vague(question))
    if subject_from_answer:
        # a vague question made concrete by the answer: the answer names the subject
        topic = analyse(constraints.subject[0])
    elif not topic.subjects and earlier_question:  # a follow-up ("tell me more") inherits its subject
        topic = analyse(earlier_question)
    if not topic.subjects:
        topic.subjects = ["the topic of the question"]
    scope = constraints.scope_with(subject_known=not subject_from_answer)
    first = own[0] if own else ""
    supporting = _supporting(topic, first)
    order = _ORDERS[constraints.aspect or constraints.purpose]
    steps = own[:MAX_QUESTION_STEPS] + [supporting[kind] for kind in order if kind in supporting]
    limit = max(1, max_steps)
    if limit >= MIN_STEPS:
        limit = min(limit, max(MIN_STEPS, len(steps)))
    return [with_scope(step, scope) for step in steps[:limit]]


def plan(request: OfflineRequest) -> Reply:
    facts = request.facts(PlanFacts)
    # a user message after the proposed plan is the user's feedback on it (plan review)
    feedback = request.last_user if request.answered_after_assistant() else ""
    if facts is None:  # not a Sleuth planner prompt: plan for the user's words as they are
        steps = plan_steps(request.last_user or request.first_user)
    else:
        answer = facts.clarification.answer if facts.clarification else ""
        answer = " ".join(filter(None, [answer, feedback]))
        earlier = facts.earlier_questions[-1] if facts.earlier_questions else ""
        steps = plan_steps(facts.question, answer, earlier, facts.max_steps)
    return Reply(text="\n".join(f"{i}. {step}" for i, step in enumerate(steps, 1)))
