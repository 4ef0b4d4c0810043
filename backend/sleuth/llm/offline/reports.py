"""The two writing steps: the agent's intermediate report and the final report.

Both are extractive. An intermediate report is a set of sentences copied (whitespace aside)
from the pages the agent opened, each followed by the [n] that page carried. The final report
rearranges those cited sentences under the plan's steps, keeping their citations.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sleuth.llm.offline.agent import TaskTerms, task_terms
from sleuth.llm.offline.request import OfflineRequest, Reply
from sleuth.llm.offline.text import (
    CitedUnit,
    NumberedBlock,
    as_markdown,
    cited_units,
    defined_term,
    entry_name,
    first_paragraph,
    is_dangling,
    is_navigation_page,
    jaccard,
    numbered_blocks,
    overlap,
    rarity,
    sectioned_sentences,
    term_set,
    tokens,
)
from sleuth.llm.prompt_facts import AgentReportFacts, ReportFacts, read_tagged
from sleuth.llm.prompting import render

DEFAULT_REPORT_TOKENS = 1200
MAX_REPORT_SENTENCES = 20
MAX_PER_SOURCE = 12  # the page about the question may fill most of a report before weaker pages add theirs
MAX_PER_HEADING = 2  # first pass: a page's entries each get a say before one entry gets more
SPREAD_FLOOR = 0.5  # of the best score: what the first pass takes at all
MIN_RELEVANCE = 0.9
SHORT_SENTENCE_WORDS = 6
SECTION_SENTENCES = 4
MAX_SECTION_SENTENCES = 6
QUESTION_SHARE = 0.5  # a section prefers, among its step's sentences, those on the question asked
SOURCE_SHARE = 0.75  # and those from the sources the agents quoted most
SUMMARY_SENTENCES = 2
DUPLICATE_JACCARD = 0.6
HEADING_SHARE = 0.5
LEAD_BONUS = 2.0
TERM_HEADING_SHARE = 1.0  # under a defined term ("- spawn"), every sentence is about that term
HEADING_CAP = 4.0
PAGE_TITLE_BONUS = 1.5
# Sections whose heading names the task's subject are read whole, as a person reads the entry on
# `asyncio.wait_for` or the section "Mutable default values": their sentences answer the task even
# when they share none of its words ("To avoid the task cancellation, wrap it in shield()").
FOCUS_SECTIONS = 3
FOCUS_SECTION_SENTENCES = 5
FOCUS_HEADING_SHARE = 0.5


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


def _label(heading: str, sentence: str) -> str:
    """What goes in front of a sentence whose heading names its subject: "`secrets.token_hex()`: "
    for an API entry, "spawn: " for a defined term; "" when the sentence names it itself."""
    entry = entry_name(heading)
    if entry:
        return "" if entry.rsplit(".", 1)[-1] in sentence else f"`{entry}()`: "
    term = defined_term(heading)
    return "" if not term or term.lower() in sentence.lower() else f"{term}: "


def _score(
    sentence: str, heading: str, terms: TaskTerms, rare: dict[str, float], *, lead: bool = False
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
    context = term_set(heading) - name - sentence_terms
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


def _budget(request: OfflineRequest, facts: AgentReportFacts | None) -> int:
    hint = facts.max_tokens if facts else DEFAULT_REPORT_TOKENS
    return min(hint, request.max_tokens or hint)


def agent_report(request: OfflineRequest) -> Reply:
    facts = request.facts(AgentReportFacts)
    task = facts.task if facts else request.first_user
    terms = task_terms(task)
    sources = _sources(request)

    # Tables of contents and indexes name everything and explain nothing.
    per_page = [(page, sectioned_sentences(page.body)) for page in sources if not is_navigation_page(page.body)]
    all_terms = [term_set(heading + " " + sentence) for _, sentences in per_page for heading, sentence in sentences]
    rare = rarity(all_terms, set(terms.focus | terms.background))
    candidates: list[Candidate] = []
    sections: dict[tuple[int, str], list[Candidate]] = {}
    for page, sentences in per_page:
        # a page whose title names the subject is where the subject is explained
        prior = PAGE_TITLE_BONUS * min(1.0, terms.weight(term_set(page.title), rare) / 2.0)
        for position, (heading, sentence) in enumerate(sentences):
            lead = position == 0 or sentences[position - 1][0] != heading
            score, relevance, sentence_terms = _score(sentence, heading, terms, rare, lead=lead)
            label = _label(heading, sentence)
            candidate = Candidate(sentence, page.number, position, score + prior, heading, sentence_terms, label)
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
    floor = SPREAD_FLOOR * ranked[0].score if ranked else 0.0
    passes = (
        (MAX_PER_SOURCE, MAX_PER_HEADING, floor),
        (MAX_PER_SOURCE, MAX_REPORT_SENTENCES, 0.0),
        (MAX_REPORT_SENTENCES, MAX_REPORT_SENTENCES, 0.0),
    )
    focus = [
        candidate
        for key in focus_sections(list(sections), terms)
        for candidate in [c for c in sections[key] if not is_dangling(c.sentence)][:FOCUS_SECTION_SENTENCES]
    ]
    for pass_index, (per_source, per_heading, min_score) in enumerate(passes):
        # after the spreading pass, the sections on the task's subject are read in their own order
        ranked_now = focus + ranked if pass_index == 1 else ranked
        for candidate in ranked_now:
            if len(chosen) >= MAX_REPORT_SENTENCES or candidate.score < min_score:
                break
            if candidate in chosen or sum(1 for c in chosen if c.number == candidate.number) >= per_source:
                continue
            same_entry = sum(1 for c in chosen if c.number == candidate.number and c.heading == candidate.heading)
            if candidate.heading and same_entry >= per_heading:
                continue
            if any(jaccard(candidate.terms, other.terms) >= DUPLICATE_JACCARD for other in chosen):
                continue
            cost = approx_tokens(candidate.sentence) + 2
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
        # "Return a random byte string." says what, not of which function: the entry's name, copied
        # from its heading, goes in front
        paragraphs.append(" ".join(f"{c.label}{as_markdown(c.sentence)} [{number}]" for c in in_order))
    return Reply(text="\n\n".join(paragraphs))


# ---- final report --------------------------------------------------------------------------


@dataclass
class Finding:
    task: str
    units: list[CitedUnit]
    plan_step: int | None = None  # 1-based


@dataclass
class ReportInput:
    question: str
    plan: list[str]
    findings: list[Finding]
    partial: bool


def read_report_input(request: OfflineRequest) -> ReportInput:
    """The report step's facts, with each finding's text from its tagged block."""
    facts = request.facts(ReportFacts)
    user = request.last_user or request.first_user
    bodies = [body for _, body in read_tagged(user, "finding")]
    if facts is None:  # not a Sleuth report prompt: the user's text is the only material
        return ReportInput("", [], [Finding(task="", units=cited_units(user))], False)
    findings = [
        Finding(task=finding.task, units=cited_units(body), plan_step=finding.plan_step)
        for finding, body in zip(facts.findings, bodies, strict=False)
    ]
    return ReportInput(facts.question, facts.plan, findings, facts.partial)


def _assign(findings: list[Finding], plan: list[str]) -> dict[int, list[int]]:
    """Which findings belong to which plan step (by the step text in the task, else overlap)."""
    owners: dict[int, list[int]] = {i: [] for i in range(len(plan))}
    for f_index, finding in enumerate(findings):
        if finding.plan_step is not None and 1 <= finding.plan_step <= len(plan):
            owners[finding.plan_step - 1].append(f_index)
            continue
        task = finding.task.lower()
        exact = [i for i, step in enumerate(plan) if step.lower() in task]
        if exact:
            owners[exact[0]].append(f_index)
            continue
        task_terms_ = term_set(finding.task)
        scores = [(overlap(task_terms_, term_set(step)), -i) for i, step in enumerate(plan)]
        if scores:
            best_score, neg_index = max(scores)
            if best_score > 0:
                owners[-neg_index].append(f_index)
    return owners


def section_size(step: str) -> int:
    """Sentences a section may hold: more when its step asks about several things ("spawn, fork
    and forkserver"), one per extra item, within a bound so the report stays readable."""
    items = 1 + len(re.findall(r",\s*\S|\s(?:and|or)\s", step))
    return min(MAX_SECTION_SENTENCES, SECTION_SENTENCES + items - 1)


def _pick(pool: list[tuple[float, CitedUnit]], used: list[CitedUnit], limit: int) -> list[CitedUnit]:
    picked: list[CitedUnit] = []
    for _, unit in sorted(pool, key=lambda item: -item[0]):
        if len(picked) >= limit:
            break
        unit_terms = term_set(unit.bare)
        if any(
            unit.bare == other.bare or jaccard(unit_terms, term_set(other.bare)) >= DUPLICATE_JACCARD
            for other in used + picked
        ):
            continue
        picked.append(unit)
    return picked


def final_report(request: OfflineRequest) -> Reply:
    data = read_report_input(request)
    plan = data.plan or [finding.task for finding in data.findings if finding.task] or [data.question]
    question_terms = term_set(data.question)
    all_units = [(f_index, unit) for f_index, finding in enumerate(data.findings) for unit in finding.units]
    used: list[CitedUnit] = []

    # Where the research found most: the source the agents quoted most is the one about the
    # question; a page one agent opened by the way ("pickle" for a question on json) has a sentence
    # or two that share the step's words without answering it.
    quoted: dict[int, int] = {}
    for _, unit in all_units:
        for number in set(unit.numbers):
            quoted[number] = quoted.get(number, 0) + 1
    most = max(quoted.values(), default=1)

    def centrality(unit: CitedUnit) -> float:
        return max((quoted.get(number, 0) for number in unit.numbers), default=0) / most

    # Summary: the sentences that overlap the question most, from different findings if possible.
    summary_pool = [
        (
            overlap(term_set(unit.bare), question_terms) * 2
            + SOURCE_SHARE * centrality(unit)
            - (0.5 if is_dangling(unit.bare) else 0)
            - f_index * 0.01,
            unit,
        )
        for f_index, unit in all_units
    ]
    summary = _pick(summary_pool, used, SUMMARY_SENTENCES)
    used.extend(summary)

    owners = _assign(data.findings, plan)
    step_terms = [term_set(step) for step in plan]
    step_kinds = [task_terms(step) for step in plan]  # what kind of fact each step asks for

    def section_score(s_index: int, f_index: int, unit: CitedUnit) -> float:
        owned = f_index in owners.get(s_index, [])
        relevance = overlap(term_set(unit.bare), step_terms[s_index])
        if not owned and relevance < 0.34:
            return -1.0  # a sentence from another step's finding must at least be on this step's topic
        return (
            (1.0 if owned else 0.0)
            + relevance
            + QUESTION_SHARE * overlap(term_set(unit.bare), question_terms)
            + SOURCE_SHARE * centrality(unit)
            + 0.25 * step_kinds[s_index].cue_bonus(unit.bare)
            - (0.3 if is_dangling(unit.bare) else 0.0)
        )

    # Sections draft in turns, each taking its best remaining sentence, so that agents that
    # found the same facts do not leave the later steps empty.
    picked: list[list[CitedUnit]] = [[] for _ in plan]
    sizes = [section_size(step) for step in plan]
    for turn in range(max(sizes)):
        for s_index in range(len(plan)):
            if turn >= sizes[s_index]:
                continue
            pool = [(section_score(s_index, f_index, unit), unit) for f_index, unit in all_units]
            choice = _pick([item for item in pool if item[0] >= 0], used, 1)
            if choice:
                picked[s_index].extend(choice)
                used.extend(choice)
    sections = [
        f"## {as_markdown(step)}\n\n"
        + (" ".join(unit.text for unit in units) if units else render("offline/section_gap"))
        for step, units in zip(plan, picked, strict=True)
    ]

    # The summary says what the research could not answer, so a reader need not find the gaps.
    in_summary = {id(unit) for unit in summary}
    gaps = [
        step
        for s_index, (step, units) in enumerate(zip(plan, picked, strict=True))
        if not units
        and not any(
            id(unit) in in_summary for f_index in owners.get(s_index, []) for unit in data.findings[f_index].units
        )
    ]
    parts = [" ".join(unit.text for unit in summary)] if summary else []
    if gaps:
        parts.append(render("offline/unanswered", steps=[as_markdown(step) for step in gaps], everything=not summary))
    parts.extend(sections)
    parts.append(render("offline/extractive_note", partial=data.partial))
    text = "\n\n".join(parts)
    if request.max_tokens and approx_tokens(text) > request.max_tokens:
        text = text[: request.max_tokens * 4].rsplit("\n", 1)[0]  # a real model stops at its limit too
    return Reply(text=text)
