"""Per-question measures of one research run: gold sources, key facts, citations, claims, cost."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel

from sleuth.evaluation.hygiene import report_hygiene
from sleuth.evaluation.questions import EvalQuestion, alternatives
from sleuth.stream.documents import normalise_url
from sleuth.stream.packets import Packet
from sleuth.stream.results import ResearchResult
from sleuth.tools.local.urls import is_corpus_url, parse_corpus_url

# What the confidence was derived from, kept so a change to its rule can be measured on old runs.
CONFIDENCE_SIGNALS = {
    "question_coverage",
    "on_subject_share",
    "uncited_subject_title",
    "opening_cited",
    "steps_planned",
    "steps_covered",
    "steps_empty",
    "sources_cited",
}


class RunTrace(BaseModel):
    """What the eval keeps of a run's packets: the URLs that were opened."""

    read_urls: list[str] = []
    time_budget_s: float | None = None

    def observe(self, packet: Packet) -> None:
        if packet.obj.type == "run_start":
            self.time_budget_s = packet.obj.time_budget_s
        elif packet.obj.type == "open_url_documents":
            self.read_urls.extend(d.url for d in packet.obj.documents)


def gold_matches(gold: str | list[str], url: str) -> bool:
    """A gold source is a URL (same normalised URL) or a path suffix ending on a `/` boundary of the URL,
    or a list of such alternatives."""
    return any(_matches(one, url) for one in alternatives(gold))


def _matches(gold: str, url: str) -> bool:
    if "://" in gold:
        return normalise_url(gold) == normalise_url(url)
    suffix = gold.strip().strip("/").lower()
    path = normalise_url(url).lower()
    return bool(suffix) and (path == suffix or path.endswith("/" + suffix))


def gold_share(gold: list[str | list[str]], urls: list[str]) -> float | None:
    """Share of gold sources matched by any URL; None when the question names none."""
    if not gold:
        return None
    return sum(any(gold_matches(g, u) for u in urls) for g in gold) / len(gold)


def gold_homes(gold: list[str | list[str]], urls_by_collection: dict[str, list[str]]) -> set[str]:
    """The collections that hold at least one of the gold pages."""
    return {name for name, urls in urls_by_collection.items() if any(gold_matches(g, u) for g in gold for u in urls)}


def cited_collection(url: str) -> str | None:
    """The local collection a cited URL belongs to; None for a web page."""
    return parse_corpus_url(url)[0] if is_corpus_url(url) else None


def off_collection(cited_urls: list[str], homes: set[str]) -> tuple[int | None, float | None]:
    """How many citations (and what share of them) come from a source that holds no gold page:
    another collection, or the web. None when nothing was cited or no collection holds a gold page."""
    if not cited_urls or not homes:
        return None, None
    off = sum(1 for url in cited_urls if cited_collection(url) not in homes)
    return off, round(off / len(cited_urls), 4)


def _by_collection(cited_urls: list[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for url in cited_urls:
        name = cited_collection(url) or "web"
        counts[name] = counts.get(name, 0) + 1
    return counts


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


def fact_found(fact: str | list[str], text: str) -> bool:
    """Case-insensitive, whitespace-insensitive containment of any of the fact's alternatives."""
    haystack = _squash(text)
    return any(_squash(a) in haystack for a in alternatives(fact))


def key_fact_recall(facts: list[str | list[str]], text: str) -> float | None:
    if not facts:
        return None
    return sum(fact_found(f, text) for f in facts) / len(facts)


def _verdicts(result: ResearchResult) -> list[dict[str, Any]]:
    urls = {f"[{s.number}]": s.url for s in result.sources}
    return [
        {**c.model_dump(include={"marker", "sentence", "supported", "reason", "checker"}), "url": urls.get(c.marker)}
        for c in result.claims
    ]


def question_metrics(
    question: EvalQuestion,
    result: ResearchResult,
    trace: RunTrace,
    wall_s: float,
    urls_by_collection: dict[str, list[str]] | None = None,
) -> dict[str, Any]:
    """One metrics.jsonl line. Shares are in 0..1; null where the question gives nothing to compare.

    `urls_by_collection` (every local document's URL, by collection) says which collections hold
    the gold pages, for the share of citations from elsewhere."""
    cited_urls = [s.url for s in result.sources]
    method = result.method
    off, off_share = off_collection(cited_urls, gold_homes(question.gold_sources, urls_by_collection or {}))
    return {
        "id": question.id,
        "split": question.split,
        "gold_cited": gold_share(question.gold_sources, cited_urls),
        "gold_read": gold_share(question.gold_sources, trace.read_urls),
        "key_fact_recall": key_fact_recall(question.key_facts, result.markdown),
        "key_facts_missing": [f for f in question.key_facts if not fact_found(f, result.markdown)],
        "sources_cited": len(result.sources),
        "cited_by_collection": _by_collection(cited_urls),
        "off_collection_citations": off,
        "off_collection_share": off_share,
        "sources_read": len(set(trace.read_urls)),
        "citations_removed": len(result.removed_citations),
        "claims_checked": len(result.claims),
        "claims_unsupported": len(result.unsupported_claims),
        "words": len(result.markdown.split()),
        **report_hygiene(result),
        "wall_s": round(wall_s, 3),
        "time_budget_s": trace.time_budget_s,
        "input_tokens": result.input_tokens,
        "output_tokens": result.output_tokens,
        "cost_usd": result.cost_usd,
        "stop_reason": result.stop_reason,
        "error": result.error,
        "confidence": method.confidence if method else None,
        "confidence_reason": method.confidence_reason if method else None,
        "confidence_signals": method.model_dump(include=CONFIDENCE_SIGNALS) if method else None,
        "citations": _verdicts(result),
    }
