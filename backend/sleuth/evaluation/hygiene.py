"""How a report reads, counted: sentences said twice, colons that announce nothing, titles cut short.

Counted over the document a reader gets (the `.md` export: title, summary, key findings, the body and
its method note; not the sources list), so a summary or key finding that repeats the body counts.
"""

from __future__ import annotations

import re
from typing import Any

from sleuth.core.markdown import PROSE, BlockKind, blocks, prose_sentences, rewrite_citations, sentence_key
from sleuth.exports.markdown import report_document
from sleuth.stream.results import ResearchResult

MIN_SENTENCE_WORDS = 4  # "Yes." or "See below." may recur without anyone reading it twice
# What may follow a line that ends in a colon: the list, code, table or quotation it announces.
_ANNOUNCED: frozenset[BlockKind] = frozenset({"item", "code", "table", "quote"})
# A colon whose sentence ends right there: citation markers, then the next sentence.
_COLON_THEN_MARKERS = re.compile(r":\s*(?:\[\d{1,4}(?:\s*,\s*\d{1,4})*\]\s*)+(?=\S)")
# Words a whole phrase does not end on; a title ending on one was cut ("methods, and").
_CUT_ENDINGS = frozenset("and or but nor the a an of".split())
_LOOSE_END = re.compile(r"[,;:(\[{/&+–—-]$")
_PAIRS = (("(", ")"), ("[", "]"), ("{", "}"))


def reader_document(result: ResearchResult) -> str:
    """The report as its `.md` export shows it, up to the sources list."""
    return report_document(result).rpartition("\n## Sources\n")[0]


def repeated_sentences(document: str) -> int:
    """Sentences a reader meets again: every occurrence after the first of the same sentence
    (markers, code marks, case and closing punctuation aside), headings, code and tables left out."""
    seen: dict[str, int] = {}
    for sentence in prose_sentences(document):
        key = sentence_key(sentence)
        if len(key.split()) >= MIN_SENTENCE_WORDS:
            seen[key] = seen.get(key, 0) + 1
    return sum(count - 1 for count in seen.values())


def dangling_colons(document: str) -> int:
    """Sentences ending in ':' with nothing of what they announce after them: a paragraph or item
    that ends in a colon and is not followed by a list, code, table or quotation, and a colon that
    ends its sentence inside a paragraph (its markers, then the next sentence)."""
    parts = blocks(document)
    count = 0
    for index, (kind, text) in enumerate(parts):
        if kind not in PROSE:
            continue
        count += len(_COLON_THEN_MARKERS.findall(text))
        following = parts[index + 1][0] if index + 1 < len(parts) else None
        ends_in_colon = " ".join(rewrite_citations(text, lambda _n: None).split()).endswith(":")
        if ends_in_colon and following not in _ANNOUNCED:
            count += 1
    return count


def is_cut_title(title: str, question: str = "") -> bool:
    """A title cut mid-phrase: inside a word (of the question it shortens), on a separator or a word
    like "and", with a bracket left open, or stopping short of the question without an ellipsis."""
    line = " ".join(title.split())
    if not line:
        return False
    asked = " ".join(question.split())
    shortened = line.endswith("…")
    stem = line.removesuffix("…").rstrip()
    last = stem.split()[-1].lower() if stem.split() else ""
    if _LOOSE_END.search(stem) or last.strip(",;:") in _CUT_ENDINGS:
        return True
    if any(stem.count(opening) > stem.count(closing) for opening, closing in _PAIRS) or stem.count("`") % 2:
        return True
    if asked.lower().startswith(stem.lower()) and len(asked) > len(stem):
        rest = asked[len(stem) :]
        if rest[0].isalnum() or rest[0] == "_":
            return True  # stopped inside a word
        # a whole sub-question ("…are called", then ", and how …") is a phrase; anything else needs the ellipsis
        return not shortened and not re.match(r"\s*[,;?.!:]", rest)
    return False


def report_hygiene(result: ResearchResult) -> dict[str, Any]:
    """The three counts of one report, as metrics.jsonl holds them."""
    document = reader_document(result)
    return {
        "repeated_sentences": repeated_sentences(document),
        "dangling_colons": dangling_colons(document),
        "cut_title": is_cut_title(result.title, result.question),
    }


def hygiene_totals(records: list[dict[str, Any]]) -> dict[str, int]:
    """Totals over metrics.jsonl records, for summary.json."""
    return {
        "repeated_sentences": sum(int(r.get("repeated_sentences") or 0) for r in records),
        "dangling_colons": sum(int(r.get("dangling_colons") or 0) for r in records),
        "cut_titles": sum(1 for r in records if r.get("cut_title")),
    }
