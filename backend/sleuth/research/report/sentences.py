"""The sentences of a report's prose as the claim check reads them: their plain text, the citation
markers each carries (a citation after a run of uncited sentences covers them), the citations
verification removed from them, and whether each states a fact a source would have to back.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, replace

from sleuth.core.markdown import CITATION_REMOVED, citation_spans
from sleuth.core.words import FUNCTION_WORDS, light_stem
from sleuth.research.report import claim_facts as facts

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

# Sentences shorter than this (in key words) say too little to check, or to need a citation.
MIN_KEY_WORDS = 3
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


def key_words(text: str) -> list[str]:
    """Normalised content words of `text`, in order (numbers included)."""
    # Function words only: unlike the offline model's question words, "explain" or "works" can carry
    # a claim's meaning, so they stay.
    words = _WORD.findall(facts.normal(text).lower())
    return [light_stem(w) for w in words if w not in FUNCTION_WORDS and (len(w) > 1 or w.isdigit())]


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
    """Sentences of one paragraph, each uncited one given the markers of the next cited one: a
    citation after a run of uncited sentences is read as citing them all, and each is checked
    against it."""
    out: list[ReportSentence] = []
    following: ReportSentence | None = None
    for sentence in reversed(line):
        if sentence.markers or sentence.lost:
            following = sentence
        elif following is not None and following.markers and sentence.factual:
            sentence = replace(sentence, markers=following.markers)
        out.append(sentence)
    return out[::-1]


def cited_sentences(markdown: str) -> list[CitedSentence]:
    """Every sentence of `markdown` that carries citation markers, with the markers it carries: a
    sentence of a passage cited once, after its last sentence, carries that citation."""
    return [CitedSentence(s.sentence, s.markers) for s in report_sentences(markdown) if s.markers]
