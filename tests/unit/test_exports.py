"""PDF and DOCX exports: the whole document, non-Latin text, clickable citations and numbered sources."""

from __future__ import annotations

import io
import logging
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest
from pypdf import PdfReader

from sleuth.exports.content import xml_text
from sleuth.exports.docx import report_docx
from sleuth.exports.fonts import FontsMissing, find_fonts
from sleuth.exports.markdown import report_document
from sleuth.exports.pdf import ImageRefused, _new_pdf, _write, report_pdf
from sleuth.exports.structure import markdown_parser, report_html
from sleuth.stream.packets import KeyFinding, NumberedSource
from sleuth.stream.results import ResearchResult
from support.canary import PNG

BODY = """Дескрипторы данных имеют приоритет над словарём экземпляра [1]. Ο μηχανισμός είναι ίδιος [2].

## Порядок поиска

- Сначала `type(obj).__mro__` [1]
- Затем **словарь** экземпляра [2]

1. шаг один
2. шаг два

| Метод | Когда |
|---|---|
| `__getattr__` | при неудаче [2] |

```python
class D:
    def __get__(self, obj, kind=None):
        return 42  # [1] here is code, not a citation
```

## How this report was made

- Sources: 5 found, 3 read, 2 cited."""


def _report() -> ResearchResult:
    return ResearchResult(
        status="completed",
        stop_reason="completed",
        report_id="rep_test",
        question="Как дескрипторы и __getattr__ взаимодействуют?",
        title="Дескрипторы и __getattr__",
        summary="Дескрипторы данных побеждают. __getattr__ вызывается последним.",
        key_findings=[KeyFinding(text="Приоритет у дескрипторов данных.", citations=[1, 2])],
        markdown=BODY,
        sources=[
            NumberedSource(
                number=1,
                id="d1",
                url="https://docs.python.org/3/howto/descriptor.html",
                title="Descriptor Guide",
                snippet="",
                source="web",
            ),
            NumberedSource(
                number=2,
                id="d2",
                url="https://docs.python.org/3/reference/datamodel.html",
                title="Модель данных",
                snippet="",
                source="web",
            ),
        ],
    )


def test_markdown_document_order() -> None:
    text = report_document(_report())
    assert text.startswith("# Как дескрипторы и __getattr__ взаимодействуют?\n\n**Дескрипторы и \\_\\_getattr\\_\\_**")
    order = [
        "Дескрипторы данных побеждают.",
        "## Key findings",
        "- Приоритет у дескрипторов данных. [1][2]",
        "## Порядок поиска",
        "## How this report was made",
        "## Sources",
        "2. [Модель данных](",
    ]
    positions = [text.index(part) for part in order]
    assert positions == sorted(positions)


def test_pdf_holds_the_whole_non_latin_document_with_links() -> None:
    pdf = PdfReader(io.BytesIO(report_pdf(_report())))
    text = re.sub(r"\s+", " ", " ".join(page.extract_text() for page in pdf.pages))
    for expected in (
        "Как дескрипторы и __getattr__ взаимодействуют?",  # the question as typed: underscores kept
        "Дескрипторы и __getattr__",
        "Дескрипторы данных побеждают.",
        "Key findings",
        "Приоритет у дескрипторов данных. [1][2]",
        "Ο μηχανισμός είναι ίδιος [2]",
        "Порядок поиска",
        "словарь",
        "шаг два",
        "при неудаче",
        "def __get__(self, obj, kind=None):",
        "How this report was made",
        "Sources",
        "Descriptor Guide",
        "Модель данных",
    ):
        assert expected in text, expected
    links = [a.get_object() for page in pdf.pages for a in page.get("/Annots") or []]
    uris = {link["/A"]["/URI"] for link in links if "/A" in link and "/URI" in link["/A"]}
    assert {
        "https://docs.python.org/3/howto/descriptor.html",
        "https://docs.python.org/3/reference/datamodel.html",
    } <= uris
    internal = [link for link in links if "/Dest" in link or ("/A" in link and link["/A"].get("/S") == "/GoTo")]
    assert len(internal) >= 6  # every citation outside code jumps to the sources list
    fonts = {str(f) for page in pdf.pages for f in page["/Resources"]["/Font"].values()}
    assert fonts  # a font is embedded: non-Latin text is drawn, not dropped


def test_docx_holds_the_whole_document_with_citation_links_to_numbered_sources() -> None:
    archive = zipfile.ZipFile(io.BytesIO(report_docx(_report())))
    xml = archive.read("word/document.xml").decode("utf-8")
    rels = archive.read("word/_rels/document.xml.rels").decode("utf-8")
    text = "".join(re.findall(r"<w:t[^>]*>([^<]*)</w:t>", xml))
    for expected in (
        "Как дескрипторы и __getattr__ взаимодействуют?",
        "Дескрипторы и __getattr__",
        "Key findings",
        "Приоритет у дескрипторов данных.",
        "Ο μηχανισμός είναι ίδιος",
        "шаг два",
        "при неудаче",
        "return 42  # [1] here is code, not a citation",
        "How this report was made",
        "1. Descriptor Guide",
        "2. Модель данных",
    ):
        assert expected in text, expected
    anchors = re.findall(r'<w:hyperlink w:anchor="([^"]+)"', xml)
    bookmarks = set(re.findall(r'<w:bookmarkStart w:id="\d+" w:name="([^"]+)"', xml))
    assert bookmarks == {"source_1", "source_2"}
    assert set(anchors) == bookmarks and len(anchors) >= 6
    assert "https://docs.python.org/3/howto/descriptor.html" in rels and 'TargetMode="External"' in rels
    assert "<w:tbl>" in xml


def test_missing_fonts_are_a_clear_error(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(FontsMissing, match="fonts-dejavu-core"):
        find_fonts((tmp_path,))


def test_code_inside_bold_and_headings_renders() -> None:
    report = _report().model_copy(update={"markdown": "## The `__get__` hook\n\n**bold `code` here** and *it `x`*"})
    text = " ".join(p.extract_text() for p in PdfReader(io.BytesIO(report_pdf(report))).pages)
    assert "__get__" in text and "bold code here" in re.sub(r"\s+", " ", text)


needs_poppler = pytest.mark.skipif(shutil.which("pdftotext") is None, reason="scripts/test installs poppler-utils")

CJK_BODY = """数据描述符优先于实例字典 [1]。これは日本語の文です [2]。한국어 문장도 있습니다.

## 查找顺序

- 首先是 `type(obj).__mro__` [1]
- **然后是实例字典** [2]
- *斜体の日本語テキスト*

| 方法 | 何时 |
|---|---|
| `__getattr__` | 查找失败时 [2] |"""


@needs_poppler
def test_a_cjk_report_is_drawn_in_a_cjk_font_and_every_line_has_one(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    fonts = find_fonts()
    assert fonts.cjk is not None, "scripts/test installs fonts-wqy-microhei"
    report = _report().model_copy(
        update={
            "question": "描述符和 __getattr__ 如何交互？",
            "title": "描述符与查找顺序",
            "summary": "数据描述符优先。実例辞書は後です。",
            "key_findings": [KeyFinding(text="数据描述符优先于实例字典。", citations=[1, 2])],
            "markdown": CJK_BODY,
        }
    )
    path = tmp_path / "cjk.pdf"
    with caplog.at_level(logging.WARNING, logger="fpdf"):
        path.write_bytes(report_pdf(report, fonts))
    assert not [r.message for r in caplog.records if "missing the following glyphs" in r.message]
    text = subprocess.run(["pdftotext", str(path), "-"], capture_output=True, text=True, check=True).stdout
    expected_texts = ["描述符和 __getattr__ 如何交互？", "描述符与查找顺序", "これは日本語の文です", "한국어 문장도"]
    expected_texts += ["查找顺序", "首先是", "斜体の日本語テキスト", "查找失败时", "Sources"]
    for expected in expected_texts:
        assert expected in text, expected
    fonts_used = subprocess.run(["pdffonts", str(path)], capture_output=True, text=True, check=True).stdout
    assert "MicroHei" in fonts_used and "DejaVuSans" in fonts_used
    # Drawing the page needs a font for every text operation (fpdf2 once lost it after a CJK line).
    drawn = subprocess.run(
        ["pdftoppm", "-png", "-r", "30", str(path), str(tmp_path / "page")], capture_output=True, text=True
    )
    assert drawn.returncode == 0 and "No font" not in drawn.stderr, drawn.stderr
    assert list(tmp_path.glob("page*.png"))


IMAGES = "Logo ![the logo](/srv/logo.png) and ![x](/etc/passwd).\n\n| a | b |\n|---|---|\n| ![cell](/c.png) | d |"


def test_the_pdf_and_docx_parser_renders_an_image_as_its_text() -> None:
    main, _ = report_html(_report().model_copy(update={"markdown": IMAGES}), "1")
    assert "<img" not in main
    assert "the logo (/srv/logo.png)" in main and "x (/etc/passwd)" in main and "cell (/c.png)" in main
    xml = zipfile.ZipFile(io.BytesIO(report_docx(_report().model_copy(update={"markdown": IMAGES})))).read(
        "word/document.xml"
    )
    assert "the logo (/srv/logo.png)" in "".join(re.findall(r"<w:t[^>]*>([^<]*)</w:t>", xml.decode()))


UNDERSCORES = """A paragraph with `__init__`, `__getattr__` and `obj.__dict__` in its text, long enough to wrap: \
`type(obj).__mro__`, `__slots__`, `__set_name__` and `__class_getitem__` all sit on the baseline's edge, \
and the words on the line below them have tall letters: Hd, lk, fb, Th.

```python
class Descriptor_Base:
    def __get__(self, obj, owner_type=None):
        return obj.__dict__[self.private_name]
    def __set_name__(self, owner, attr_name):
        self.private_name = "_" + attr_name
```
"""


def _ink_bands(pgm: bytes, gap: int = 3) -> int:
    """Bands of pixel rows with ink (a dark pixel) in a binary PGM, apart by at least `gap` blank rows:
    one a line of text when no line touches the next (a glyph's own parts are closer than that)."""
    fields = pgm.split(maxsplit=4)
    assert fields[0] == b"P5" and fields[3] == b"255"
    width, height, pixels = int(fields[1]), int(fields[2]), fields[4]
    bands, blank = 0, gap
    for row in range(height):
        if min(pixels[row * width : (row + 1) * width]) < 160:
            bands += blank >= gap
            blank = 0
        else:
            blank += 1
    return bands


@needs_poppler
def test_pdf_lines_of_code_and_text_never_touch(tmp_path: Path) -> None:
    pdf = _new_pdf(find_fonts(), "t")
    _write(pdf, markdown_parser().render(UNDERSCORES))
    path = tmp_path / "lines.pdf"
    path.write_bytes(bytes(pdf.output()))
    text = subprocess.run(["pdftotext", "-layout", str(path), "-"], capture_output=True, text=True, check=True).stdout
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) >= 8 and any("__set_name__(self" in line for line in lines)  # 5 of code, 3+ of prose
    # Drawn at print resolution: each line of text is a band of ink with blank rows above and below.
    subprocess.run(["pdftoppm", "-gray", "-r", "200", "-f", "1", "-l", "1", str(path), str(tmp_path / "p")], check=True)
    (page,) = tmp_path.glob("p*.pgm")
    assert _ink_bands(page.read_bytes()) == len(lines)


def test_the_pdf_writer_loads_no_image_even_when_its_html_holds_one(tmp_path: Path) -> None:
    png = tmp_path / "logo.png"
    png.write_bytes(PNG)
    pdf = _new_pdf(find_fonts(), "t")
    _write(pdf, f'<p>Before <img src="{png}" alt="the logo"> after <img src="/etc/passwd"></p>')
    out = bytes(pdf.output())
    assert b"/Subtype /Image" not in out
    text = " ".join(" ".join(page.extract_text() for page in PdfReader(io.BytesIO(out)).pages).split())
    assert f"the logo ({png})" in text and "/etc/passwd" in text
    with pytest.raises(ImageRefused):
        pdf.image(str(png))


def test_xml_text_keeps_only_what_xml_1_0_holds() -> None:
    assert xml_text("a\x00b\x07c\x1bd\x7fe\tf\ng\rh") == "abcd\x7fe\tf\ng\rh"
    assert xml_text("page\x0cbreak\x0bhere") == "page break here"
    assert xml_text("x\ufffe\uffffy\ud800z\U0001f600") == "xyz\U0001f600"
