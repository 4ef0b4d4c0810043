"""Precision and recall of the claim-support check against hand labels.

    .venv/bin/python eval/claim_accuracy.py [eval/claim_labels.jsonl] [--show-errors]

Each label line is one citation: the sentence, the documents the sentence cites (number -> URL of
the built-in Python reference corpus), the marker being judged, and a hand label (`supported` or
`unsupported`). The script re-reads every document from the corpus, runs the check exactly as the
engine does, and compares. "Positive" means flagged as unsupported: precision is the share of flags
that were right, recall the share of unsupported citations that were flagged.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from sleuth.config import Settings
from sleuth.research.report.claims import check_claims
from sleuth.tools.local.providers import build_local_tools


async def _texts(urls: set[str], data_dir: Path) -> dict[str, str]:
    _, reader = build_local_tools(Settings(data_dir=data_dir))
    return {url: (await reader.read(url)).text for url in sorted(urls)}


def _flagged(label: dict[str, Any], texts: dict[str, str]) -> tuple[bool, str]:
    cites = {int(n): url for n, url in label["cites"].items()}
    markdown = label["sentence"] + " " + "".join(f"[{n}]" for n in cites)
    verdicts = {v.marker: v for v in check_claims(markdown, {n: texts[url] for n, url in cites.items()})}
    verdict = verdicts.get(label["marker"])
    if verdict is None:
        return False, "not checked"
    return not verdict.supported, verdict.reason


def _rates(rows: list[tuple[bool, bool]]) -> dict[str, Any]:
    tp = sum(1 for flagged, bad in rows if flagged and bad)
    fp = sum(1 for flagged, bad in rows if flagged and not bad)
    fn = sum(1 for flagged, bad in rows if not flagged and bad)
    supported = sum(1 for _, bad in rows if not bad)
    return {
        "citations": len(rows),
        "labelled_unsupported": tp + fn,
        "flagged": tp + fp,
        "precision": round(tp / (tp + fp), 3) if tp + fp else None,
        "recall": round(tp / (tp + fn), 3) if tp + fn else None,
        "false_alarm_rate": round(fp / supported, 3) if supported else None,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("labels", nargs="?", default=str(Path(__file__).with_name("claim_labels.jsonl")))
    parser.add_argument("--show-errors", action="store_true", help="print every citation the check got wrong")
    args = parser.parse_args()
    labels = [json.loads(line) for line in Path(args.labels).read_text(encoding="utf-8").splitlines() if line.strip()]
    urls = {url for label in labels for url in label["cites"].values()}
    with tempfile.TemporaryDirectory() as data_dir:
        texts = asyncio.run(_texts(urls, Path(data_dir)))
    by_kind: dict[str, list[tuple[bool, bool]]] = {}
    every: list[tuple[bool, bool]] = []
    for label in labels:
        flagged, reason = _flagged(label, texts)
        bad = label["label"] == "unsupported"
        every.append((flagged, bad))
        by_kind.setdefault(label["kind"], []).append((flagged, bad))
        if args.show_errors and flagged != bad:
            print(
                f"{'false alarm' if flagged else 'missed'}: {label['id']} {label['marker']} {label['sentence'][:80]!r}"
            )
            print(f"    check: {reason or 'supported'}; label note: {label.get('note', '')}")
    report = {"all": _rates(every), **{kind: _rates(rows) for kind, rows in sorted(by_kind.items())}}
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
