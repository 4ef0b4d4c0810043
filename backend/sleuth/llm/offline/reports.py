"""The agent's writing step: its intermediate report.

Extractive: a set of sentences copied (whitespace aside) from the pages the agent opened, each
followed by the [n] that page carried. The final report (final.py) rearranges them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from sleuth.llm.offline.agent import TaskTerms, task_terms
from sleuth.llm.offline.request import OfflineRequest, Reply
from sleuth.llm.offline.text import (
    NumberedBlock,
    PageSentence,
    announces_list,
    as_markdown,
    defined_term,
    entry_name,
    fenced,
    first_paragraph,
    illustrated_sentences,
    is_dangling,
    is_navigation_page,
    jaccard,
    numbered_blocks,
    rarity,
    term_set,
    tokens,
)
from sleuth.llm.prompt_facts import AgentReportFacts, read_tagged
from sleuth.llm.prompting import render

DEFAULT_REPORT_TOKENS = 1200
# Sibling agents that open the page on the subject quote its best sentences alike: room for more of
# them lets the report reach the facts further down that page, which the pages read by the way lack.
# Forty sentences are still well within the tokens the prompt allows an agent's report.
MAX_REPORT_SENTENCES = 40
# The spreading pass stops short of the whole report: the paragraphs it starts and the sections on
# the task's subject (read next) would otherwise find every place taken by other pages' sentences.
SPREAD_PLACES = 18
MAX_PER_SOURCE = 26  # the page about the question may fill most of a report before weaker pages add theirs
MAX_PER_HEADING = 2  # first pass: a page's entries each get a say before one entry gets more
SPREAD_FLOOR = 0.5  # of the best score: what the first pass takes at all
OTHER_PAGES_FLOOR = 0.35  # of the best score: what the second pass takes while a page may give more
MIN_RELEVANCE = 0.9
SHORT_SENTENCE_WORDS = 6
DUPLICATE_JACCARD = 0.6
HEADING_SHARE = 0.5
LEAD_BONUS = 2.0
TERM_HEADING_SHARE = 1.0  # under a defined term ("- spawn"), every sentence is about that term
HEADING_CAP = 4.0
PAGE_TITLE_BONUS = 1.5
ENTRY_NAMED_WITHIN = 4  # words: a sentence that names its entry this early needs no label
# Sections whose heading names the task's subject are read whole, as a person reads the entry on
# `asyncio.wait_for` or the section "Mutable default values": their sentences answer the task even
# when they share none of its words ("To avoid the task cancellation, wrap it in shield()").
FOCUS_SECTIONS = 3
FOCUS_SECTION_SENTENCES = 5
FOCUS_HEADING_SHARE = 0.5
CONTINUED_PARAGRAPHS = 3  # the strongest sentences whose paragraph the report goes on reading
CONTINUED_SENTENCES = 2
# A sentence that announces a list ("the following extra precautions might be justified.") is read on
# into that many of its items: they are what it announces, in words of their own.
LIST_SENTENCES = 6
MAX_PASSAGE = 3  # sentences of a paragraph quoted in a row as one passage
MAX_LIST_PASSAGE = 1 + LIST_SENTENCES  # a list's introduction and what it announces, in a row


_NAMED_SUBJECT = re.compile(r"""^["'`]?[\w.()-]+["'`]?: \S""")


def approx_tokens(text: str) -> int:
    """Cheap token estimate (about 4 characters per token) for sizing output to a budget."""
    return max(1, len(text) // 4)


# ---- intermediate report -------------------------------------------------------------------


@dataclass
class Candidate:
    sentence: str
    number: int
    position: int  # order within its page, to keep the page's reading order
    score: float
    heading: str
    terms: set[str]
    label: str = ""  # the entry or term the sentence describes, when it does not name it itself
    example: str = ""  # the code example after its paragraph on the page
    next_in_paragraph: Candidate | None = None  # the sentence that follows it in its paragraph
    # the sentence right after it on the page, when that is a candidate: in its paragraph, or the first
    # of a list the paragraph ends above
    next_on_page: Candidate | None = None
    announces: bool = False  # it announces a list whose items follow it on the page
    paragraph: int = 0  # of the page (PageSentence.paragraph)
    list_run: int | None = None  # of a list item: the paragraph its list follows (PageSentence.list_run)


def _sources(request: OfflineRequest) -> list[NumberedBlock]:
    """Every numbered source the model was shown, the fullest text per number.

    The engine lists the agent's sources in the report step's user message (opened pages with
    their text, unopened results with their snippet). Without such a list, the tool results in
    the conversation are read instead: opened pages whole, search results' one-line snippets.
    """
    found: list[NumberedBlock] = []
    for text in request.texts("user"):
        for _, listing in read_tagged(text, "sources"):
            found.extend(numbered_blocks(listing))
    if not found:
        for exchange in request.exchanges():
            if exchange.name == "open_url" and exchange.result:
                found.extend(numbered_blocks(exchange.result))
            elif exchange.name == "search" and exchange.result:
                found.extend(first_paragraph(block) for block in numbered_blocks(exchange.result))
    best: dict[int, NumberedBlock] = {}
    for block in found:
        if block.number not in best or len(block.body) > len(best[block.number].body):
            best[block.number] = block
    return [best[number] for number in sorted(best)]


def _names_entry(sentence: str, name: str) -> bool:
    """Whether a sentence says which entry it describes: it calls it ("rank() returns ...") or opens
    on it. One that mentions the name further on ("The row_number() of the first peer - the rank of
    the current row") describes something else unless labelled."""
    return f"{name}(" in sentence or name in tokens(sentence)[:ENTRY_NAMED_WITHIN]


def _label(heading: str, sentence: str) -> str:
    """What goes in front of a sentence whose heading names its subject: "`secrets.token_hex()`: "
    for an API entry, "spawn: " for a defined term; "" when the sentence names it itself."""
    entry = entry_name(heading)
    if entry:
        return "" if _names_entry(sentence, entry.rsplit(".", 1)[-1]) else f"`{entry}()`: "
    term = defined_term(heading)
    if not term or term.lower() in sentence.lower() or _opens_on_a_name(sentence):
        # a sentence that opens on a name of its own ("The SQLITE_IOCAP_SAFE_APPEND value means …")
        # says what it describes; a term above it is the last of a list the excerpt cut short
        return ""
    return f"{term}: "


_CODE_TOKEN = re.compile(r"\w+_\w+|\w+\(\)")


def _opens_on_a_name(sentence: str) -> bool:
    return any(_CODE_TOKEN.fullmatch(word.strip("`\"'.,:;")) for word in sentence.split()[:ENTRY_NAMED_WITHIN])


def _score(
    sentence: str, heading: str, terms: TaskTerms, rare: dict[str, float], *, lead: bool = False, section: str = ""
) -> tuple[float, float, set[str]]:
    """(ranking score, relevance, terms): relevance decides eligibility, the score the order.

    Relevance counts the sentence's own terms and, at a discount, those of the heading it sits
    under: in a reference manual the sentences below "@functools.lru_cache(maxsize=128)" are
    about lru_cache even when they only say "the wrapped function". Under a defined term or an
    entry the heading counts in full, and the `lead` sentence (the first below it, where such
    entries give their definition) gains up to LEAD_BONUS when the heading is on the task."""
    sentence_terms = term_set(sentence)
    relevance = terms.weight(sentence_terms, rare)
    # the name an entry defines ("tee" of "itertools.tee(iterable, n=2)"), not the module every
    # entry of the page shares
    name = term_set(entry_name(heading).rsplit(".", 1)[-1] or defined_term(heading))
    # under a term, a label or a list's introduction, the section they stand in still says what the
    # sentence is about: "Do not enable memory-mapped I/O." under "Untrusted SQLite Database Files"
    context = term_set(f"{heading} {section}") - name - sentence_terms
    relevance += TERM_HEADING_SHARE * min(HEADING_CAP, terms.weight(name - sentence_terms, rare))
    relevance += HEADING_SHARE * min(HEADING_CAP, terms.weight(context, rare))
    if lead:
        # not discounted by rarity: on a page where every sentence says "fork", the entry named
        # "fork" is still the one that defines it, and its first sentence is that definition
        relevance = max(relevance, terms.weight(name))
    score = relevance + 0.75 * terms.cue_bonus(sentence)
    if lead:
        score += LEAD_BONUS * min(1.0, terms.weight(name) / 2.0)
    if len(tokens(sentence)) < SHORT_SENTENCE_WORDS and not _NAMED_SUBJECT.match(sentence):
        # short sentences are rarely self-contained facts ("... improved as well."), unless they
        # open with what they are about, as a table row does ('"ignore": never print matching warnings.')
        score *= 0.6
    if is_dangling(sentence):
        score *= 0.5  # "It ..." / "This ..." lose their referent once extracted
    score /= 1.0 + len(tokens(sentence)) / 60.0  # prefer crisp sentences over long ones
    return score, relevance, sentence_terms


def heading_subject(heading: str) -> set[str]:
    """The terms a section heading names: an entry's or a defined term's own name ("wait_for" of
    "coroutine asyncio.wait_for(aw, timeout)"), else its words without a section number ("2.1.")."""
    name = entry_name(heading) or defined_term(heading)
    if name:
        return term_set(name.rsplit(".", 1)[-1])
    return term_set(re.sub(r"^[\d.\s]+", "", heading))


def focus_sections(headings: list[tuple[int, str]], terms: TaskTerms) -> list[tuple[int, str]]:
    """Of (page number, heading) pairs, those whose heading names the task's focus, best first: at
    least one focus term, and no more than half of the heading's words off the task."""
    scored: list[tuple[float, int, str]] = []
    for number, heading in headings:
        named = heading_subject(heading) - terms.domain
        hits = named & terms.focus
        if hits and len(named & (terms.focus | terms.background)) >= FOCUS_HEADING_SHARE * len(named):
            scored.append((len(hits) + len(hits) / len(named), number, heading))
    scored.sort(key=lambda item: -item[0])
    return [(number, heading) for _, number, heading in scored[:FOCUS_SECTIONS]]


def _read_on(
    starts: list[Candidate],
    chosen: list[Candidate],
    count: int,
    step: Callable[[Candidate], Candidate | None],
    within: Callable[[Candidate, Candidate], bool] = lambda start, following: True,
) -> list[Candidate]:
    """Up to `count` sentences after each start, following `step` while `within` holds, that are not
    chosen yet, in the starts' order."""
    out: list[Candidate] = []
    for start in starts:
        following = step(start)
        for _ in range(count):
            if following is None or not within(start, following):
                break
            if following not in chosen and following not in out:
                out.append(following)
            following = step(following)
    return out


def _continuations(chosen: list[Candidate]) -> list[Candidate]:
    """The next CONTINUED_SENTENCES sentences of the paragraph of each of the strongest sentences
    chosen, best paragraph first."""
    strongest = sorted(chosen, key=lambda c: -c.score)[:CONTINUED_PARAGRAPHS]
    return _read_on(strongest, chosen, CONTINUED_SENTENCES, lambda c: c.next_in_paragraph)


def _in_announced_list(start: Candidate, following: Candidate) -> bool:
    """Whether `following` is the rest of the paragraph of `start`, or an item of the list it announces."""
    run = start.paragraph if start.list_run is None else start.list_run
    return following.paragraph == start.paragraph or following.list_run == run


def _announced(chosen: list[Candidate]) -> list[Candidate]:
    """What each chosen sentence that announces a list goes on to say, strongest sentence first: the
    rest of its paragraph and the list's items, as far as they follow each other on the page."""
    announcing = [c for c in sorted(chosen, key=lambda c: -c.score) if c.announces]
    return _read_on(announcing, chosen, LIST_SENTENCES, lambda c: c.next_on_page, _in_announced_list)


def _announcing(sentences: list[PageSentence]) -> set[int]:
    """The positions of a page's sentences that announce a list with items below them: a paragraph's
    sentence, the list right after its paragraph; an item's, the later items of its own list."""
    last_item: dict[int, int] = {}  # list run -> position of its last item's first sentence
    for position, found in enumerate(sentences):
        if found.opens_item and found.list_run is not None:
            last_item[found.list_run] = position
    return {
        position
        for position, found in enumerate(sentences)
        if last_item.get(found.paragraph if found.list_run is None else found.list_run, -1) > position
        and announces_list(found.text)
    }


def _budget(request: OfflineRequest, facts: AgentReportFacts | None) -> int:
    hint = facts.max_tokens if facts else DEFAULT_REPORT_TOKENS
    return min(hint, request.max_tokens or hint)


def agent_report(request: OfflineRequest) -> Reply:
    facts = request.facts(AgentReportFacts)
    task = facts.task if facts else request.first_user
    terms = task_terms(task)
    sources = _sources(request)

    # Tables of contents and indexes name everything and explain nothing.
    per_page = [(page, illustrated_sentences(page.body)) for page in sources if not is_navigation_page(page.body)]
    all_terms = [term_set(s.heading + " " + s.text) for _, sentences in per_page for s in sentences]
    rare = rarity(all_terms, set(terms.focus | terms.background))
    candidates: list[Candidate] = []
    sections: dict[tuple[int, str], list[Candidate]] = {}
    for page, sentences in per_page:
        # a page whose title names the subject is where the subject is explained
        prior = PAGE_TITLE_BONUS * min(1.0, terms.weight(term_set(page.title), rare) / 2.0)
        previous: Candidate | None = None
        announcing = _announcing(sentences)
        for position, found in enumerate(sentences):
            heading, sentence = found.heading, found.text
            lead = position == 0 or sentences[position - 1].heading != heading
            score, relevance, sentence_terms = _score(sentence, heading, terms, rare, lead=lead, section=found.section)
            label = _label(heading, sentence)
            candidate = Candidate(
                sentence,
                page.number,
                position,
                score + prior,
                heading,
                sentence_terms,
                label,
                found.example,
                paragraph=found.paragraph,
                list_run=found.list_run,
                announces=position in announcing,
            )
            if previous is not None and sentences[position - 1].paragraph == found.paragraph:
                previous.next_in_paragraph = candidate
            if previous is not None and found.follows:
                previous.next_on_page = candidate
            previous = candidate
            if heading:
                sections.setdefault((page.number, heading), []).append(candidate)
            if relevance >= MIN_RELEVANCE:  # about one distinctive focus term, or several common ones
                candidates.append(candidate)

    chosen: list[Candidate] = []
    budget = int(_budget(request, facts) * 0.9)
    spent = 0
    ranked = sorted(candidates, key=lambda c: (-c.score, c.number, c.position))
    # The first pass leaves room for other pages (one page rarely tells the whole story) and for
    # the other entries of a page (a question about three options wants each one's definition);
    # the second lets an entry that is the whole answer say more; the third fills what is left.
    # The spreading pass takes only strong sentences, so weak ones from other entries do not use up
    # a page's share before the entry that answers the task has said what it can.
    top = ranked[0].score if ranked else 0.0
    passes = (
        (MAX_PER_SOURCE, MAX_PER_HEADING, SPREAD_FLOOR * top),
        (MAX_PER_SOURCE, MAX_REPORT_SENTENCES, OTHER_PAGES_FLOOR * top),
        (MAX_REPORT_SENTENCES, MAX_REPORT_SENTENCES, 0.0),
    )
    focus = [
        candidate
        for key in focus_sections(list(sections), terms)
        for candidate in [c for c in sections[key] if not is_dangling(c.sentence)][:FOCUS_SECTION_SENTENCES]
    ]
    for pass_index, (per_source, per_heading, min_score) in enumerate(passes):
        # After the spreading pass, a strong sentence's paragraph goes on: the sentences after it
        # finish its thought ("If you want ... use multiprocessing", "However, threading is still
        # ...") though they share no word with the task. Then the sections on the task's subject
        # are read in their own order.
        # Those are read whatever their score; the ranked sentences of other pages must be strong
        # enough to take a place the page on the subject could fill with a better one.
        read_on = _continuations(chosen) + _announced(chosen) + focus if pass_index == 1 else []
        unscored = {id(candidate) for candidate in read_on}
        room = SPREAD_PLACES if pass_index == 0 else MAX_REPORT_SENTENCES
        for candidate in read_on + ranked:
            if len(chosen) >= room:
                break
            if candidate.score < min_score and id(candidate) not in unscored:
                continue
            if candidate in chosen or sum(1 for c in chosen if c.number == candidate.number) >= per_source:
                continue
            same_entry = sum(1 for c in chosen if c.number == candidate.number and c.heading == candidate.heading)
            if candidate.heading and same_entry >= per_heading:
                continue
            if any(jaccard(candidate.terms, other.terms) >= DUPLICATE_JACCARD for other in chosen):
                continue
            cost = approx_tokens(candidate.sentence) + 2
            if candidate.example and all(c.example != candidate.example for c in chosen):
                cost += approx_tokens(candidate.example) + 4
            if spent + cost > budget:
                continue
            chosen.append(candidate)
            spent += cost
    if not chosen:
        return Reply(text=render("offline/agent_no_findings"))

    # One paragraph per source, best source first, sentences in the page's own order.
    best_rank: dict[int, int] = {}
    for rank, candidate in enumerate(chosen):
        best_rank.setdefault(candidate.number, rank)
    paragraphs = []
    for number in sorted(best_rank, key=best_rank.__getitem__):
        in_order = sorted((c for c in chosen if c.number == number), key=lambda c: c.position)
        quoted: list[str] = []
        run = 1  # sentences of one paragraph quoted in a row, under one citation
        limit = MAX_PASSAGE
        for index, candidate in enumerate(in_order):
            if run == 1:  # a passage that announces a list goes on into it
                limit = MAX_LIST_PASSAGE if candidate.announces else MAX_PASSAGE
            following = in_order[index + 1] if index + 1 < len(in_order) else None
            # Sentences that follow each other on the page are one passage: one citation after the
            # last keeps them together wherever the final report puts them ("However, threading is
            # still an appropriate model" means nothing away from the sentence before it).
            joined = following is not None and candidate.next_on_page is following and run < limit
            # "Return a random byte string." says what, not of which function: the entry's name, copied
            # from its heading, goes in front of a passage (not inside it)
            label = candidate.label if run == 1 else ""
            run = run + 1 if joined else 1
            marker = "" if joined else f" [{number}]"
            quoted.append(f"{label}{as_markdown(candidate.sentence)}{marker}")
            if candidate.example and (following is None or following.example != candidate.example):
                # the statement the paragraph describes, after the last sentence quoted from it
                paragraphs.extend([" ".join(quoted), fenced(candidate.example)])
                quoted = []
        if quoted:
            paragraphs.append(" ".join(quoted))
    return Reply(text="\n\n".join(paragraphs))
