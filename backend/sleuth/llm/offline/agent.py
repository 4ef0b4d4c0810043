"""The research agent step: search with the task's key terms (and call the offered server tools
that fit the task), open the best results, report.

The agent sees only its task (the user message) and its own tool results, like a real one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sleuth.core.words import stem
from sleuth.llm.offline.request import OfflineRequest, Reply
from sleuth.llm.offline.text import (
    RELATION_WORDS,
    NumberedBlock,
    chunks,
    content_words,
    first_paragraph,
    is_navigation_page,
    numbered_blocks,
    page_sentences,
    rarity,
    term_set,
    tokens,
    without_highlights,
)
from sleuth.llm.offline.tools import fitting_calls
from sleuth.llm.prompt_facts import AgentFacts, AgentTurnFacts

MAX_QUERIES = 3
MAX_OPEN = 3
MAX_SEARCH_ROUNDS = 2
MAX_OPEN_ROUNDS = 2
OPEN_AGAIN_SCORE = 2.0  # what a hit must score to be opened in the second round (a focus term's worth)
MIN_RELEVANT_SENTENCES = 3  # fewer than this after opening pages: search once more
# Opening order: the search engine's rank matters as much as the overlap with the task, since the
# engine lists every query's best hit first and ranks on the whole text, not the snippet.
TOP_RANK_BONUS = 4.0
READ_ELSEWHERE_PENALTY = 2.5  # a sibling already reported on it: prefer unread pages of similar worth
# A page whose title names the task's subject ("SQLite Foreign Key Support") is where the subject is
# explained; pages that mention it in passing ("Quirks, Caveats, and Gotchas") often rank above it,
# since they repeat the search words in a paragraph on it.
TITLE_BONUS = 3.0
TITLE_ON_TASK_SHARE = 0.5  # of the title's own words (the domain aside), at least this many on the task
_DEFAULT_AGENT_ROUNDS = 6
MIN_OWN_FOCUS_TERMS = 2  # a focus this thin names no subject of its own
PART_SHARE = 0.5

# Words that describe the kind of step, not the subject; useless (or harmful) as search terms.
_STEP_WORDS = frozenset(
    "what how why concrete common examples example pitfalls pitfall edge cases case limitations limitation step "
    "internally come comes relate each other differences trade-offs trade-off background part researching "
    "relevant facts sources report citations find use respect background definition purpose mechanism behind role "
    "keep".split()
)


# What kind of fact a task asks for, recognised from its wording, and the words (stemmed) that
# sentences of that kind tend to contain. Sibling agents often read the same pages; these cues
# make each pick the sentences that answer its own step. The last item is a search-query hint.
_KINDS: list[tuple[re.Pattern[str], frozenset[str], str]] = [
    (
        re.compile(r"\bexamples?\b|\bin use\b|\bin practice\b", re.I),
        frozenset("example e.g instance such consider following illustrat demonstrat".split()),
        "example",
    ),
    (
        re.compile(r"pitfall|limitation|edge case|caveat|gotcha|mistake|error", re.I),
        frozenset(
            "not cannot never must only error raise fail avoid note warning however unless bypass "
            "infinite recursion instead rather".split()
        ),
        "error",
    ),
    (
        re.compile(r"\bhow\b.*\bworks?\b|step by step|mechanism|internally", re.I),
        frozenset("call invok first then before after order search lookup precedence when implement".split()),
        "invoked",
    ),
    (
        re.compile(r"\binteract|\brelate|differen|trade-?off|compar", re.I),
        frozenset("if unless instead both either precedence override than whereas while also".split()),
        "",
    ),
    (
        re.compile(r"^\s*what\b.*\b(is|are)\b|^\s*definition\b", re.I),
        frozenset("defin refer mean known term call describ".split()),
        "definition",
    ),
]


@dataclass
class TaskTerms:
    """The task split into its focus (first sentence) and background (the rest)."""

    focus: set[str]
    background: set[str]
    focus_phrases: list[str]
    background_phrases: list[str]
    cues: frozenset[str] = frozenset()
    query_hint: str = ""
    domain: frozenset[str] = frozenset()
    # Words the task names only inside a snake_case name ("row" and "number" of `row_number()`): a
    # page on rows or numbers is not about that name.
    parts: frozenset[str] = frozenset()

    def weight(self, terms: set[str], rarity: dict[str, float] | None = None) -> float:
        """Focus terms count double: they say what this agent, unlike its siblings, must find.
        Domain names ("Python") barely count: every page of a Python corpus mentions them.
        `rarity` (0..1 per term) discounts terms that most candidate sentences share."""

        def score(term: str, base: float) -> float:
            return base * (rarity.get(term, 1.0) if rarity else 1.0) * (PART_SHARE if term in self.parts else 1.0)

        total = 0.0
        for term in terms & (self.focus | self.background | self.domain):
            if term in self.domain:
                total += score(term, 0.25)
            elif term in self.focus:
                total += score(term, 2.0)
            else:
                total += score(term, 1.0)
        return total

    def cue_bonus(self, sentence: str) -> float:
        """Up to 2 points for sentences of the kind the task asks for."""
        words = {stem(token.lower()) for token in tokens(sentence)}
        hits = sum(1 for cue in self.cues if any(word.startswith(stem(cue)) for word in words))
        return float(min(2, hits))


_CODE_NAME = re.compile(r"\w_\w|\w\(|[a-z][A-Z]|\w\.\w")


def names_domain(word: str) -> bool:
    """A capitalised name that is no identifier: "Python", "SQLite"; not "ExitStack" or "TimeoutError"
    (a lower-case letter before a capital joins two words of a name) and not "VACUUM" (a keyword)."""
    return (
        word[:1].isupper()
        and not word.isupper()
        and not re.search(r"[a-z][A-Z]|[_.]", word)
        and word.lower() not in _STEP_WORDS
    )


def _name_parts(text: str) -> frozenset[str]:
    """The words of the task's snake_case names that the task does not also use on their own."""
    words = content_words(text)
    whole = {stem(part) for word in words for part in re.split(r"[./]", word)}
    pieces = {stem(piece) for word in words for piece in re.split(r"[./_]", word.strip("_")) if len(piece) > 1}
    return frozenset(pieces - whole)


def _clean_phrases(text: str) -> list[str]:
    phrases: list[str] = []
    for phrase in chunks(text):
        words = [word for word in phrase.split() if word.lower() not in _STEP_WORDS | RELATION_WORDS]
        if words:
            phrases.append(" ".join(words))
    return phrases


def task_terms(task: str) -> TaskTerms:
    """Focus = the first sentence of the task; background = anything after it."""
    parts = re.split(r"(?<=[.!?])\s+", task.strip(), maxsplit=1)
    focus_text = parts[0]
    # the scope a task ends with limits where to look; its words are not search topics
    background_text = re.sub(r"\s*Keep to: .*$", "", parts[1], flags=re.S) if len(parts) > 1 else ""
    focus_phrases = _clean_phrases(focus_text)
    background_phrases = _clean_phrases(background_text)
    own = term_set(" ".join(focus_phrases))
    names_subject = not background_phrases or bool(term_set(background_phrases[0]) & own)
    if len(own) <= MIN_OWN_FOCUS_TERMS or not names_subject:
        # "How do they differ?", "What exception is raised?", "Why does the input need to be
        # sorted?": a follow-up clause of the question whose subject is named earlier in it; the
        # background's first phrases say what it is about
        lowered = {phrase.lower() for phrase in focus_phrases}
        focus_phrases = [p for p in background_phrases[:2] if p.lower() not in lowered] + focus_phrases
    kind = next(((cues, hint) for pattern, cues, hint in _KINDS if pattern.search(focus_text)), (frozenset(), ""))
    return TaskTerms(
        focus=term_set(" ".join(focus_phrases)),
        background=term_set(" ".join(background_phrases)),
        focus_phrases=focus_phrases,
        background_phrases=background_phrases,
        cues=kind[0],
        query_hint=kind[1],
        domain=frozenset(stem(word) for word in tokens(task) if names_domain(word)),
        parts=_name_parts(task),
    )


def search_queries(terms: TaskTerms, round_index: int, asked: set[str]) -> list[str]:
    """1-3 short, distinct queries; a second round uses single phrases to widen the net."""
    phrases = terms.focus_phrases or terms.background_phrases
    candidates: list[str] = []
    if round_index == 0:
        candidates.append(" ".join(phrases[:2]))
        if len(phrases) > 2:
            candidates.append(" ".join(phrases[1:3]))
        if phrases:
            # A name in code form ("generate_series", "SQLITE_BUSY") is the task's most specific
            # word: one the first queries left out is searched for here, before the last phrase.
            # The last phrase may be only the domain ("in SQLite"): the hint alone would search for
            # "definition" or "example" anywhere in the documentation.
            own = [p for p in phrases if any(stem(word.lower()) not in terms.domain for word in p.split())]
            tail = next((p for p in own[3:] if _CODE_NAME.search(p)), own[-1] if own else phrases[-1])
            # the kind of fact wanted, as a search word, pulls in pages the siblings' queries miss
            candidates.append(f"{tail} {terms.query_hint}".strip())
    else:
        candidates.extend(phrases[::-1])
        candidates.extend(terms.background_phrases)
    queries: list[str] = []
    for query in candidates:
        # the domain ("SQLite", "Python") names every page of its documentation: as a search word it
        # only ranks up the pages that repeat it most ("SQLITE_OMIT_…" lists), not the one on the subject
        words = [word for word in query.split() if stem(word.lower()) not in terms.domain]
        query = " ".join(words[:5])  # short queries match more documents
        if query and query.lower() not in asked and query.lower() not in (q.lower() for q in queries):
            queries.append(query)
    return queries[:MAX_QUERIES]


def _results(request: OfflineRequest, name: str) -> list[NumberedBlock]:
    blocks: list[NumberedBlock] = []
    for exchange in request.exchanges():
        if exchange.name == name and exchange.result:
            found = numbered_blocks(exchange.result)
            # a search hit is its one-line snippet; anything after it is the engine's nudge
            blocks.extend([first_paragraph(b) for b in found] if name == "search" else found)
    return blocks


def relevant_sentence_count(pages: list[NumberedBlock], terms: TaskTerms) -> int:
    return sum(
        1
        for page in pages
        if not is_navigation_page(page.body)
        for sentence in page_sentences(page.body)
        if terms.weight(term_set(sentence)) >= 2
    )


def titled_for(title: str, terms: TaskTerms) -> bool:
    """Whether a page's title names the task's focus: one of its terms, and no more than half of the
    title's words off the task. In a title "name — description" ("threading — Thread-based
    parallelism"), the name alone says what the page is about."""
    named = term_set(re.split(r"\s[—–]\s", title, maxsplit=1)[0]) - terms.domain
    return bool(named & terms.focus) and len(named & (terms.focus | terms.background)) >= TITLE_ON_TASK_SHARE * len(
        named
    )


_TITLE_FUNCTION = re.compile(r"\b([A-Za-z_]\w{4,})\(\)")
MIN_NAME_PART = 5  # letters: shorter words sit inside too many names


def _title_function_names(title: str, terms: TaskTerms) -> bool:
    """Whether a title names a function whose name holds a focus word, or sits in one: "The Carray()
    Table-Valued Function" for an array passed from C, "printf()" for "like sprintf"."""
    names = [name.lower() for name in _TITLE_FUNCTION.findall(title)]
    words = [term for term in terms.focus - terms.domain if len(term) >= MIN_NAME_PART and term.isalpha()]
    return any(word != name and (word in name or name in word) for name in names for word in words)


def open_priority(hits: list[tuple[int, NumberedBlock]], terms: TaskTerms) -> list[tuple[float, NumberedBlock]]:
    """Unopened hits on the task, most worth opening first, with their scores.

    `hits` are (place in its search result, hit): the engine lists every query's best hit
    first, and the rank bonus fades over the first few places. Overlap with the task counts
    the title and the snippet without its highlight markers. Pages another agent already read
    drop back without being excluded: they are opened when nothing better is left. (A snippet
    that looks like a table of contents says little: reference pages often carry their own, so
    pages are judged once opened.)"""
    hit_terms = [term_set(hit.title + " " + without_highlights(hit.body)) for _, hit in hits]
    rare = rarity(hit_terms, set(terms.focus | terms.background))
    scored: list[tuple[float, NumberedBlock]] = []
    for (place, hit), found in zip(hits, hit_terms, strict=True):
        score = terms.weight(found, rare)
        if score <= 0:
            continue  # nothing of the task in its title or snippet: the rank alone does not earn a read
        score += TOP_RANK_BONUS * max(0.0, 1.0 - place / MAX_QUERIES / 2)
        if titled_for(hit.title, terms) or _title_function_names(hit.title, terms):
            score += TITLE_BONUS
        if hit.read_elsewhere:
            score -= READ_ELSEWHERE_PENALTY
        scored.append((score, hit))
    return sorted(scored, key=lambda item: -item[0])


def _remaining_rounds(request: OfflineRequest) -> int:
    """Rounds left including this one, from the agent's declared budget and round counter."""
    budget = request.facts(AgentFacts)
    turn = request.facts(AgentTurnFacts)
    total = turn.max_cycles if turn else budget.max_cycles if budget else _DEFAULT_AGENT_ROUNDS
    current = turn.cycle if turn else request.assistant_turns + 1
    return total - current + 1


def research(request: OfflineRequest) -> Reply:
    task = request.first_user
    terms = task_terms(task)
    exchanges = request.exchanges()
    searches = [e for e in exchanges if e.name == "search"]
    asked = {str(q).lower() for e in searches for q in (e.arguments.get("queries") or []) if isinstance(q, str)}
    opened_urls = {str(u) for e in exchanges if e.name == "open_url" for u in (e.arguments.get("urls") or [])}
    search_rounds = len({e.turn for e in searches})
    remaining = _remaining_rounds(request)

    if remaining <= 1:
        return Reply(tool_calls=[("generate_report", {})])
    if search_rounds == 0:
        queries = search_queries(terms, 0, asked) or [task[:80]]
        # A server's tool that fits the task is read beside the search, as an opened page is.
        return Reply(tool_calls=[("search", {"queries": queries}), *fitting_calls(request, terms.weight, queries[0])])

    # Open the unopened results that overlap the task most; ties keep the search engine's rank.
    unique: dict[str, tuple[int, NumberedBlock]] = {}
    for exchange in searches:
        for place, block in enumerate(numbered_blocks(exchange.result or "")):
            if block.url and block.url not in opened_urls:
                unique.setdefault(block.url, (place, first_paragraph(block)))
    ranked = open_priority(list(unique.values()), terms)
    last_turn = max((e.turn for e in exchanges), default=-1)
    last_was_search = any(e.name == "search" and e.turn == last_turn for e in exchanges)
    if last_was_search and ranked:
        best = [hit for _, hit in ranked][:MAX_OPEN] or [
            hit for _, hit in sorted(unique.values(), key=lambda item: item[0])[:2]
        ]
        return Reply(tool_calls=[("open_url", {"urls": [hit.url for hit in best]})])

    opens = len({e.turn for e in exchanges if e.name == "open_url"})
    if opens < MAX_OPEN_ROUNDS and remaining >= 3:
        # Sibling agents search alike and open at once, so they read the same three pages; the page
        # on the subject may sit a few places lower (a changelog or a FAQ repeats the search words
        # more often). The next best hits are read too, when they are on the task.
        again = [hit for score, hit in ranked if score >= OPEN_AGAIN_SCORE][:MAX_OPEN]
        if again:
            return Reply(tool_calls=[("open_url", {"urls": [hit.url for hit in again]})])

    pages = _results(request, "open_url")
    thin = relevant_sentence_count(pages, terms) < MIN_RELEVANT_SENTENCES
    if thin and search_rounds < MAX_SEARCH_ROUNDS and remaining >= 3:
        queries = search_queries(terms, search_rounds, asked)
        if queries:
            return Reply(tool_calls=[("search", {"queries": queries})])
    return Reply(tool_calls=[("generate_report", {})])
