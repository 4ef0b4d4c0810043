"""The exports of a stored report over HTTP (.md, .pdf, .docx) and its audio script: no image is
ever read or fetched, and text XML cannot hold never fails an export."""

from __future__ import annotations

import io
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import httpx
import pytest
from markdown_it import MarkdownIt

from conftest import LiveServer
from sleuth.audio.script import script_for
from sleuth.stream.packets import KeyFinding, NumberedSource
from sleuth.stream.results import ResearchResult
from support.canary import PNG, canary
from support.reports import store_report

needs_poppler = pytest.mark.skipif(shutil.which("pdfimages") is None, reason="scripts/test installs poppler-utils")
NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _store(server: LiveServer, report: ResearchResult) -> None:
    store_report(server.app_state.store, report)


def _source(number: int, title: str) -> NumberedSource:
    return NumberedSource(
        number=number, id=f"d{number}", url=f"https://docs.example.org/{number}", title=title, snippet="", source="web"
    )


async def _exports(server: LiveServer, report_id: str) -> dict[str, httpx.Response]:
    async with httpx.AsyncClient(base_url=server.base_url, timeout=60) as client:
        return {ext: await client.get(f"/api/reports/{report_id}.{ext}") for ext in ("md", "pdf", "docx")}


def _pdf_text(pdf: bytes, tmp_path: Path) -> str:
    path = tmp_path / "report.pdf"
    path.write_bytes(pdf)
    text = subprocess.run(["pdftotext", str(path), "-"], capture_output=True, text=True, check=True).stdout
    return text.replace("\f", "\n")  # pdftotext's page separator


@needs_poppler
async def test_no_export_reads_or_fetches_an_image_of_the_report(server: LiveServer, tmp_path: Path) -> None:
    logo = tmp_path / "logo.png"
    logo.write_bytes(PNG)
    with canary() as bird:
        loopback = f"{bird.url}/x.png"
        markdown = (
            f"The vendor says so ![canary]({loopback}) in its brochure ![logo]({logo}) [1].\n\n"
            "- quoted: ![secret](/etc/passwd)\n"
            "- public: ![remote](https://example.com/x.png)\n\n"
            f"| a | b |\n|---|---|\n| ![cell]({loopback}) | text |\n"
        )
        _store(
            server,
            ResearchResult(
                status="completed",
                stop_reason="completed",
                report_id="rep_images",
                question=f"What does ![question]({loopback}) show?",
                title="Images",
                summary=f"A summary ![summary]({loopback}).",
                key_findings=[KeyFinding(text=f"A finding ![finding]({logo})", citations=[1])],
                markdown=markdown,
                sources=[_source(1, "Brochure")],
            ),
        )
        exports = await _exports(server, "rep_images")
        async with httpx.AsyncClient(base_url=server.base_url, timeout=60) as client:
            stored = ResearchResult.model_validate((await client.get("/api/reports/rep_images")).json())
        script = await script_for(server.settings, stored, "narration")

    assert {ext: r.status_code for ext, r in exports.items()} == {"md": 200, "pdf": 200, "docx": 200}
    assert bird.connections == []

    pdf = exports["pdf"].content
    assert b"/Subtype /Image" not in pdf
    (tmp_path / "r.pdf").write_bytes(pdf)
    listed = subprocess.run(["pdfimages", "-list", str(tmp_path / "r.pdf")], capture_output=True, text=True).stdout
    assert len(listed.strip().splitlines()) == 2, listed  # the header lines only: no image
    pdf_text = " ".join(_pdf_text(pdf, tmp_path).split())
    assert f"logo ({logo})" in pdf_text and "secret (/etc/passwd)" in pdf_text and "remote (https://" in pdf_text

    archive = zipfile.ZipFile(io.BytesIO(exports["docx"].content))
    assert not [name for name in archive.namelist() if name.startswith("word/media/")]
    assert not any(PNG[:8] in archive.read(name) for name in archive.namelist())
    xml = archive.read("word/document.xml").decode()
    docx_text = "".join(re.findall(r"<w:t[^>]*>([^<]*)</w:t>", xml))
    assert "canary (" in docx_text and "secret (/etc/passwd)" in docx_text and "<w:drawing" not in xml

    md = exports["md"].text
    parsed = MarkdownIt("commonmark").enable("table").parse(md)
    assert not [token for block in parsed for token in block.children or [] if token.type == "image"]
    assert "brochure logo (/" in md and "What does question (http://127.0.0.1:" in md

    spoken = " ".join(line.text for line in script)
    assert "canary" in spoken and "logo" in spoken and "![" not in spoken and "/etc/passwd" not in spoken


@needs_poppler
async def test_exports_hold_text_with_control_characters(server: LiveServer, tmp_path: Path) -> None:
    steps = ["Find the \x1b[1mdocs\x1b[0m", "Read them all\x00", "Ring the bell\x07"]
    _store(
        server,
        ResearchResult(
            status="completed",
            stop_reason="completed",
            report_id="rep_controls",
            question="Why does \x1b[31mred\x1b[0m text ring a bell\x07?",
            title="Terminal colours\x1b",
            summary="Escapes\x0bcolour the text\x00.",
            key_findings=[KeyFinding(text="ESC starts it\x1b.", citations=[1])],
            plan=steps,
            markdown="## Plan\n\n" + "\n".join(f"{i}. {s}" for i, s in enumerate(steps, 1)) + "\n\nBody \x08text [1].",
            sources=[_source(1, "ANSI\x1b codes\x07")],
        ),
    )
    exports = await _exports(server, "rep_controls")

    assert {ext: r.status_code for ext, r in exports.items()} == {"md": 200, "pdf": 200, "docx": 200}
    archive = zipfile.ZipFile(io.BytesIO(exports["docx"].content))
    docx_xml = archive.read("word/document.xml").decode() + archive.read("docProps/core.xml").decode()
    texts = {"md": exports["md"].text, "pdf": _pdf_text(exports["pdf"].content, tmp_path), "docx": docx_xml}
    for ext, text in texts.items():
        assert not NOT_XML.search(text), (ext, NOT_XML.findall(text))
        flat = " ".join(text.split())
        for expected in ("red", "text ring a bell", "Terminal colours", "Escapes colour the text", "docs"):
            assert expected in flat, (ext, expected)
        for expected in ("Read them all", "Ring the bell", "ESC starts it", "ANSI codes", "Body text"):
            assert expected in flat, (ext, expected)
