"""`sleuth research --output`, `sleuth export` and `sleuth ask`, as a user runs them (offline defaults)."""

from __future__ import annotations

import io
import json
import re
import sqlite3
import zipfile
from pathlib import Path

from pypdf import PdfReader
from test_cli_research import sleuth

from sleuth.evaluation.hygiene import repeated_sentences

QUESTION = "How do Python descriptors and __getattr__ interact during attribute lookup?"


def test_research_writes_a_file_then_export_and_ask_use_the_stored_report(tmp_path: Path) -> None:
    env = {"SLEUTH_DATA_DIR": str(tmp_path / "data")}
    done = sleuth(["research", "--no-clarify", "--mode", "light", QUESTION, "--output", "report.pdf"], env, tmp_path)
    assert done.returncode == 0, done.stderr
    report_id = re.search(r"Report (rep_\w+) saved", done.stderr).group(1)  # type: ignore[union-attr]
    text = " ".join(page.extract_text() for page in PdfReader(tmp_path / "report.pdf").pages)
    assert "How this report was made" in text and "Sources" in text

    docx = sleuth(["export", report_id, "--format", "docx", "-o", "r.docx"], env, tmp_path)
    md = sleuth(["export", report_id], env, tmp_path)
    assert docx.returncode == 0 and md.returncode == 0, docx.stderr + md.stderr
    xml = zipfile.ZipFile(io.BytesIO((tmp_path / "r.docx").read_bytes())).read("word/document.xml").decode()
    assert "How this report was made" in xml and "w:hyperlink" in xml
    assert md.stdout.startswith(f"# {QUESTION}\n") and "\n## Sources\n\n1. [" in md.stdout
    # the extractive model's summary and key findings would only repeat the body: the export has them once
    assert repeated_sentences(md.stdout.partition("\n## Sources\n")[0]) == 0

    answered = sleuth(["ask", report_id, "When is __getattr__ called?", "--json"], env, tmp_path)
    assert answered.returncode == 0, answered.stderr
    objs = [json.loads(line)["obj"] for line in answered.stdout.splitlines()]
    kinds = {o["type"] for o in objs}
    assert "research_agent_start" not in kinds and "plan_start" not in kinds  # no new research
    answer = "".join(o["content"] for o in objs if o["type"] == "message_delta")
    assert "__getattr__" in answer and re.search(r"\[\d+\]", answer)
    cited = {o["citation_number"] for o in objs if o["type"] == "citation_info"}
    assert cited and all(f"[{n}]" in answer for n in cited)

    # the CLI run is stored with its packets: it replays like a server run

    with sqlite3.connect(tmp_path / "data" / "sleuth.db") as conn:
        kinds = [row[0] for row in conn.execute("SELECT type FROM packets ORDER BY seq")]
    assert kinds[0] == "run_start" and kinds[-1] == "stop" and "report" in kinds

    unknown = sleuth(["ask", report_id, "What is the capital of France?"], env, tmp_path)
    assert unknown.returncode == 0 and "new message to research it" in unknown.stdout


def test_bad_report_ids_and_paths_are_one_line_errors(tmp_path: Path) -> None:
    env = {"SLEUTH_DATA_DIR": str(tmp_path / "data")}
    missing = sleuth(["export", "rep_missing", "-o", "x.pdf"], env, tmp_path)
    wrong = sleuth(["research", "--no-clarify", QUESTION, "--output", "report.txt"], env, tmp_path)
    assert missing.returncode != 0 and "no report 'rep_missing'" in missing.stderr and "Traceback" not in missing.stderr
    assert wrong.returncode != 0 and "must end in .md, .pdf or .docx" in wrong.stderr
