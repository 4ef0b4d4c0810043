"""The two writing steps: the agent's intermediate report and the final report.

Both are extractive. An intermediate report is a set of sentences copied (whitespace aside)
from the pages the agent opened, each followed by the [n] that page carried. The final report
rearranges those cited sentences under the plan's steps, keeping their citations.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from sleuth.core.words import stem
from sleuth.llm.offline.agent import TaskTerms, task_terms
from sleuth.llm.offline.planner import analyse, clauses
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
from sleuth.llm.offline.vocabulary import looks_english
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
LEAD_SENTENCES = 3  # the opening paragraph: enough to answer, short enough to read first
SUPPORT_SHARE = 0.25  # per extra agent that quoted the same sentence
SUBJECT_WORDS = 5  # a sentence that names the subject in its first words is about it
SUBJECT_BONUS = 0.5
# A phrase the question names ("json.dumps serialise objects": the planner's noun phrases may keep a
# verb) is named by a sentence that holds this share of its terms.
SUBJECT_COVERAGE = 0.6
SHORT_SUBJECT = 3
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


# Words that lean on a sentence the reader has not seen ("support this specification", "In
# contrast, ..."): fine inside a section, a poor way to open a report.
_POINTS_BACK = re.compile(
    r"\b(?:this|these|those|such|the latter|the former|in contrast|as a result|otherwise|instead)\b", re.I
)
POINTS_BACK_PENALTY = 0.75

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


def _is_near(unit: CitedUnit, others: list[CitedUnit]) -> bool:
    unit_terms = term_set(unit.bare)
    return any(
        unit.bare == other.bare or jaccard(unit_terms, term_set(other.bare)) >= DUPLICATE_JACCARD for other in others
    )


def _pick(pool: list[tuple[float, CitedUnit]], used: list[CitedUnit], limit: int) -> list[CitedUnit]:
    picked: list[CitedUnit] = []
    for _, unit in sorted(pool, key=lambda item: -item[0]):
        if len(picked) >= limit:
            break
        if not _is_near(unit, used + picked):
            picked.append(unit)
    return picked


@dataclass
class Part:
    """One part of the question, as the question words it: a sub-question ("How do they interact
    with try/finally?"), or the whole question when it asks one thing."""

    text: str
    terms: set[str]  # its content words, the domain ("Python") left out
    subjects: list[set[str]]  # the terms of each thing it asks about; an answer names one of them whole
    cues: TaskTerms  # what kind of fact it asks for


def question_parts(question: str) -> list[Part]:
    """The question's parts, each with what a sentence must name to answer it directly."""
    texts = clauses(question) if looks_english(question) else []
    parts = []
    for text in texts or [question]:
        cues = task_terms(text)
        domain = set(cues.domain)
        subjects = [terms for phrase in analyse(text).subjects if (terms := term_set(phrase) - domain)]
        parts.append(Part(text=text, terms=term_set(text) - domain, subjects=subjects, cues=cues))
    return parts


def answers_directly(part: Part, unit: CitedUnit) -> bool:
    """Whether a sentence can open the report for this part: it names one of the things the part asks
    about (all of a short phrase, most of a long one: "generator" and "close", not a file's close()),
    or, when the part names none, two of its words. A sentence that points back ("It ...",
    "However, ...") cannot open anything."""
    if is_dangling(unit.bare) or not part.terms:
        return False
    terms = term_set(unit.bare)
    if part.subjects:
        return any(len(subject & terms) >= _needed(subject) for subject in part.subjects)
    return len(terms & part.terms) >= min(2, len(part.terms))


def _needed(subject: set[str]) -> int:
    """How many of a subject's terms a sentence must hold: all of a short one ("smoke tests fail" is
    not "smoke tests"), most of a long one."""
    return len(subject) if len(subject) <= SHORT_SUBJECT else math.ceil(SUBJECT_COVERAGE * len(subject))


def announces_what_was_dropped(unit: CitedUnit) -> bool:
    """A sentence ending in ':' announced a list, code or example the agent could not copy."""
    return unit.bare.rstrip().endswith(":")


def _part_of(step: str, parts: list[Part]) -> int:
    """The part of the question a plan step serves: its own when the step is that sub-question (a
    scope may follow it), else the one whose words it shares most (the first on a tie)."""
    lowered = step.lower()
    for index, part in enumerate(parts):
        if lowered.startswith(part.text.lower()):
            return index
    terms = term_set(step)
    scores = [(overlap(terms, part.terms), -index) for index, part in enumerate(parts)]
    return -max(scores)[1] if scores else 0


def final_report(request: OfflineRequest) -> Reply:
    """The report: a first paragraph that answers the question, then what each part of it found.

    One decision per plan step: every cited sentence goes to at most one step, either into the opening
    paragraph (the sentences that answer a part of the question directly, best supported first) or
    into the step's paragraph. A part of the question none of whose steps got a sentence is named once,
    as not answered; nothing the report says is also called unanswered, and no sentence is used twice.
    Headings are the question's own sub-questions, and only when it asks several things.
    """
    data = read_report_input(request)
    plan = data.plan or [finding.task for finding in data.findings if finding.task] or [data.question]
    parts = question_parts(data.question or plan[0])
    question_terms = term_set(data.question)

    # Every sentence once, each copy counted: a sentence several agents quoted is better supported.
    finders: dict[str, set[int]] = {}  # which findings hold each sentence
    all_units: list[tuple[int, CitedUnit]] = []
    for f_index, finding in enumerate(data.findings):
        for unit in finding.units:
            if announces_what_was_dropped(unit):
                continue
            if unit.bare not in finders:
                all_units.append((f_index, unit))
            finders.setdefault(unit.bare, set()).add(f_index)
    support = {bare: len(found_in) for bare, found_in in finders.items()}

    # Where the research found most: the source the agents quoted most is the one about the
    # question; a page one agent opened by the way ("pickle" for a question on json) has a sentence
    # or two that share the step's words without answering it.
    quoted: dict[int, int] = {}
    for _, unit in all_units:
        for number in set(unit.numbers):
            quoted[number] = quoted.get(number, 0) + support[unit.bare]
    most = max(quoted.values(), default=1)

    def centrality(unit: CitedUnit) -> float:
        return max((quoted.get(number, 0) for number in unit.numbers), default=0) / most

    def lead_score(part: Part, f_index: int, unit: CitedUnit) -> float:
        words = tokens(unit.bare)
        opens_on_subject = any(stem(word.lower()) in part.terms for word in words[:SUBJECT_WORDS])
        return (
            2 * overlap(term_set(unit.bare), part.terms)
            + SOURCE_SHARE * centrality(unit)
            + SUPPORT_SHARE * min(2, support[unit.bare] - 1)
            + 0.25 * part.cues.cue_bonus(unit.bare)
            + (SUBJECT_BONUS if opens_on_subject else 0.0)
            - (POINTS_BACK_PENALTY if _POINTS_BACK.search(unit.bare) else 0.0)
            - len(words) / 100
            - f_index * 0.01
        )

    # The opening paragraph: each part's best direct answer, then the next best of any part.
    candidates = [
        (lead_score(part, f_index, unit), p_index, unit)
        for p_index, part in enumerate(parts)
        for f_index, unit in all_units
        if answers_directly(part, unit)
    ]
    candidates.sort(key=lambda item: -item[0])
    lead: list[tuple[int, float, CitedUnit]] = []
    for wanted in range(len(parts)):
        best = next((c for c in candidates if c[1] == wanted and not _is_near(c[2], [u for _, _, u in lead])), None)
        if best:
            lead.append((best[1], best[0], best[2]))
    for score, p_index, unit in candidates:
        if len(lead) >= max(LEAD_SENTENCES, len(parts)):
            break
        if not _is_near(unit, [u for _, _, u in lead]):
            lead.append((p_index, score, unit))
    lead.sort(key=lambda item: (item[0], -item[1]))
    used = [unit for _, _, unit in lead]

    owners = _assign(data.findings, plan)
    step_terms = [term_set(step) for step in plan]
    step_kinds = [task_terms(step) for step in plan]  # what kind of fact each step asks for

    def section_score(s_index: int, f_index: int, unit: CitedUnit) -> float:
        owned = bool(finders[unit.bare] & set(owners.get(s_index, [])))
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

    # Steps draft in turns, each taking its best remaining sentence, so that agents that found the
    # same facts do not leave the later steps empty.
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

    step_part = [_part_of(step, parts) for step in plan]
    # a sentence of the opening paragraph answers every part it names, not only the one it was chosen for
    opening = [unit for _, _, unit in lead]
    answered = {p_index for p_index, part in enumerate(parts) if any(answers_directly(part, u) for u in opening)}
    answered |= {step_part[s] for s, units in enumerate(picked) if units}
    out: list[str] = []
    if opening:
        out.append(" ".join(unit.text for unit in opening))
    gaps = [part.text for p_index, part in enumerate(parts) if p_index not in answered]
    if not opening or (gaps and len(parts) > 1):
        out.append(
            render(
                "offline/unanswered",
                parts=[as_markdown(gap) for gap in gaps] if len(parts) > 1 else [],
                everything=not answered,
            )
        )
    for p_index, part in enumerate(parts):
        paragraphs = [
            " ".join(unit.text for unit in units)
            for s_index, units in enumerate(picked)
            if units and step_part[s_index] == p_index
        ]
        if not paragraphs:
            continue
        if len(parts) > 1:
            out.append(f"## {as_markdown(part.text)}")
        out.extend(paragraphs)
    out.append(render("offline/extractive_note", partial=data.partial))
    text = "\n\n".join(out)
    if request.max_tokens and approx_tokens(text) > request.max_tokens:
        text = text[: request.max_tokens * 4].rsplit("\n", 1)[0]  # a real model stops at its limit too
    return Reply(text=text)
