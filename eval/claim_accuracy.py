"""Precision and recall of the claim-support check against hand labels, by error kind and split.

    .venv/bin/python eval/claim_accuracy.py [LABELS] [--split tune|heldout] [--show-errors] [--table]
        [--judge MODEL] [--data-dir DIR]

Each label line is one citation: the sentence, the documents the sentence cites (number -> corpus URL),
the marker being judged, a hand label (`supported` or `unsupported`), the kind of the citation (an
error kind for edits) and its split (`tune`: what the check was tuned on; `heldout`: never looked at
while tuning). The script re-reads every document from the local corpus, runs the check exactly as the
engine does, and compares. "Positive" means flagged as unsupported: precision is the share of flags
that were right, recall the share of unsupported citations that were flagged, and the false-alarm rate
the share of supported citations that were flagged.

Documents of the built-in reference need nothing; those of another collection (`corpus://pydoc311/…`)
are read from the data folder `scripts/eval` indexes them into (`--data-dir`, default
`$SLEUTH_EVAL_DATA_DIR` or `~/.sleuth-eval`).

With `--judge MODEL` (any litellm model, with its key in the environment as for `sleuth`), the judge
model gives the verdicts on every citation the deterministic check reads, as it does in a run with
`SLEUTH_JUDGE_MODEL`, and the same figures are reported for it.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from sleuth.config import Settings
from sleuth.llm.gateway import LLMError, LLMGateway, ModelAccessError
from sleuth.llm.types import LLMResult
from sleuth.research.report.claim_check import BATCH, judge_batch, judgeable
from sleuth.research.report.claims import check_claims
from sleuth.stream.results import ClaimVerdict
from sleuth.tools.base import ToolError
from sleuth.tools.local.providers import build_local_tools

# Kinds of planted errors: the check's recall on edits is over these.
EDIT_KINDS = ("negation", "number", "comparison", "entity", "edited")
SPLITS = ("tune", "heldout")


class LabelError(Exception):
    """The labels or their documents cannot be read; the message says what to do."""


def read_labels(path: Path) -> list[dict[str, Any]]:
    labels = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            label = json.loads(line)
        except json.JSONDecodeError as exc:
            raise LabelError(f"{path}:{number}: not valid JSON ({exc.msg})") from exc
        missing = [key for key in ("id", "kind", "sentence", "cites", "marker", "label") if key not in label]
        if missing or label["label"] not in ("supported", "unsupported"):
            raise LabelError(
                f"{path}:{number}: needs id, kind, sentence, cites, marker and a label supported|unsupported"
            )
        labels.append(label)
    return labels


async def read_texts(urls: set[str], data_dir: Path) -> dict[str, str]:
    _, reader = build_local_tools(Settings(data_dir=data_dir))
    texts: dict[str, str] = {}
    for url in sorted(urls):
        try:
            texts[url] = (await reader.read(url)).text
        except ToolError as exc:
            raise LabelError(
                f"cannot read {url} from {data_dir} ({exc}); index its collection first "
                "(scripts/eval indexes pydoc311) or pass --data-dir"
            ) from exc
    return texts


def check(label: dict[str, Any], texts: dict[str, str]) -> ClaimVerdict | None:
    """The deterministic verdict on the label's marker, as the engine reaches it (None: not checked)."""
    cites = {int(n): url for n, url in label["cites"].items()}
    markdown = label["sentence"] + " " + "".join(f"[{n}]" for n in cites)
    verdicts = check_claims(markdown, {n: texts[url] for n, url in cites.items()})
    return next((v for v in verdicts if v.marker == label["marker"]), None)


async def judge(model: str, verdicts: list[ClaimVerdict | None]) -> list[ClaimVerdict | None]:
    """The judge model's verdicts where it gives one; the deterministic verdict where it cannot."""
    gateway = LLMGateway(Settings(judge_model=model))

    async def call(messages: list[dict[str, Any]], tools: list[dict[str, Any]], tool_choice: str) -> LLMResult:
        return await gateway.complete("judge", messages, tools=tools, tool_choice=tool_choice)

    indexes = [i for i, v in enumerate(verdicts) if v is not None and judgeable(v)]
    out = list(verdicts)
    today = dt.date.today().isoformat()
    for start in range(0, len(indexes), BATCH):
        chunk = indexes[start : start + BATCH]
        batch = [v for i in chunk if (v := verdicts[i]) is not None]
        try:
            judged = await judge_batch(call, today, batch)
        except (LLMError, ModelAccessError) as exc:
            raise LabelError(f"the judge model failed: {exc}") from exc
        for i, verdict in zip(chunk, judged, strict=True):
            out[i] = verdict
    return out


def rates(rows: list[tuple[bool, bool]]) -> dict[str, Any]:
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


def score(labels: list[dict[str, Any]], flags: list[bool]) -> dict[str, Any]:
    """Rates over all labels, over the planted edits, and by kind."""
    rows = [(flag, label["label"] == "unsupported") for label, flag in zip(labels, flags, strict=True)]
    kinds = sorted({label["kind"] for label in labels})
    paired = list(zip(rows, labels, strict=True))
    out = {"all": rates(rows), "edits": rates([r for r, label in paired if label["kind"] in EDIT_KINDS])}
    for kind in kinds:
        out[kind] = rates([r for r, label in paired if label["kind"] == kind])
    return out


def _cell(value: float | None, percent: bool = False) -> str:
    if value is None:
        return "—"
    return f"{value * 100:.1f}%" if percent else f"{value:.3f}"


def table(report: dict[str, dict[str, Any]]) -> str:
    """The figures as the markdown table docs/evaluation.md shows."""
    lines = [
        "| split | set | citations | labelled unsupported | flagged | precision | recall | false alarms |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for split, by_kind in report.items():
        for kind, r in by_kind.items():
            lines.append(
                f"| {split} | {kind} | {r['citations']} | {r['labelled_unsupported']} | {r['flagged']} | "
                f"{_cell(r['precision'])} | {_cell(r['recall'])} | {_cell(r['false_alarm_rate'], True)} |"
            )
    return "\n".join(lines)


def default_data_dir() -> Path | None:
    configured = os.environ.get("SLEUTH_EVAL_DATA_DIR")
    path = Path(configured) if configured else Path.home() / ".sleuth-eval"
    return path if path.is_dir() else None


def run(args: argparse.Namespace) -> int:
    labels = read_labels(Path(args.labels))
    if args.split:
        labels = [label for label in labels if label.get("split", "tune") == args.split]
    urls = {url for label in labels for url in label["cites"].values()}
    data_dir = Path(args.data_dir) if args.data_dir else default_data_dir()
    if data_dir is None:
        with tempfile.TemporaryDirectory() as scratch:
            texts = asyncio.run(read_texts(urls, Path(scratch)))
    else:
        texts = asyncio.run(read_texts(urls, data_dir))
    verdicts = [check(label, texts) for label in labels]
    if args.judge:
        verdicts = asyncio.run(judge(args.judge, verdicts))
    flags = [verdict is not None and not verdict.supported for verdict in verdicts]
    for label, verdict, flagged in zip(labels, verdicts, flags, strict=True):
        if args.show_errors and flagged != (label["label"] == "unsupported"):
            reason = verdict.reason if verdict is not None else "not checked"
            print(
                f"{'false alarm' if flagged else 'missed'}: {label['id']} {label['marker']} {label['sentence'][:80]!r}"
            )
            print(f"    check: {reason or 'supported'}; label note: {label.get('note', '')}")
    splits = (
        [args.split] if args.split else [s for s in SPLITS if any(label.get("split", "tune") == s for label in labels)]
    )
    report = {
        split: score(
            [label for label in labels if label.get("split", "tune") == split],
            [flag for label, flag in zip(labels, flags, strict=True) if label.get("split", "tune") == split],
        )
        for split in splits
    }
    if not args.split:
        report["both"] = score(labels, flags)
    print(table(report) if args.table else json.dumps(report, indent=2))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("labels", nargs="?", default=str(Path(__file__).with_name("claim_labels.jsonl")))
    parser.add_argument("--split", choices=SPLITS, help="score only this split (default: each, and both together)")
    parser.add_argument("--show-errors", action="store_true", help="print every citation the check got wrong")
    parser.add_argument("--table", action="store_true", help="print a markdown table instead of JSON")
    parser.add_argument("--judge", metavar="MODEL", help="let this litellm model give the verdicts")
    parser.add_argument("--data-dir", help="where scripts/eval indexed the other collections")
    args = parser.parse_args()
    try:
        return run(args)
    except (LabelError, OSError) as exc:
        print(f"claim_accuracy: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
