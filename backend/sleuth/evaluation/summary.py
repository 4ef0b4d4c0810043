"""Means over metrics.jsonl, and the table `sleuth eval` prints at the end."""

from __future__ import annotations

from typing import Any

from sleuth.evaluation.hygiene import hygiene_totals

# The measures averaged into summary.json and shown in the table, in display order.
MEASURES = (
    "gold_cited",
    "gold_read",
    "key_fact_recall",
    "sources_cited",
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


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


def summarise(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Means of every measure over the questions that have it (null-valued measures are left out)."""
    means: dict[str, Any] = {}
    for name in MEASURES:
        means[name] = _mean([float(r[name]) for r in records if isinstance(r.get(name), int | float)])
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
        "means": means,
    }


def _cell(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.3f}" if abs(value) < 10 else f"{value:.1f}"
    return str(value)


def summary_table(summary: dict[str, Any]) -> str:
    """A two-column plain-text table of the means."""
    rows = [("questions", str(summary["questions"]))]
    rows.append(("stop reasons", ", ".join(f"{k} {v}" for k, v in sorted(summary["stop_reasons"].items()))))
    rows.extend((f"mean {name}", _cell(summary["means"].get(name))) for name in MEASURES)
    rows.append(("unsupported claim rate", _cell(summary["unsupported_claim_rate"])))
    hygiene = summary.get("hygiene") or {}
    rows.extend((f"total {name.replace('_', ' ')}", str(count)) for name, count in hygiene.items())
    for name, value in (summary["means"].get("race") or {}).items():
        rows.append((f"judge {name}", _cell(value)))
    width = max(len(name) for name, _ in rows)
    return "\n".join(f"{name.ljust(width)}  {value}" for name, value in rows)
