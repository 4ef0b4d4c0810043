"""The offline model's follow-up answer: the report's and its sources' sentences that match the question.

Extractive: a few sentences, each with the citation number it came with. When too little of the
question is found in them, it calls `decline_followup` rather than answer from weak matches.
"""

from __future__ import annotations

import re

from sleuth.llm.offline.request import OfflineRequest, Reply
from sleuth.llm.offline.text import (
    as_markdown,
    cited_units,
    jaccard,
    numbered_blocks,
    overlap,
    page_sentences,
    term_set,
)

MAX_SENTENCES = 3
MIN_QUESTION_SHARE = 0.5  # at least half the question's content terms must be in a sentence
DUPLICATE_JACCARD = 0.6

_QUESTION = re.compile(r"^Follow-up question:\s*(.+)$", re.M)
_SOURCES = re.compile(r"\n\s*Sources:\s*\n")


def followup(request: OfflineRequest) -> Reply:
    text = request.last_user
    match = _QUESTION.search(text)
    question_terms = term_set(match.group(1) if match else "")
    if not question_terms:
        return Reply(tool_calls=[("decline_followup", {})])
    parts = _SOURCES.split(text, maxsplit=1)
    report, sources = parts[0], (parts[1] if len(parts) > 1 else "")
    candidates = [(unit.bare, unit.numbers) for unit in cited_units(report)]
    for block in numbered_blocks(sources):
        candidates.extend((sentence, [block.number]) for sentence in page_sentences(block.body))
    scored = sorted(
        (
            (overlap(term_set(sentence), question_terms), i, sentence, numbers)
            for i, (sentence, numbers) in enumerate(candidates)
        ),
        key=lambda item: (-item[0], item[1]),
    )
    picked: list[tuple[str, list[int]]] = []
    for share, _, sentence, numbers in scored:
        if share < MIN_QUESTION_SHARE or len(picked) >= MAX_SENTENCES:
            break
        terms = term_set(sentence)
        if all(jaccard(terms, term_set(other)) < DUPLICATE_JACCARD for other, _ in picked):
            picked.append((sentence, numbers))
    if not picked:
        return Reply(tool_calls=[("decline_followup", {})])
    answer = " ".join(f"{as_markdown(sentence)} " + "".join(f"[{n}]" for n in numbers) for sentence, numbers in picked)
    return Reply(text=answer)
