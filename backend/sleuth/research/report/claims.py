"""Claim-support checking: does the document a sentence cites actually say what the sentence says?

Deterministic and model-free: each cited sentence is compared with the best-matching passage of
every document it cites, by normalised key-word and word-pair overlap; every number in the sentence
must appear in those passages; and the source sentence it matches best must not say the opposite
(a negation, an opposite word, a comparison the other way round) or lack a name or identifier the
sentence gives (`claim_facts.py`). Factual sentences with no citation, and claims whose citations
verification removed, are flagged too. Tuned to keep false alarms rare.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace

from sleuth.core.markdown import CITATION_REMOVED, citation_spans
from sleuth.core.words import FUNCTION_WORDS
from sleuth.research.report import claim_facts as facts
from sleuth.stream.results import ClaimVerdict

_WORD = re.compile(r"[a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)*|\d+(?:[.,]\d+)*")
# "e.g." and "i.e." end no sentence (a citation after the rest of it would otherwise miss its start).
_SENTENCE_END = re.compile(r"(?<=[.!?…])(?<!\be\.g\.)(?<!\bi\.e\.)[\"'”’)]*\s+")
# Only paired emphasis goes: a lone `*` is as likely an operator (`2**8`, `except*`) as markup, and
# underscores are part of identifiers such as `__getattr__` far more often than emphasis.
_EMPHASIS = re.compile(r"(?<![\w*])(\*{1,3})(?=[^\s*])(.+?)(?<=[^\s*])\1(?![\w*])")
_LINE_MARKUP = re.compile(r"^\s*(?:[-*+]|\d+[.)]|>+)\s+")
_MARKDOWN_NOISE = re.compile(r"`+|\|")
_LINK = re.compile(r"!?\[([^\]\n]*)\]\([^)\s]*\)")
# Lines that carry no claim of their own: a rule, a table's delimiter row, a line that is all
# emphasis (the engine's and the offline model's notes are written so), a fence.
_NOT_PROSE = re.compile(r"^\s*(?:#|(?:[-*_]\s*){3,}$|\|?\s*:?-{3,}|(?:_[^_].*_|\*[^*].*\*|\*\*[^*].*\*\*)\s*$|```|~~~)")
_REMOVED = re.escape(CITATION_REMOVED)

# A citation is supported when this share of the sentence's key words is found in the passage...
SUPPORTED_COVERAGE = 0.6
# ...or when somewhat fewer are, but its word pairs show the passage says the same thing.
PARTIAL_COVERAGE = 0.45
PARTIAL_PAIRS = 0.3
# In a sentence citing several documents, a document that adds less than this is flagged.
MIN_SHARE = 0.15
# Sentences shorter than this (in key words) say too little to check, or to need a citation.
MIN_KEY_WORDS = 3
_WINDOW = 3  # sentences per passage
# Words about the report itself: a sentence made of them ("The sections below cover each step.")
# connects or sums up; it states no fact a source could back.
_REPORT_TALK = frozenset(
    """
    answer answered aspect aspects below conclusion cover covers detail details discuss discussed
    explain explained explains finding findings following overview point points question report
    research section sections source sources step steps summarise summarised summary summarize
    summarized topic topics
    """.split()
)
NO_CITATION = "no citation: the report states this as fact without citing a source"
LOST = "its citation was removed in verification, so no retrieved source backs it"


@dataclass(frozen=True)
class CitedSentence:
    sentence: str  # plain text: markers and markdown removed
    markers: tuple[tuple[int, int], ...]  # (citation number, its occurrence in the markdown), first of each number

    @property
    def numbers(self) -> tuple[int, ...]:
        return tuple(n for n, _ in self.markers)


@dataclass(frozen=True)
class ReportSentence(CitedSentence):
    lost: tuple[int, ...] = ()  # occurrences of `CITATION_REMOVED` the sentence carries
    factual: bool = True  # states something a source would have to back
    # The markers are those of a later sentence of its paragraph: a citation after a run of
    # uncited sentences is read as citing them all, and each is checked against it.
    borrowed: bool = False


@dataclass(frozen=True)
class Passage:
    text: str
    words: frozenset[str]
    pairs: frozenset[tuple[str, str]]
    numbers: frozenset[str]
    sentences: tuple[str, ...]


@dataclass(frozen=True)
class Source:
    """A cited document as the check reads it: its passages, and its whole text in lower case."""

    passages: list[Passage]
    lower: str


def source(text: str) -> Source:
    return Source(passages=passages(text), lower=facts.normal(text).lower())


def key_words(text: str) -> list[str]:
    """Normalised content words of `text`, in order (numbers included)."""
    # Function words only: unlike the offline model's question words, "explain" or "works" can carry
    # a claim's meaning, so they stay.
    words = _WORD.findall(facts.normal(text).lower())
    return [facts.stem(w) for w in words if w not in FUNCTION_WORDS and (len(w) > 1 or w.isdigit())]


def _pairs(words: list[str]) -> set[tuple[str, str]]:
    return set(zip(words, words[1:], strict=False))


def split_sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


def _plain(text: str) -> str:
    text = _EMPHASIS.sub(r"\2", _LINE_MARKUP.sub("", _LINK.sub(r"\1", text)))
    text = " ".join(_MARKDOWN_NOISE.sub(" ", text).split())
    return re.sub(r"\s+([.,;:!?])", r"\1", text)


def _sentence_bounds(line: str) -> list[tuple[int, int]]:
    bounds: list[tuple[int, int]] = []
    start = 0
    for match in _SENTENCE_END.finditer(line):
        bounds.append((start, match.start()))
        start = match.end()
    bounds.append((start, len(line)))
    return [(a, b) for a, b in bounds if line[a:b].strip()]


def _prose_lines(markdown: str) -> Iterator[tuple[int, str]]:
    """(index, line) of every line that may state a fact: not code, a heading, a rule, a table's
    header or delimiter row, or a note."""
    lines = markdown.splitlines()
    fenced = False
    for index, line in enumerate(lines):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        following = lines[index + 1] if index + 1 < len(lines) else ""
        if fenced or _NOT_PROSE.match(line) or re.match(r"^\s*\|?\s*:?-{3,}", following):
            continue
        yield index, line


def factual(sentence: str) -> bool:
    """Whether a sentence states a fact that needs a source: not a question, not a line announcing
    what follows, and more than a few words that are not about the report itself."""
    if sentence.rstrip(" *_").endswith((":", "?")):
        return False
    return len({w for w in key_words(sentence) if w not in _REPORT_TALK}) >= MIN_KEY_WORDS


def report_sentences(markdown: str) -> list[ReportSentence]:
    """Every sentence of the report's prose, with the citation markers it carries.

    Markers that open a sentence ("... end. [2] Next") belong to the sentence before them, which
    is how models and the offline report place them. Each marker is numbered by its appearance
    among all markers of that number in the markdown, as a reader (or a client's chips) meets them.
    """
    seen: dict[int, int] = {}
    by_line: dict[int, list[tuple[int, int, list[tuple[int, int]]]]] = {}
    line_starts = [0]
    for line in markdown.splitlines(keepends=True):
        line_starts.append(line_starts[-1] + len(line))
    line_index = 0
    for start, end, numbers in citation_spans(markdown):
        while line_starts[line_index + 1] <= start:
            line_index += 1
        markers = []
        for n in numbers:
            seen[n] = seen.get(n, 0) + 1
            markers.append((n, seen[n]))
        offset = line_starts[line_index]
        by_line.setdefault(line_index, []).append((start - offset, end - offset, markers))

    out: list[ReportSentence] = []
    lost_seen = 0
    # Lines, not paragraphs: models do not hard-wrap, and a list item or table row ends its sentence.
    for index, line in _prose_lines(markdown):
        spans = by_line.get(index, [])
        bounds = _sentence_bounds(line)
        carried: list[list[tuple[int, int]]] = [[] for _ in bounds]
        for start, _end, markers in spans:
            i = next((k for k, (a, b) in enumerate(bounds) if a <= start < b), len(bounds) - 1)
            opens_sentence = not line[bounds[i][0] : start].strip(" []0123456789,")
            carried[i - 1 if opens_sentence and i > 0 else i].extend(markers)
        in_line: list[ReportSentence] = []
        for (a, b), markers in zip(bounds, carried, strict=True):
            text = line[a:b]
            for start, end, _ in reversed(spans):
                if a <= start < b:
                    text = text[: start - a] + text[min(end, b) - a :]
            lost = len(re.findall(_REMOVED, text))
            lost_seen += lost
            sentence = _plain(re.sub(r"\s*" + _REMOVED, "", text))
            first: dict[int, int] = {}
            for n, k in markers:
                first.setdefault(n, k)
            if sentence:
                in_line.append(
                    ReportSentence(
                        sentence=sentence,
                        markers=tuple(first.items()),
                        lost=tuple(range(lost_seen - lost + 1, lost_seen + 1)),
                        factual=factual(sentence),
                    )
                )
        out.extend(_borrow(in_line))
    return out


def _borrow(line: list[ReportSentence]) -> list[ReportSentence]:
    """Sentences of one paragraph, each uncited one given the markers of the next cited one."""
    out: list[ReportSentence] = []
    following: ReportSentence | None = None
    for sentence in reversed(line):
        if sentence.markers or sentence.lost:
            following = sentence
        elif following is not None and following.markers and sentence.factual:
            sentence = replace(sentence, markers=following.markers, borrowed=True)
        out.append(sentence)
    return out[::-1]


def cited_sentences(markdown: str) -> list[CitedSentence]:
    """Every sentence of `markdown` that carries citation markers, with the markers it carries."""
    return [CitedSentence(s.sentence, s.markers) for s in report_sentences(markdown) if s.markers and not s.borrowed]


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


def missing_numbers(sentence: str, matched: list[Passage], aligned: str) -> list[str]:
    """Numbers of `sentence` its passages lack, or that stand where the aligned source sentence has
    another number (which a number elsewhere in the passage must not excuse)."""
    said = facts.numbers(sentence)
    missing = said - frozenset().union(*(passage.numbers for passage in matched))
    stated = facts.numbers(aligned)
    if stated - said:
        missing |= said - stated
    return sorted(missing)


def missing_entities(sentence: str, documents: list[Source], aligned: str) -> list[str]:
    """Names and identifiers of `sentence` its documents never mention, or that stand where the
    aligned source sentence names something else."""
    said = facts.entities(sentence)
    missing = {e for e in said if not any(facts.mentions(document.lower, e) for document in documents)}
    claim, source = facts.normal(sentence).lower(), facts.normal(aligned).lower()
    if any(not facts.mentions(claim, e) for e in facts.entities(aligned)):
        missing |= {e for e in said if not facts.mentions(source, e)}
    return sorted(missing)


# Where a sentence joins statements a source makes in different places: "…: Another statement", as
# the offline report joins them.
_STATEMENTS = re.compile(r"(?<=[\w)\"”’]): (?=[A-Z_`])")


def contradiction(sentence: str, documents: list[Source], aligned: str) -> str:
    """Why the source sentences that `sentence` was aligned with say something else, or "" when they do not.

    Each statement of the sentence is compared with the source sentence that says most of it."""
    statements = [part for part in _STATEMENTS.split(sentence) if len(key_words(part)) >= MIN_KEY_WORDS]
    for statement in statements if len(statements) > 1 else [sentence]:
        if statement is not sentence:
            matched = [best_match(statement, document.passages).passage for document in documents]
            aligned = _aligned(statement, [s for passage in matched if passage is not None for s in passage.sentences])
        claim, source = facts.tokens(statement), facts.tokens(aligned)
        for check in (facts.flipped_negation, facts.swapped_opposite, facts.swapped_sides):
            reason = check(claim, source)
            if reason:
                return reason
        reason = facts.swapped_names(claim, source, facts.entities(statement))
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
    candidates = [s for passage in matched for s in passage.sentences]
    aligned = _aligned(claim.sentence, candidates)
    missing = missing_numbers(claim.sentence, matched, aligned)
    contradicted = ""
    if not missing and _supported(coverage, pair_coverage):
        cited = [documents[n] for n in numbers]
        contradicted = contradiction(claim.sentence, cited, aligned)
        missing_names = missing_entities(claim.sentence, cited, aligned)
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


def check_claims(markdown: str, texts: Mapping[int, str]) -> list[ClaimVerdict]:
    """Check every sentence of a verified report: each citation against the text of its numbered
    source; each factual sentence without one, and each citation verification removed, as unbacked."""
    documents = {n: source(text) for n, text in texts.items() if text.strip()}
    verdicts: list[ClaimVerdict] = []
    uncited = 0
    for sentence in report_sentences(markdown):
        if sentence.markers:
            verdicts.extend(check_sentence(sentence, documents))
        elif not sentence.lost and sentence.factual:
            uncited += 1
        verdicts.extend(_unbacked(sentence, uncited))
    return verdicts
