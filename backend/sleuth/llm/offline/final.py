"""The final report step: the agents' cited sentences, arranged so that a reader meets each once.

Extractive like the rest of this model. The report opens with the sentences that answer the
question directly; every other cited sentence goes to one plan step. One decision per plan step
decides both what the report says and what it calls unanswered, so it never does both for one
part of the question. Headings are the question's own sub-questions, only when it asks several.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from sleuth.core.markdown import sentence_key, sentences
from sleuth.core.words import stem
from sleuth.llm.offline.agent import TaskTerms, task_terms, titled_for
from sleuth.llm.offline.planner import analyse, clauses
from sleuth.llm.offline.reports import approx_tokens
from sleuth.llm.offline.request import OfflineRequest, Reply
from sleuth.llm.offline.text import (
    FENCE,
    CitedUnit,
    announces_what_was_dropped,
    as_markdown,
    cited_units,
    is_dangling,
    jaccard,
    overlap,
    prose_blocks,
    term_set,
    tokens,
)
from sleuth.llm.offline.vocabulary import looks_english
from sleuth.llm.prompt_facts import ReportFacts, read_tagged
from sleuth.llm.prompting import render

# Each agent quotes a few dozen sentences, most of them from the page on the subject; a step's
# paragraph of six reaches the facts further down that page, where fewer left them out.
SECTION_SENTENCES = 6
MAX_SECTION_SENTENCES = 8
# A sentence from a page the report does not cite yet: with every agent quoting the page on the
# subject at length, a page only one agent read (often the one that holds the rest of the answer)
# would otherwise lose every place to that page's lesser sentences.
NEW_SOURCE_BONUS = 0.25
ON_STEP_SHARE = 0.34  # of a step's words, in a sentence on its topic
QUESTION_SHARE = 0.5  # a step prefers, among its sentences, those on the question asked
SOURCE_SHARE = 0.75  # and those from the sources the agents quoted most
DUPLICATE_JACCARD = 0.6
LEAD_SENTENCES = 3  # the opening paragraph: enough to answer, short enough to read first
SUPPORT_SHARE = 0.25  # per extra agent that quoted the same sentence
SUBJECT_WORDS = 5  # a sentence that names the subject in its first words is about it
SUBJECT_BONUS = 0.5
SUBJECT_PAGE_BONUS = 1.0
# a sentence that names every thing the part asks about ("strings" and "a misspelled word") answers
# it before one that names only the most common of them
ALL_SUBJECTS_BONUS = 1.0
# A page whose quoted sentences together hold most of what the part asks about is on it; one that
# matches a single word of it in many places (a changelog's every "strings") is not.
PAGE_COVERAGE_SHARE = 1.0
# What a sentence must hold of a phrase the question names: all of a short one ("smoke tests fail"
# is not "smoke tests"), this share of a longer one (the planner's phrases may keep a verb:
# "json.dumps serialise objects").
SHORT_SUBJECT = 3
SUBJECT_COVERAGE = 0.6
# Words that lean on a sentence the reader has not seen ("support this specification", "In
# contrast, ..."): fine further down, a poor way to open a report.
_POINTS_BACK = re.compile(
    r"\b(?:this|these|those|such|the latter|the former|in contrast|as a result|otherwise|instead|as well)\b", re.I
)
POINTS_BACK_PENALTY = 0.75
# A list item that names an action ("Swapping journal files between two different databases.") is
# no statement: it opens on a gerund and has no verb of its own to say anything with.
_GERUND_START = re.compile(r"^[A-Z][a-z]+ing\b")
_FINITE_VERB = re.compile(
    r"\b(?:is|are|was|were|be|been|can|cannot|could|will|would|may|might|must|shall|should|does|do|did|has|have|"
    r"had|makes?|causes?|requires?|returns?|means?|gives?|allows?|lets?|takes?|leads?|results?)\b",
    re.I,
)


def _is_fragment(sentence: str) -> bool:
    return bool(_GERUND_START.match(sentence)) and not _FINITE_VERB.search(sentence)


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
    titles: dict[int, str] = field(default_factory=dict)  # source number -> its title


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
    titles = {source.number: source.title for source in facts.sources}
    return ReportInput(facts.question, facts.plan, findings, facts.partial, titles)


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
    """Sentences a step may hold: more when it asks about several things ("spawn, fork and
    forkserver"), one per extra item, within a bound so the report stays readable."""
    items = 1 + len(re.findall(r",\s*\S|\s(?:and|or)\s", step))
    return min(MAX_SECTION_SENTENCES, SECTION_SENTENCES + items - 1)


def sentences_of(unit: CitedUnit) -> set[str]:
    """The sentences of a unit: an agent quotes a passage of a page as one unit, another agent may
    quote one sentence of it alone."""
    return {sentence_key(sentence) for sentence in sentences(unit.bare)} - {""}


def _is_near(unit: CitedUnit, others: list[CitedUnit]) -> bool:
    unit_terms = term_set(unit.bare)
    own = sentences_of(unit)
    return any(
        unit.bare == other.bare
        or jaccard(unit_terms, term_set(other.bare)) >= DUPLICATE_JACCARD
        or bool(own & sentences_of(other))
        for other in others
    )


def _pick(pool: list[tuple[float, CitedUnit]], used: list[CitedUnit], limit: int) -> list[CitedUnit]:
    picked: list[CitedUnit] = []
    for _, unit in sorted(pool, key=lambda item: -item[0]):
        if len(picked) >= limit:
            break
        if not _is_near(unit, used + picked):
            picked.append(unit)
    return picked


# ---- the question's parts --------------------------------------------------------------------


@dataclass
class Part:
    """One part of the question, as the question words it: a sub-question ("How do they interact
    with try/finally?"), or the whole question when it asks one thing."""

    text: str
    terms: set[str]  # its content words, the domain ("Python") left out
    subjects: list[set[str]]  # the terms of each thing it asks about; an answer names (most of) one
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


def _needed(words: int) -> int:
    return words if words <= SHORT_SUBJECT else math.ceil(SUBJECT_COVERAGE * words)


def _names_subject(subject: set[str], terms: set[str]) -> bool:
    """Whether a sentence's terms name (most of) a subject. A dotted name and its parts are one
    word of the subject, named by its last part: `contextlib.ExitStack` by "ExitStack"."""
    dotted = [term for term in subject if "." in term]
    parts = {stem(part) for term in dotted for part in term.split(".")}
    words = [{term, stem(term.rsplit(".", 1)[-1])} for term in dotted]
    words += [{term} for term in subject - parts - set(dotted)]
    return sum(1 for word in words if word & terms) >= _needed(len(words))


def answers_directly(part: Part, unit: CitedUnit) -> bool:
    """Whether a sentence can open the report for this part: it names one of the things the part asks
    about (all of a short phrase, most of a long one: "generator" and "close", not a file's close()),
    or, when the part names none, two of its words. A sentence that points back ("It ...",
    "However, ...") cannot open anything."""
    if is_dangling(unit.bare) or not part.terms:
        return False
    terms = term_set(unit.bare)
    if part.subjects:
        # a name the question asks about ("itertools.tee") is what the answer must be about: a
        # sentence on iterators in general does not answer how tee() splits one
        named = [subject for subject in part.subjects if any(_is_name(term) for term in subject)]
        return any(_names_subject(subject, terms) for subject in named or part.subjects)
    return len(terms & part.terms) >= min(2, len(part.terms))


def _is_name(term: str) -> bool:
    return "." in term.strip(".") or "_" in term.strip("_")


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


# ---- the sentences, once each ----------------------------------------------------------------


@dataclass
class Pool:
    """Every cited sentence of the findings once, with who found it and how often its sources were quoted."""

    units: list[tuple[int, CitedUnit]] = field(default_factory=list)  # (first finding holding it, sentence)
    finders: dict[str, set[int]] = field(default_factory=dict)  # sentence -> the findings holding it
    quoted: dict[int, int] = field(default_factory=dict)  # source number -> sentences quoting it, copies counted
    quoted_by: dict[int, set[int]] = field(default_factory=dict)  # source number -> the findings quoting it
    terms: dict[int, set[str]] = field(default_factory=dict)  # source number -> the terms of its quoted sentences

    @classmethod
    def of(cls, findings: list[Finding]) -> Pool:
        pool = cls()
        for f_index, finding in enumerate(findings):
            for unit in finding.units:
                if announces_what_was_dropped(unit) and not unit.code:
                    continue
                if unit.bare not in pool.finders:
                    pool.units.append((f_index, unit))
                elif unit.code:  # another agent quoted it without its example: the example stays
                    for _, kept in pool.units:
                        if kept.bare == unit.bare and not kept.code:
                            kept.code = unit.code
                pool.finders.setdefault(unit.bare, set()).add(f_index)
        pool.absorb_parts()
        for _, unit in pool.units:
            for number in set(unit.numbers):
                pool.quoted[number] = pool.quoted.get(number, 0) + pool.support(unit)
                pool.quoted_by.setdefault(number, set()).update(pool.finders[unit.bare])
                pool.terms.setdefault(number, set()).update(term_set(unit.bare))
        return pool

    def absorb_parts(self) -> None:
        """A sentence quoted alone that another agent quoted within its passage is that passage: the
        passage stays (with both agents as its finders), so the report has it whole and once."""
        kept: list[tuple[int, CitedUnit]] = []
        parts = [(unit, sentences_of(unit)) for _, unit in self.units]
        for f_index, unit in self.units:
            own = sentences_of(unit)
            wholes = [(len(theirs), other) for other, theirs in parts if own < theirs]
            whole = max(wholes, key=lambda item: item[0])[1] if wholes else None
            if whole is None:
                kept.append((f_index, unit))
            else:
                self.finders[whole.bare] |= self.finders[unit.bare]
                whole.code = whole.code or unit.code
        self.units = kept

    def support(self, unit: CitedUnit) -> int:
        """How many findings quote the sentence: one several agents found is better supported."""
        return len(self.finders[unit.bare])

    def page_coverage(self, unit: CitedUnit, asked: set[str]) -> float:
        """The share of `asked` that the sentences quoted from the unit's best source hold."""
        return max((overlap(self.terms.get(number, set()), asked) for number in unit.numbers), default=0.0)

    def centrality(self, unit: CitedUnit) -> float:
        """Where the research found most: the source the agents quoted most is the one about the
        question; a page one agent opened by the way ("pickle" for a question on json) has a sentence
        or two that share the step's words without answering it."""
        # Agents first: a long page yields many quotable sentences to each agent that opens it, so
        # counting sentences alone ranks the longest page read above the short one on the subject
        # that every agent quoted; the sentence count only breaks ties between equally quoted pages.
        agents = max((len(by) for by in self.quoted_by.values()), default=1)
        most = max(self.quoted.values(), default=1)

        def weight(number: int) -> float:
            return 0.8 * len(self.quoted_by.get(number, ())) / agents + 0.2 * self.quoted.get(number, 0) / most

        return max((weight(number) for number in unit.numbers), default=0.0)


def opening(parts: list[Part], pool: Pool, titles: dict[int, str]) -> list[CitedUnit]:
    """The opening paragraph: each part's best direct answer, then the next best of any part, in the
    question's order. A sentence from the page titled for what the part asks about answers it
    before one from a page that mentions it in passing (a changelog's "Added the rowid API")."""

    def score(part: Part, f_index: int, unit: CitedUnit) -> float:
        words = tokens(unit.bare)
        opens_on_subject = any(stem(word.lower()) in part.terms for word in words[:SUBJECT_WORDS])
        from_subject_page = any(titled_for(titles.get(number, ""), part.cues) for number in unit.numbers)
        terms = term_set(unit.bare)
        both = len(part.subjects) > 1 and all(_names_subject(subject, terms) for subject in part.subjects)
        return (
            2 * overlap(terms, part.terms)
            + (SUBJECT_PAGE_BONUS if from_subject_page else 0.0)
            + (ALL_SUBJECTS_BONUS if both else 0.0)
            + SOURCE_SHARE * pool.centrality(unit)
            + PAGE_COVERAGE_SHARE * pool.page_coverage(unit, part.terms)
            + SUPPORT_SHARE * min(2, pool.support(unit) - 1)
            + 0.25 * part.cues.cue_bonus(unit.bare)
            + (SUBJECT_BONUS if opens_on_subject else 0.0)
            - (POINTS_BACK_PENALTY if _POINTS_BACK.search(unit.bare) else 0.0)
            - len(words) / 100
            - f_index * 0.01
        )

    candidates = sorted(
        (
            (score(part, f_index, unit), p_index, unit)
            for p_index, part in enumerate(parts)
            for f_index, unit in pool.units
            # "As a result, ..." opens nothing, nor does a list item that only names an action
            if answers_directly(part, unit) and not _POINTS_BACK.match(unit.bare) and not _is_fragment(unit.bare)
        ),
        key=lambda item: -item[0],
    )
    chosen: list[tuple[float, int, CitedUnit]] = []
    for wanted in range(len(parts)):
        best = next((c for c in candidates if c[1] == wanted and not _is_near(c[2], [u for *_, u in chosen])), None)
        if best:
            chosen.append(best)
    for candidate in candidates:
        if len(chosen) >= max(LEAD_SENTENCES, len(parts)):
            break
        if not _is_near(candidate[2], [u for *_, u in chosen]):
            chosen.append(candidate)
    chosen.sort(key=lambda item: (item[1], -item[0]))
    return [unit for *_, unit in chosen]


def steps_answers(
    plan: list[str], findings: list[Finding], question: str, pool: Pool, used: list[CitedUnit]
) -> list[list[CitedUnit]]:
    """The sentences each plan step gets, none of `used`: steps draft in turns, each taking its best
    remaining sentence, so that agents that found the same facts do not leave the later steps empty."""
    owners = _assign(findings, plan)
    question_terms = term_set(question)
    step_terms = [term_set(step) for step in plan]
    step_kinds = [task_terms(step) for step in plan]  # what kind of fact each step asks for

    def score(s_index: int, unit: CitedUnit) -> float:
        owned = bool(pool.finders[unit.bare] & set(owners.get(s_index, [])))
        newcomer = bool(picked[s_index]) and not cited.intersection(unit.numbers)
        terms = term_set(unit.bare)
        relevance = overlap(terms, step_terms[s_index])
        if not owned and relevance < ON_STEP_SHARE:
            return -1.0  # a sentence from another step's finding must at least be on this step's topic
        return (
            (1.0 if owned else 0.0)
            + relevance
            + QUESTION_SHARE * overlap(terms, question_terms)
            + SOURCE_SHARE * pool.centrality(unit)
            + 0.25 * step_kinds[s_index].cue_bonus(unit.bare)
            - (0.3 if is_dangling(unit.bare) else 0.0)
            # a step's first sentence is its best on its merits; the rest may make room for a sentence
            # on the step's topic from another page
            + (NEW_SOURCE_BONUS if newcomer and relevance >= ON_STEP_SHARE else 0.0)
        )

    used = list(used)
    cited = {number for unit in used for number in unit.numbers}
    picked: list[list[CitedUnit]] = [[] for _ in plan]
    sizes = [section_size(step) for step in plan]
    for turn in range(max(sizes, default=0)):
        for s_index in range(len(plan)):
            if turn >= sizes[s_index]:
                continue
            scored = [(score(s_index, unit), unit) for _, unit in pool.units]
            choice = _pick([item for item in scored if item[0] >= 0], used, 1)
            if choice:
                picked[s_index].extend(choice)
                used.extend(choice)
                cited.update(choice[0].numbers)
    return picked


# ---- the report ----------------------------------------------------------------------------


def final_report(request: OfflineRequest) -> Reply:
    """The report: a first paragraph that answers the question, then what each part of it found.

    Every cited sentence goes to at most one place: the opening paragraph (the sentences that answer
    a part of the question directly, best supported first) or one plan step's paragraph. A part of
    the question that got no sentence in either is named once, as not answered.
    """
    data = read_report_input(request)
    plan = data.plan or [finding.task for finding in data.findings if finding.task] or [data.question]
    parts = question_parts(data.question or plan[0])
    pool = Pool.of(data.findings)
    lead = opening(parts, pool, data.titles)
    picked = steps_answers(plan, data.findings, data.question, pool, lead)

    step_part = [_part_of(step, parts) for step in plan]
    # a sentence of the opening answers every part it names, not only the one it was chosen for
    answered = {index for index, part in enumerate(parts) if any(answers_directly(part, unit) for unit in lead)}
    answered |= {step_part[s_index] for s_index, units in enumerate(picked) if units}
    gaps = [part.text for index, part in enumerate(parts) if index not in answered]

    out: list[str] = []
    shown: set[str] = set()  # code examples already in the report
    if lead:
        out.extend(prose_blocks(lead, shown))
    if not lead or (gaps and len(parts) > 1):
        named = [as_markdown(gap) for gap in gaps] if len(parts) > 1 else []
        out.append(render("offline/unanswered", parts=named, everything=not answered))
    for index, part in enumerate(parts):
        steps = [units for s_index, units in enumerate(picked) if units and step_part[s_index] == index]
        paragraphs = [block for units in steps for block in prose_blocks(units, shown)]
        if paragraphs and len(parts) > 1:
            out.append(f"## {as_markdown(part.text)}")
        out.extend(paragraphs)
    out.append(render("offline/extractive_note", partial=data.partial))
    text = "\n\n".join(out)
    if request.max_tokens and approx_tokens(text) > request.max_tokens:
        text = text[: request.max_tokens * 4].rsplit("\n", 1)[0]  # a real model stops at its limit too
        if sum(line.startswith(FENCE) for line in text.splitlines()) % 2:
            text = text[: text.rindex(FENCE)].rstrip()  # an example cut short is no example
    return Reply(text=text)
