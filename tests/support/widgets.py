"""A two-page folder corpus whose one fact a test changes between scheduled runs (X = 5, then 7)."""

from __future__ import annotations

from pathlib import Path

QUESTION = "What is the widget limit X and how are widgets built?"
LIMIT = "The widget limit X = {} for every account on the standard plan."


def write_corpus(folder: Path, limit: int) -> None:
    folder.mkdir(exist_ok=True)
    (folder / "widget.md").write_text(
        f"# Widget limits\n\n{LIMIT.format(limit)}\n\nWidgets are painted blue and built from steel in the northern"
        " factory.\n",
        encoding="utf-8",
    )
    (folder / "shipping.md").write_text(
        "# Widget shipping\n\nWidget orders ship from the northern factory within three working days.\n\n"
        "Every widget shipment includes a printed warranty card.\n",
        encoding="utf-8",
    )
