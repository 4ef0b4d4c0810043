"""Claim-support checking: does the document a sentence cites actually say what the sentence says?

Deterministic and model-free: each cited sentence of the report (`sentences.py`) is compared with
the best-matching passage of every document it cites, by normalised key-word and word-pair overlap;
every number in the sentence must appear in those passages; and the source sentence it matches best
must not say the opposite (a negation, an opposite word, a comparison the other way round) or lack
a name or identifier the sentence gives (`claim_facts.py`). Factual sentences with no citation, and
claims whose citations verification removed, are flagged too. Tuned to keep false alarms rare.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from sleuth.core.markdown import CITATION_REMOVED
from sleuth.research.report import claim_facts as facts
from sleuth.research.report.sentences import (
    MIN_KEY_WORDS,
    CitedSentence,
    ReportSentence,
    key_words,
    report_sentences,
    split_sentences,
)
from sleuth.stream.results import ClaimVerdict

# A citation is supported when this share of the sentence's key words is found in the passage...
SUPPORTED_COVERAGE = 0.6
# ...or when somewhat fewer are, but its word pairs show the passage says the same thing.
PARTIAL_COVERAGE = 0.45
PARTIAL_PAIRS = 0.3
# In a sentence citing several documents, a document that adds less than this is flagged.
MIN_SHARE = 0.15
_WINDOW = 3  # sentences per passage
NO_CITATION = "no citation: the report states this as fact without citing a source"
LOST = "its citation was removed in verification, so no retrieved source backs it"


@dataclass(frozen=True)
class Passage:
    text: str
    words: frozenset[str]
    pairs: frozenset[tuple[str, str]]
    numbers: frozenset[str]
    sentences: tuple[str, ...]


@dataclass(frozen=True)
class Source:
    """A cited document as the check reads it: its passages, and its whole text as names are looked up in."""

    passages: list[Passage]
    text: str


def source(text: str) -> Source:
    return Source(passages=passages(text), text=facts.mention_text(text))


def _pairs(words: list[str]) -> set[tuple[str, str]]:
    return set(zip(words, words[1:], strict=False))


def passages(text: str) -> list[Passage]:
    """Overlapping windows of a few sentences: a claim may paraphrase across a sentence boundary."""
    # Paragraphs, not lines: documents are often hard-wrapped mid-sentence.
    paragraphs = (" ".join(facts.LIST_MARKER.sub("", p).split()) for p in re.split(r"\n\s*\n", text))
    sentences = [s for paragraph in paragraphs for s in split_sentences(paragraph)]
    if not sentences:
        return []
    # Each sentence is analysed once; a window joins its sentences' words (pairs may span a boundary).
    words = [key_words(sentence) for sentence in sentences]
    numbers = [facts.numbers(sentence) for sentence in sentences]
    out: list[Passage] = []
    for start in range(max(1, len(sentences) - _WINDOW + 1)):
        end = start + _WINDOW
        joined = [w for sentence_words in words[start:end] for w in sentence_words]
        out.append(
            Passage(
                text=" ".join(sentences[start:end]),
                words=frozenset(joined),
                pairs=frozenset(_pairs(joined)),
                numbers=frozenset().union(*numbers[start:end]),
                sentences=tuple(sentences[start:end]),
            )
        )
    return out


@dataclass(frozen=True)
class Match:
    passage: Passage | None
    coverage: float  # share of the sentence's key words found
    pair_coverage: float


def best_match(sentence: str, document: list[Passage]) -> Match:
    words = set(key_words(sentence))
    pairs = _pairs(key_words(sentence))
    best = Match(None, 0.0, 0.0)
    if not words:
        return best
    for passage in document:
        coverage = len(words & passage.words) / len(words)
        pair_coverage = len(pairs & passage.pairs) / len(pairs) if pairs else coverage
        if (coverage, pair_coverage) > (best.coverage, best.pair_coverage):
            best = Match(passage, coverage, pair_coverage)
    return best


def _supported(coverage: float, pair_coverage: float) -> bool:
    return coverage >= SUPPORTED_COVERAGE or (coverage >= PARTIAL_COVERAGE and pair_coverage >= PARTIAL_PAIRS)


def _aligned(sentence: str, candidates: list[str]) -> str:
    """The source sentence that says most of what `sentence` says."""
    words = key_words(sentence)
    pairs = _pairs(words)

    def score(candidate: str) -> tuple[int, int]:
        theirs = key_words(candidate)
        return len(set(words) & set(theirs)), len(pairs & _pairs(theirs))

    return max(candidates, key=score, default="")


# Where a sentence joins statements a source makes in different places: "…: Another statement", as
# the offline report joins them.
_STATEMENTS = re.compile(r"(?<=[\w)\"”’]): (?=[A-Z_`])")


def statements(sentence: str) -> list[str]:
    """The statements a sentence joins with ": ", outside parentheses ("(default: True)" joins none)."""
    parts: list[str] = []
    start = 0
    for match in _STATEMENTS.finditer(sentence):
        if sentence.count("(", 0, match.start()) == sentence.count(")", 0, match.start()):
            parts.append(sentence[start : match.start()])
            start = match.end()
    return [*parts, sentence[start:]]


@dataclass(frozen=True)
class Reading:
    """One statement of a sentence, with the passages that match it and the source sentence that
    says most of it."""

    statement: str
    matched: list[Passage]
    aligned: str


def readings(sentence: str, documents: list[Source], matched: list[Passage]) -> list[Reading]:
    """The sentence as one statement, or each statement it joins matched on its own. A label that
    opens the sentence ("`json.dump()`: Serialize …") is not a statement: the source names it in a
    heading, not in the sentence it matches."""
    parts = statements(sentence)
    if len(parts) > 1 and len(key_words(parts[0])) < MIN_KEY_WORDS:
        parts = parts[1:]  # a label
    parts = [part for part in parts if len(key_words(part)) >= MIN_KEY_WORDS] or [": ".join(parts)]
    if len(parts) == 1:
        statement = parts[0]
        return [Reading(statement, matched, _aligned(statement, [s for p in matched for s in p.sentences]))]
    out: list[Reading] = []
    for part in parts:
        found = [m for d in documents if (m := best_match(part, d.passages).passage) is not None]
        out.append(Reading(part, found, _aligned(part, [s for p in found for s in p.sentences])))
    return out


def missing_numbers(sentence: str, matched: list[Passage], views: list[Reading]) -> list[str]:
    """Numbers of `sentence` its passages lack, or that stand where the aligned source sentence has
    another number (which a number elsewhere in the passage must not excuse)."""
    passages = [*matched, *(p for view in views for p in view.matched)]
    missing = facts.numbers(sentence) - frozenset().union(*(passage.numbers for passage in passages))
    for view in views:
        # "first" counts here: "the first set" where the source says "the second set" is a number changed.
        said, stated = facts.numbers(view.statement, first=True), facts.numbers(view.aligned, first=True)
        if stated - said:
            missing |= said - stated
    return sorted(missing)


def missing_entities(sentence: str, documents: list[Source], views: list[Reading]) -> list[str]:
    """Names and identifiers of `sentence` its documents never mention, or that stand where the
    aligned source sentence names something else."""
    said = facts.entities(sentence)
    missing = {e for e in said if not any(facts.mentions(document.text, e) for document in documents)}
    for view in views:
        claim, source = facts.mention_text(view.statement), facts.mention_text(view.aligned)
        if any(not facts.mentions(claim, e) for e in facts.entities(view.aligned)):
            missing |= {e for e in facts.entities(view.statement) if not facts.mentions(source, e)}
    return sorted(missing)


def _says_most(view: Reading) -> bool:
    """Whether the aligned source sentence has most of the statement's words: only then is a
    difference between them a contradiction rather than a different sentence."""
    words = set(key_words(view.statement))
    return bool(words) and len(words & set(key_words(view.aligned))) >= SUPPORTED_COVERAGE * len(words)


def contradiction(views: list[Reading]) -> str:
    """Why a source sentence that a statement was aligned with says something else, or ""."""
    for view in views:
        if not _says_most(view):
            continue
        claim, source = facts.tokens(view.statement), facts.tokens(view.aligned)
        for check in (facts.flipped_negation, facts.swapped_opposite, facts.swapped_sides):
            reason = check(claim, source)
            if reason:
                return reason
        reason = facts.swapped_names(claim, source, facts.entities(view.statement))
        if reason:
            return reason
    return ""


def check_sentence(claim: CitedSentence, documents: Mapping[int, Source]) -> list[ClaimVerdict]:
    """Verdicts for each marker of one sentence; markers without document text are not checked."""
    occurrence = dict(claim.markers)
    numbers = [n for n in claim.numbers if n in documents and documents[n].passages]
    words = set(key_words(claim.sentence))
    if len(words) < MIN_KEY_WORDS or not numbers:
        return []
    matches = {n: best_match(claim.sentence, documents[n].passages) for n in numbers}
    found: set[str] = set()
    found_pairs: set[tuple[str, str]] = set()
    found_numbers: set[str] = set()
    for match in matches.values():
        if match.passage is not None:
            found |= words & match.passage.words
            found_pairs |= match.passage.pairs
            found_numbers |= match.passage.numbers
    pairs = _pairs(key_words(claim.sentence))
    coverage = len(found) / len(words)
    pair_coverage = len(pairs & found_pairs) / len(pairs) if pairs else coverage
    matched = [m.passage for m in matches.values() if m.passage is not None]
    cited = [documents[n] for n in numbers]
    views = readings(claim.sentence, cited, matched)
    missing = missing_numbers(claim.sentence, matched, views)
    contradicted = ""
    if not missing and _supported(coverage, pair_coverage):
        contradicted = contradiction(views)
        missing_names = missing_entities(claim.sentence, cited, views)
        if not contradicted and missing_names:
            contradicted = f"the cited passage does not mention {', '.join(missing_names[:3])}"
    verdicts: list[ClaimVerdict] = []
    for n in numbers:
        match = matches[n]
        reason = ""
        if missing:
            shown = ", ".join(facts.shown_number(m) for m in missing[:3])
            reason = f"the cited passage does not contain the number{'s' if len(missing) > 1 else ''} {shown}"
        elif not _supported(coverage, pair_coverage):
            reason = f"the cited source shares only {round(coverage * 100)}% of the sentence's key words"
        elif contradicted:
            reason = contradicted
        elif len(numbers) > 1 and match.coverage < MIN_SHARE:
            reason = "this source adds nothing to the sentence; the other cited source supports it"
        verdicts.append(
            ClaimVerdict(
                marker=f"[{n}]",
                occurrence=occurrence[n],
                sentence=claim.sentence,
                supported=not reason,
                reason=reason,
                score=round(match.coverage, 3),
                passage=match.passage.text if match.passage is not None else "",
            )
        )
    return verdicts


def _unbacked(sentence: ReportSentence, uncited: int) -> list[ClaimVerdict]:
    """Verdicts for what backs nothing: each removed citation where it stood, and a factual
    sentence that cites nothing at all."""
    verdicts = [
        ClaimVerdict(marker=CITATION_REMOVED, occurrence=k, sentence=sentence.sentence, supported=False, reason=LOST)
        for k in sentence.lost
    ]
    if not verdicts and not sentence.markers and sentence.factual:
        verdicts.append(
            ClaimVerdict(marker="", occurrence=uncited, sentence=sentence.sentence, supported=False, reason=NO_CITATION)
        )
    return verdicts


def check_claims(
    markdown: str, texts: Mapping[int, str], prepared: Mapping[str, Source] | None = None
) -> list[ClaimVerdict]:
    """Check every sentence of a verified report: each citation against the text of its numbered
    source; each factual sentence without one, and each citation verification removed, as unbacked.
    `prepared`: sources already analysed, by their text (most of the check's work, and it does not
    depend on the report)."""
    ready = prepared or {}
    documents = {n: ready.get(text) or source(text) for n, text in texts.items() if text.strip()}
    verdicts: list[ClaimVerdict] = []
    uncited = 0
    for sentence in report_sentences(markdown):
        if sentence.markers:
            verdicts.extend(check_sentence(sentence, documents))
        elif not sentence.lost and sentence.factual:
            uncited += 1
        verdicts.extend(_unbacked(sentence, uncited))
    return verdicts
