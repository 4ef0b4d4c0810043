"""Claim-support checking: does the document a sentence cites actually say what the sentence says?

Deterministic and model-free: each cited sentence is compared with the best-matching passage of
every document it cites, by normalised key-word and word-pair overlap, and every number in the
sentence must appear in those passages. Tuned to keep false alarms rare: a citation is flagged only
when the cited text clearly lacks the sentence's words or numbers.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass

from sleuth.core.markdown import citation_spans
from sleuth.core.words import FUNCTION_WORDS, light_stem
from sleuth.stream.results import ClaimVerdict

_WORD = re.compile(r"[a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)*|\d+(?:[.,]\d+)*")
_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*(?![\w])")
_SENTENCE_END = re.compile(r"(?<=[.!?…])[\"'”’)]*\s+")
# Only paired emphasis goes: a lone `*` is as likely an operator (`2**8`, `except*`) as markup, and
# underscores are part of identifiers such as `__getattr__` far more often than emphasis.
_EMPHASIS = re.compile(r"(?<![\w*])(\*{1,3})(?=[^\s*])(.+?)(?<=[^\s*])\1(?![\w*])")
_LINE_MARKUP = re.compile(r"^\s*(?:[-*+]|\d+[.)]|>+)\s+")
_MARKDOWN_NOISE = re.compile(r"`+|\|")
_LINK = re.compile(r"!?\[([^\]\n]*)\]\([^)\s]*\)")

# A citation is supported when this share of the sentence's key words is found in the passage...
SUPPORTED_COVERAGE = 0.6
# ...or when somewhat fewer are, but its word pairs show the passage says the same thing.
PARTIAL_COVERAGE = 0.45
PARTIAL_PAIRS = 0.3
# In a sentence citing several documents, a document that adds less than this is flagged.
MIN_SHARE = 0.15
# Sentences shorter than this (in key words) say too little to check.
MIN_KEY_WORDS = 3
_WINDOW = 3  # sentences per passage


@dataclass(frozen=True)
class CitedSentence:
    sentence: str  # plain text: markers and markdown removed
    markers: tuple[tuple[int, int], ...]  # (citation number, its occurrence in the markdown), first of each number

    @property
    def numbers(self) -> tuple[int, ...]:
        return tuple(n for n, _ in self.markers)


@dataclass(frozen=True)
class Passage:
    text: str
    words: frozenset[str]
    pairs: frozenset[tuple[str, str]]
    numbers: frozenset[str]


def _normal(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).lower()
    return text.replace("’", "'").replace("‘", "'").replace("“", '"').replace("”", '"')


def key_words(text: str) -> list[str]:
    """Normalised content words of `text`, in order (numbers included)."""
    # Function words only: unlike the offline model's question words, "explain" or "works" can carry
    # a claim's meaning, so they stay.
    return [
        light_stem(w) for w in _WORD.findall(_normal(text)) if w not in FUNCTION_WORDS and (len(w) > 1 or w.isdigit())
    ]


_NUMBER_WORDS = {
    w: str(i) for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve".split())
}


def _numbers(text: str, *, spelled: bool = False) -> set[str]:
    """Numbers in `text`; with `spelled`, also "four" as 4 (a source may spell out what a claim writes in digits)."""
    normal = _normal(text)
    found = {n.replace(",", "") for n in _NUMBER.findall(normal)}
    if spelled:
        found |= {_NUMBER_WORDS[w] for w in re.findall(r"[a-z]+", normal) if w in _NUMBER_WORDS}
    return found


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


def cited_sentences(markdown: str) -> list[CitedSentence]:
    """Every sentence of `markdown` that carries citation markers, with the markers it carries.

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

    out: list[CitedSentence] = []
    # Lines, not paragraphs: models do not hard-wrap, and a list item or table row ends its sentence.
    lines = markdown.splitlines()
    for index, spans in sorted(by_line.items()):
        line = lines[index]
        if line.lstrip().startswith("#"):
            continue
        bounds = _sentence_bounds(line)
        carried: list[list[tuple[int, int]]] = [[] for _ in bounds]
        for start, _end, markers in spans:
            i = next((k for k, (a, b) in enumerate(bounds) if a <= start < b), len(bounds) - 1)
            opens_sentence = not line[bounds[i][0] : start].strip(" []0123456789,")
            carried[i - 1 if opens_sentence and i > 0 else i].extend(markers)
        for (a, b), markers in zip(bounds, carried, strict=True):
            text = line[a:b]
            for start, end, _ in reversed(spans):
                if a <= start < b:
                    text = text[: start - a] + text[min(end, b) - a :]
            sentence = _plain(text)
            first: dict[int, int] = {}
            for n, k in markers:
                first.setdefault(n, k)
            if first and sentence:
                out.append(CitedSentence(sentence=sentence, markers=tuple(first.items())))
    return out


def passages(text: str) -> list[Passage]:
    """Overlapping windows of a few sentences: a claim may paraphrase across a sentence boundary."""
    # Paragraphs, not lines: documents are often hard-wrapped mid-sentence.
    paragraphs = (" ".join(p.split()) for p in re.split(r"\n\s*\n", text))
    sentences = [s for paragraph in paragraphs for s in split_sentences(paragraph)]
    if not sentences:
        return []
    # Each sentence is analysed once; a window joins its sentences' words (pairs may span a boundary).
    words = [key_words(sentence) for sentence in sentences]
    numbers = [_numbers(sentence, spelled=True) for sentence in sentences]
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


def check_sentence(claim: CitedSentence, documents: Mapping[int, list[Passage]]) -> list[ClaimVerdict]:
    """Verdicts for each marker of one sentence; markers without document text are not checked."""
    occurrence = dict(claim.markers)
    numbers = [n for n in claim.numbers if documents.get(n)]
    words = set(key_words(claim.sentence))
    if len(words) < MIN_KEY_WORDS or not numbers:
        return []
    matches = {n: best_match(claim.sentence, documents[n]) for n in numbers}
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
    missing_numbers = sorted(_numbers(claim.sentence) - found_numbers)
    verdicts: list[ClaimVerdict] = []
    for n in numbers:
        match = matches[n]
        reason = ""
        if missing_numbers:
            shown = ", ".join(missing_numbers[:3])
            reason = f"the cited passage does not contain the number{'s' if len(missing_numbers) > 1 else ''} {shown}"
        elif not _supported(coverage, pair_coverage):
            reason = f"the cited source shares only {round(coverage * 100)}% of the sentence's key words"
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


def check_claims(markdown: str, texts: Mapping[int, str]) -> list[ClaimVerdict]:
    """Check every cited sentence of a verified report against the text of its numbered sources."""
    documents = {n: passages(text) for n, text in texts.items() if text.strip()}
    verdicts: list[ClaimVerdict] = []
    for claim in cited_sentences(markdown):
        verdicts.extend(check_sentence(claim, documents))
    return verdicts
