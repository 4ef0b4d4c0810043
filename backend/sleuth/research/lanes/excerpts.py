"""What an agent is shown of a page that is longer than its page budget.

Cutting a long page at the budget hides whatever the agent searched for when it sits past the
cut (reference pages put the entry a query matched anywhere). Instead the page keeps its opening,
then the sections whose headings match what the agent asked, whole, then the paragraphs that share
the most search terms with it, in the page's own order, with a marker where text was left out. Any
model benefits; none has to know.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable

from sleuth.llm.tokens import surely_fits
from sleuth.tools.local.query import terms as search_terms

GAP = "[…]"
OPENING_SHARE = 0.25  # of the budget, kept from the top: the page's summary and definitions
_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")


def _paragraphs(text: str) -> list[str]:
    return [part.strip("\n") for part in _PARAGRAPH_BREAK.split(text) if part.strip()]


HEADING_WORDS = 8  # a one-line paragraph this short is a title or a defined term, not prose
# The entry on `asyncio.wait_for` says "To avoid the task cancellation, wrap it in shield()" in a
# paragraph that shares no word with the search: a section whose heading matches is read whole,
# up to these shares of the budget (all such sections; one section), from the headings whose match
# is at least SECTION_MATCH of the best heading's.
SECTIONS_SHARE = 0.4
SECTION_SHARE = 0.2
SECTION_MATCH = 0.75


def _is_heading(paragraph: str) -> bool:
    return "\n" not in paragraph.strip() and len(paragraph.split()) <= HEADING_WORDS


def _scores(paragraphs: list[str], wanted: set[str]) -> list[float]:
    """Sum over the wanted terms a paragraph contains of their idf among the page's paragraphs.

    A paragraph right under a heading or a defined term ("- spawn") also counts that heading's
    terms: the definition below a term rarely repeats it, and the term alone explains nothing."""
    bags = [set(search_terms(p.lower())) if wanted else set() for p in paragraphs]
    bags = [
        bag | bags[index - 1] if index and _is_heading(paragraphs[index - 1]) else bag for index, bag in enumerate(bags)
    ]
    total = len(paragraphs)
    idf = {term: math.log(1 + total / (1 + sum(term in bag for bag in bags))) for term in wanted}
    return [sum(idf[term] for term in bag & wanted) for bag in bags]


def _keep_sections(
    paragraphs: list[str], sizes: list[int], wanted: set[str], keep: set[int], spent: int, budget: int, gap_cost: int
) -> int:
    """Add the sections under the best-matching headings to `keep`, whole, within `budget` more
    tokens; returns the tokens spent in all. A section runs from its heading to the next one."""
    headings = [i for i, paragraph in enumerate(paragraphs) if _is_heading(paragraph)]
    own = _scores([paragraphs[i] for i in headings], wanted) if headings else []
    best = max(own, default=0.0)
    if best <= 0:
        return spent
    limit = spent + budget
    for score, start in sorted(zip(own, headings, strict=True), key=lambda item: (-item[0], item[1])):
        if score < SECTION_MATCH * best:
            break
        following = [i for i in headings if i > start]
        section = range(start, following[0] if following else len(paragraphs))
        cost = sum(sizes[i] for i in section if i not in keep) + gap_cost
        if cost <= min(budget * SECTION_SHARE / SECTIONS_SHARE, limit - spent):
            keep.update(section)
            spent += cost
    return spent


def focused_text(text: str, asked: Iterable[str], max_tokens: int, count: Callable[[str], int]) -> str:
    """`text` if it fits in `max_tokens`; else its opening plus the paragraphs that best match `asked`.

    `asked` is what the agent searched for; `count` measures tokens. The result stays within about
    `max_tokens` (a paragraph too long for what is left is skipped, not cut); callers still cap it.
    """
    if surely_fits(text, max_tokens):
        return text
    paragraphs = _paragraphs(text)
    counts = [count(p) for p in paragraphs]
    # A tokenizer's words do not span a blank line, so the page counts about what its paragraphs sum
    # to (a paragraph's last mark may merge with the break after it): the whole page is counted only
    # when that sum leaves it open whether the page fits, not again for every long page.
    if sum(counts) - len(counts) <= max_tokens and count(text) <= max_tokens:
        return text
    sizes = [n + 2 for n in counts]
    wanted = {term for query in asked for term in search_terms(query.lower())}
    keep: set[int] = set()
    spent = 0
    opening_budget = int(max_tokens * OPENING_SHARE)
    for index, size in enumerate(sizes):
        if spent + size > opening_budget:
            break
        keep.add(index)
        spent += size
    scores = _scores(paragraphs, wanted)
    spent = _keep_sections(paragraphs, sizes, wanted, keep, spent, int(max_tokens * SECTIONS_SHARE), count(GAP) + 2)
    ranked = sorted(
        (i for i in range(len(paragraphs)) if i not in keep and scores[i] > 0), key=lambda i: (-scores[i], i)
    )
    gap_cost = count(GAP) + 2
    for index in ranked:
        # the heading or defined term right above comes along: "Subclass of SubprocessError, raised
        # when…" does not say it defines CalledProcessError, its heading does
        heading = index - 1 if index and index - 1 not in keep and _is_heading(paragraphs[index - 1]) else None
        cost = sizes[index] + gap_cost + (sizes[heading] if heading is not None else 0)
        if spent + cost <= max_tokens:
            keep.add(index)
            if heading is not None:
                keep.add(heading)
            spent += cost
    # Any budget left goes to the text that follows the opening, as a plain cut would have shown.
    for index in range(len(paragraphs)):
        if index not in keep and spent + sizes[index] + gap_cost <= max_tokens:
            keep.add(index)
            spent += sizes[index] + gap_cost
        elif index not in keep:
            break
    out: list[str] = []
    previous = -1
    for index in sorted(keep):
        if index != previous + 1:
            out.append(GAP)
        out.append(paragraphs[index])
        previous = index
    if previous != len(paragraphs) - 1:
        out.append(GAP)
    return "\n\n".join(out)
