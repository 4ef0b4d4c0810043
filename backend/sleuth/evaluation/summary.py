"""Means over metrics.jsonl, per split and per confidence level, and the table `sleuth eval` prints."""

from __future__ import annotations

from typing import Any

from sleuth.evaluation.hygiene import hygiene_totals

# The measures averaged into summary.json and shown in the table, in display order.
MEASURES = (
    "gold_cited",
    "gold_read",
    "key_fact_recall",
    "sources_cited",
    "off_collection_share",
    "sources_read",
    "citations_removed",
    "claims_checked",
    "claims_unsupported",
    "words",
    "repeated_sentences",
    "dangling_colons",
    "cut_title",
    "wall_s",
    "input_tokens",
    "output_tokens",
    "cost_usd",
)
RACE = ("comprehensiveness", "depth", "instruction_following", "readability", "overall")
# Held out first: those are the figures that say how Sleuth does on questions nobody tuned it on.
SPLITS = ("heldout", "tune")
SPLIT_MEASURES = ("gold_cited", "gold_read", "key_fact_recall")
LEVELS = ("high", "medium", "low")


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


def _mean_of(records: list[dict[str, Any]], name: str) -> float | None:
    return _mean([float(r[name]) for r in records if isinstance(r.get(name), int | float)])


def split_summary(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per split marked in the question file: how many questions, and the means the targets are set on."""
    out: dict[str, dict[str, Any]] = {}
    for split in SPLITS:
        chosen = [r for r in records if r.get("split") == split]
        if chosen:
            out[split] = {"questions": len(chosen), **{name: _mean_of(chosen, name) for name in SPLIT_MEASURES}}
    return out


def calibration(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per confidence level the reports were given: how many, their mean key-fact recall, and how many
    cited none of their gold pages. A calibrated label has high recall at "high", low at "low", and
    no report without its gold page at "high"."""
    out: dict[str, dict[str, Any]] = {}
    for level in LEVELS:
        chosen = [r for r in records if r.get("confidence") == level]
        out[level] = {
            "reports": len(chosen),
            "key_fact_recall": _mean_of(chosen, "key_fact_recall"),
            "gold_not_cited": sum(1 for r in chosen if r.get("gold_cited") == 0),
        }
    return out


def pollution(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Over the questions whose gold pages some local collection holds: how many citations there
    were, how many came from a source that holds no gold page (another collection, or the web),
    and their share of all those citations."""
    judged = [r for r in records if isinstance(r.get("off_collection_citations"), int)]
    cited = sum(int(r.get("sources_cited") or 0) for r in judged)
    off = sum(int(r["off_collection_citations"]) for r in judged)
    return {
        "questions": len(judged),
        "citations": cited,
        "off_collection": off,
        "share": round(off / cited, 4) if cited else None,
    }


def summarise(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Means of every measure over the questions that have it (null-valued measures are left out)."""
    means: dict[str, Any] = {name: _mean_of(records, name) for name in MEASURES}
    race = [r["race"] for r in records if isinstance(r.get("race"), dict)]
    if race:
        means["race"] = {k: _mean([float(s[k]) for s in race if isinstance(s.get(k), int | float)]) for k in RACE}
    stops: dict[str, int] = {}
    for record in records:
        stops[str(record.get("stop_reason"))] = stops.get(str(record.get("stop_reason")), 0) + 1
    checked = sum(int(r.get("claims_checked") or 0) for r in records)
    unsupported = sum(int(r.get("claims_unsupported") or 0) for r in records)
    return {
        "questions": len(records),
        "stop_reasons": stops,
        "unsupported_claim_rate": round(unsupported / checked, 4) if checked else None,
        "hygiene": hygiene_totals(records),
        "pollution": pollution(records),
        "means": means,
        "splits": split_summary(records),
        "calibration": calibration(records),
    }


def _cell(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.3f}" if abs(value) < 10 else f"{value:.1f}"
    return str(value)


def summary_table(summary: dict[str, Any]) -> str:
    """A two-column plain-text table of the means, then the per-split means and the calibration."""
    rows = [("questions", str(summary["questions"]))]
    rows.append(("stop reasons", ", ".join(f"{k} {v}" for k, v in sorted(summary["stop_reasons"].items()))))
    rows.extend((f"mean {name}", _cell(summary["means"].get(name))) for name in MEASURES)
    rows.append(("unsupported claim rate", _cell(summary["unsupported_claim_rate"])))
    polluted = summary.get("pollution") or {}
    if polluted.get("citations"):
        rows.append(
            (
                "pollution",
                f"{polluted['off_collection']} of {polluted['citations']} citations"
                f" ({_cell(polluted['share'])}) from a collection holding no gold page",
            )
        )
    hygiene = summary.get("hygiene") or {}
    rows.extend((f"total {name.replace('_', ' ')}", str(count)) for name, count in hygiene.items())
    for name, value in (summary["means"].get("race") or {}).items():
        rows.append((f"judge {name}", _cell(value)))
    for split, figures in summary.get("splits", {}).items():
        rows.append((f"{split} questions", str(figures["questions"])))
        rows.extend((f"{split} {name}", _cell(figures[name])) for name in SPLIT_MEASURES)
    for level, figures in summary.get("calibration", {}).items():
        if figures["reports"]:
            rows.append(
                (
                    f"confidence {level}",
                    f"{figures['reports']} reports, key_fact_recall {_cell(figures['key_fact_recall'])},"
                    f" gold not cited {figures['gold_not_cited']}",
                )
            )
    width = max(len(name) for name, _ in rows)
    return "\n".join(f"{name.ljust(width)}  {value}" for name, value in rows)
